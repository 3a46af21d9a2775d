"""Rule and limit breaks: each one a finding, none of them a refusal.

The wire shape (card codes, counts, seat numbers, signs) is checked before a
record reaches the engine; what is checked here is what a table can get wrong
while still sending a well-formed round.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from . import findings as f
from .cards import card_text
from .findings import Finding
from .record import RoundRecord, SeatRecord
from .rules import DECISION_MULTIPLES, TableRules
from .vocabulary import Bet

# The wagers a seat places in chips, each a whole number of units (its Play too).
_WAGERS = (Bet.ANTE.value, Bet.BLIND.value, Bet.TRIPS.value, Bet.PLAY.value)


def duplicate_cards(record: RoundRecord) -> list[Finding]:
    cards = record.all_cards()
    if len(set(cards)) == len(cards):
        return []
    counts = Counter(cards)
    return [
        Finding(
            f.DUPLICATE_CARD,
            detail=f"{card_text(card)} appears {n} times; payouts of this round are not verified",
        )
        for card, n in sorted(counts.items())
        if n > 1
    ]


def rule_breaks(record: RoundRecord, rules: TableRules) -> list[Finding]:
    """Every break of a betting rule or table limit in the round."""
    found: list[Finding] = []
    for seat in record.seats:
        if not _clean(seat, rules):
            found.extend(_seat_breaks(seat, rules))
    if rules.one_hand_per_player:
        found.extend(_players_on_several_seats(record, rules))
    return found


def _clean(seat: SeatRecord, rules: TableRules) -> bool:
    """The common case, decided in a few lookups: a seat that breaks no betting rule."""
    if rules.legal_antes is None or rules.legal_trips is None:
        return False
    return (
        seat.ante in rules.legal_antes
        and seat.blind == seat.ante
        and (not seat.trips or seat.trips in rules.legal_trips)
        and seat.play == seat.ante * DECISION_MULTIPLES[seat.decision]
    )


def _seat_breaks(seat: SeatRecord, rules: TableRules) -> list[Finding]:
    found: list[Finding] = []
    n = seat.seat
    if seat.ante != seat.blind:
        found.append(
            Finding(
                f.ANTE_BLIND_UNEQUAL, n, Bet.BLIND.value, expected=seat.ante, claimed=seat.blind,
                detail=f"Blind {seat.blind} differs from Ante {seat.ante}",
            )
        )
    for bet in _WAGERS:
        amount: Decimal = getattr(seat, bet)
        if amount % rules.unit:
            found.append(
                Finding(
                    f.BET_OFF_UNIT, n, bet, claimed=amount,
                    detail=f"{bet} {amount} is not a whole number of {rules.unit} {rules.currency} units",
                )
            )
    found.extend(_limit_breaks(n, Bet.ANTE.value, seat.ante, rules.ante_min, rules.ante_max, rules))
    if seat.trips:
        found.extend(_limit_breaks(n, Bet.TRIPS.value, seat.trips, rules.trips_min, rules.trips_max, rules))
    expected_play = seat.ante * DECISION_MULTIPLES[seat.decision]
    if seat.play != expected_play:
        found.append(
            Finding(
                f.PLAY_MISMATCH, n, Bet.PLAY.value, expected=expected_play, claimed=seat.play,
                detail=f"{seat.decision} requires a Play of {expected_play}, {seat.play} was placed",
            )
        )
    return found


def _limit_breaks(
    seat: int, bet: str, amount: Decimal, low: Decimal, high: Decimal, rules: TableRules
) -> list[Finding]:
    if amount < low:
        return [
            Finding(
                f.BET_BELOW_MINIMUM, seat, bet, expected=low, claimed=amount,
                detail=f"{bet} {amount} is below the table minimum {low} {rules.currency}",
            )
        ]
    if amount > high:
        return [
            Finding(
                f.BET_ABOVE_MAXIMUM, seat, bet, expected=high, claimed=amount,
                detail=f"{bet} {amount} is above the table maximum {high} {rules.currency}",
            )
        ]
    return []


def _players_on_several_seats(record: RoundRecord, rules: TableRules) -> list[Finding]:
    if not rules.one_hand_per_player:
        return []
    players = [seat.player for seat in record.seats if seat.player]
    if len(set(players)) == len(players):
        return []
    seats_by_player: dict[str, list[int]] = {}
    for seat in record.seats:
        if seat.player:
            seats_by_player.setdefault(seat.player, []).append(seat.seat)
    return [
        Finding(
            f.PLAYER_MULTIPLE_HANDS, seat,
            detail=f"player {player} plays seats {', '.join(map(str, sorted(seats)))}; one hand each",
        )
        for player, seats in seats_by_player.items()
        if len(seats) > 1
        for seat in sorted(seats)[1:]
    ]
