"""One round judged: settlement, progressive events, findings and a status."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from . import findings as f
from .findings import Finding
from .progressive import MeterEvent, Meters, settle_progressive
from .record import RoundRecord
from .rules import BETS, PoolRules, TableRules
from .settlement import ZERO, seat_number, settle_game
from .validation import duplicate_cards, rule_breaks

VERIFIED = "verified"
FLAGGED = "flagged"
SETTLED = "settled"
VOID = "void"
STATUSES = (VERIFIED, FLAGGED, SETTLED, VOID)


@dataclass(slots=True)
class SeatVerdict:
    seat: int
    hand: int | None
    settled: dict[str, Decimal]  # every bet of BETS, player's view


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str
    dealer_hand: int | None
    dealer_qualifies: bool | None
    seats: tuple[SeatVerdict, ...]  # by seat number
    findings: tuple[Finding, ...]
    events: tuple[MeterEvent, ...]
    meters_after: Meters | None


def judge_round(
    record: RoundRecord,
    rules: TableRules,
    pool: PoolRules | None = None,
    meters: Meters | None = None,
) -> Verdict:
    """Settle ``record`` under ``rules`` (and ``pool`` at ``meters``) and say what is wrong."""
    duplicates = [] if record.void else duplicate_cards(record)
    game = settle_game(record, rules)
    # A round whose cards cannot all be real collects its wagers but moves no
    # jackpot: a percentage award from impossible cards cannot be taken back.
    progressive = settle_progressive(
        record, pool, meters, awards_allowed=not duplicates,
        hands={number: seat.hand for number, seat in game.seats.items()} if pool else None,
    )

    found: list[Finding] = [*duplicates, *rule_breaks(record, rules), *game.findings]
    found.extend(progressive.findings)
    seats = []
    for seat in sorted(record.seats, key=seat_number):
        game_seat = game.seats[seat.seat]
        settled = game_seat.results  # the game's own dict, completed with the side bet
        settled["progressive"] = progressive.results[seat.seat]
        seats.append(SeatVerdict(seat.seat, game_seat.hand, settled))
        # A dealer who paid every bet right sent exactly the settlement back.
        if seat.paid is not None and not duplicates and seat.paid != settled:
            found.extend(_payout_mismatches(seat.seat, settled, seat.paid))

    return Verdict(
        status=_status(record, found),
        dealer_hand=game.dealer_hand,
        dealer_qualifies=game.dealer_qualifies,
        seats=tuple(seats),
        findings=tuple(found),
        events=tuple(progressive.events),
        meters_after=progressive.meters,
    )


def _payout_mismatches(
    seat: int, settled: dict[str, Decimal], paid: dict[str, Decimal]
) -> list[Finding]:
    found = []
    for bet in BETS:
        claimed = paid.get(bet, ZERO)
        if claimed != settled[bet]:
            found.append(
                Finding(
                    f.PAYOUT_MISMATCH, seat, bet, expected=settled[bet], claimed=claimed,
                    detail=f"the dealer settled {bet} at {claimed}, the rules give {settled[bet]}",
                )
            )
    return found


def _status(record: RoundRecord, found: list[Finding]) -> str:
    if any(not finding.informational for finding in found):
        return FLAGGED
    if record.void:
        return VOID
    if all(seat.paid is None for seat in record.seats):
        return SETTLED
    return VERIFIED
