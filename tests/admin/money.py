"""Money added up seat by seat in Python: what the pages' grouped queries are held to."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from game.rules import BETS
from rounds.models import Seat


def seat_money(day) -> dict[tuple[str, str], list]:
    """Each table's [rounds, hands, handle, house win settled, house win paid] of ``day`` in each
    currency, added up seat by seat in Python."""
    expected = defaultdict(lambda: [set(), 0, Decimal(0), Decimal(0), Decimal(0)])
    seats = Seat.objects.filter(round__gaming_day=day, round__held=False).select_related(
        "round__table", "round__config_version")
    for seat in seats:
        round_ = seat.round
        row = expected[round_.table.code, round_.config_version.currency]
        row[0].add(round_.pk)
        live = not round_.void and round_.status != "void"
        for bet in BETS:
            wagered = getattr(seat, bet) if live and (bet != "progressive" or seat.progressive_lit) else 0
            settled = getattr(seat, f"settled_{bet}")
            paid = getattr(seat, f"paid_{bet}") if seat.paid_reported else settled
            row[2] += wagered
            row[3] -= settled
            row[4] -= paid
        row[1] += live
    return {key: [len(rounds), hands, handle, win, paid]
            for key, (rounds, hands, handle, win, paid) in expected.items()}


def dealer_money(dealer: str, day) -> dict[str, list]:
    """The dealer's [hands, handle, house win settled, house win paid] of ``day`` in each currency,
    added up seat by seat in Python."""
    expected = defaultdict(lambda: [0, Decimal(0), Decimal(0), Decimal(0)])
    seats = Seat.objects.filter(round__dealer=dealer, round__gaming_day=day, round__held=False).select_related(
        "round__config_version")
    for seat in seats:
        row = expected[seat.round.config_version.currency]
        live = not seat.round.void and seat.round.status != "void"
        row[0] += live
        for bet in BETS:
            settled = getattr(seat, f"settled_{bet}")
            row[1] += getattr(seat, bet) if live and (bet != "progressive" or seat.progressive_lit) else 0
            row[2] -= settled
            row[3] -= getattr(seat, f"paid_{bet}") if seat.paid_reported else settled
    return dict(expected)
