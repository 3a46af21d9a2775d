"""One round judged: settlement, progressive events, findings and a status."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from . import findings as f
from .clock import DEFAULT_TOLERANCE, clock_findings
from .findings import Finding
from .progressive import MeterEvent, Meters, settle_progressive
from .record import RoundRecord
from .rules import BETS, PoolRules, TableRules
from .settlement import ZERO, GameSettlement, seat_number, settle_game
from .validation import duplicate_cards, rule_breaks
from .vocabulary import STATUSES, RoundStatus  # noqa: F401 (STATUSES: importable from here too)

# The statuses by the names this module has always used; STATUSES lists them all.
VERIFIED = RoundStatus.VERIFIED.value
FLAGGED = RoundStatus.FLAGGED.value
SETTLED = RoundStatus.SETTLED.value
VOID = RoundStatus.VOID.value


@dataclass(slots=True)
class SeatVerdict:
    seat: int
    hand: int | None
    settled: dict[str, Decimal]  # every bet of BETS, player's view


@dataclass(slots=True)  # not frozen: built for every round judged (see record.SeatRecord)
class Verdict:
    status: str
    dealer_hand: int | None
    dealer_qualifies: bool | None
    seats: tuple[SeatVerdict, ...]  # by seat number
    findings: tuple[Finding, ...]
    events: tuple[MeterEvent, ...]
    meters_after: Meters | None


@dataclass(slots=True)
class Prepared:
    """A round judged as far as it goes without the pool's meter (``prepare_round``).

    Everything but the Progressive: the cards checked, Ante, Blind, Play and
    Trips settled, the betting rules checked. A service that must lock the
    meter to finish the round does this much before it takes the lock.
    """

    record: RoundRecord
    duplicates: list[Finding]
    game: GameSettlement
    breaks: list[Finding]
    finished: bool = False


def prepare_round(record: RoundRecord, rules: TableRules, clock: Clock | None = None) -> Prepared:
    """The part of ``judge_round`` that does not depend on a progressive pool."""
    duplicates = [] if record.void else duplicate_cards(record)
    breaks = rule_breaks(record, rules)
    if clock is not None:
        breaks += clock_findings(clock.dealt_at, clock.received_at, clock.tolerance)
    return Prepared(record, duplicates, settle_game(record, rules), breaks)


@dataclass(frozen=True, slots=True)
class Clock:
    """When the table says the round was dealt, and when the service received it."""

    dealt_at: datetime
    received_at: datetime
    tolerance: timedelta = DEFAULT_TOLERANCE


def judge_round(
    record: RoundRecord,
    rules: TableRules,
    pool: PoolRules | None = None,
    meters: Meters | None = None,
    clock: Clock | None = None,
) -> Verdict:
    """Settle ``record`` under ``rules`` (and ``pool`` at ``meters``) and say what is wrong;
    with ``clock``, also whether it was dealt after it arrived (``game.clock``)."""
    return judge_prepared(prepare_round(record, rules, clock), pool, meters)


def judge_prepared(prepared: Prepared, pool: PoolRules | None = None, meters: Meters | None = None) -> Verdict:
    """``judge_round`` of a prepared round: its Progressive settled at ``meters``, and its verdict.

    Once per prepared round: the verdict takes over the game's settlement.
    """
    if prepared.finished:
        raise ValueError("this prepared round was judged already; prepare it again")
    prepared.finished = True
    record, duplicates, game = prepared.record, prepared.duplicates, prepared.game
    # A round whose cards cannot all be real collects its wagers but moves no
    # jackpot: a percentage award from impossible cards cannot be taken back.
    progressive = settle_progressive(
        record, pool, meters, awards_allowed=not duplicates,
        hands={number: seat.hand for number, seat in game.seats.items()} if pool else None,
    )

    found: list[Finding] = duplicates + prepared.breaks
    if game.findings:
        found += game.findings
    if progressive.findings:
        found += progressive.findings
    game_seats, side_bets = game.seats, progressive.results
    paid_checked = not duplicates
    reported = False
    seats = []
    for seat in sorted(record.seats, key=seat_number):
        number = seat.seat
        game_seat = game_seats[number]
        settled = game_seat.results  # the game's own dict, completed with the side bet
        settled["progressive"] = side_bets[number]  # vocabulary.Bet.PROGRESSIVE, spelled in the hot loop
        seats.append(SeatVerdict(number, game_seat.hand, settled))
        paid = seat.paid
        if paid is not None:
            reported = True
            # A dealer who paid every bet right sent exactly the settlement back.
            if paid_checked and paid != settled:
                found.extend(_payout_mismatches(number, settled, paid))

    return Verdict(
        _status(record, found, reported),
        game.dealer_hand,
        game.dealer_qualifies,
        tuple(seats),
        tuple(found),
        tuple(progressive.events),
        progressive.meters,
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


def status_after_service_finding(status: str) -> str:
    """A round's status once the service adds a finding of its own (``vocabulary.SERVICE_CODES``:
    a different body under its id, a date outside the books' window): flagged, but for a void
    round, which stays void (void wins over flagged, as in ``_status``)."""
    return VOID if status == VOID else FLAGGED


def _status(record: RoundRecord, found: list[Finding], reported: bool) -> str:
    """``reported``: at least one seat says what the dealer paid.

    A void round is void even when it also breaks a rule (RULES.md "Void
    rounds"): every bet settles at 0, and its findings are still recorded and
    listed.
    """
    if record.void:
        return VOID
    for finding in found:
        if not finding.informational:
            return FLAGGED
    return VERIFIED if reported else SETTLED
