"""Short ways to write a dealt round for the engine tests: cards as text, money as text."""

from __future__ import annotations

from decimal import Decimal

from game.cards import parse_cards
from game.record import RoundRecord, SeatRecord
from game.rules import DECISION_MULTIPLES
from game.verdict import Verdict

ZERO = Decimal(0)


def cards(text: str) -> tuple[int, ...]:
    return parse_cards(text.split())


def seat(
    number: int,
    hole: str | None,
    *,
    ante: str = "100",
    blind: str | None = None,
    trips: str = "0",
    decision: str = "preflop_4x",
    play: str | None = None,
    progressive: str = "0",
    lit: bool | None = None,
    player: str | None = None,
    paid: dict[str, str] | None = None,
) -> SeatRecord:
    """A seat as a table would post it; Blind, Play and the sensor default to the rules."""
    ante_amount = Decimal(ante)
    wager = Decimal(progressive)
    return SeatRecord(
        seat=number,
        hole=cards(hole) if hole else None,  # type: ignore[arg-type]
        ante=ante_amount,
        blind=ante_amount if blind is None else Decimal(blind),
        trips=Decimal(trips),
        play=ante_amount * DECISION_MULTIPLES[decision] if play is None else Decimal(play),
        decision=decision,
        progressive=wager,
        progressive_lit=bool(wager) if lit is None else lit,
        player=player,
        paid=None if paid is None else {bet: Decimal(v) for bet, v in paid.items()},
    )


def deal(
    board: str | None, dealer: str | None, *seats: SeatRecord, void: bool = False
) -> RoundRecord:
    return RoundRecord(
        seats=tuple(seats),
        board=cards(board) if board else None,
        dealer_cards=cards(dealer) if dealer else None,
        void=void,
    )


def results(verdict: Verdict) -> dict[int, dict[str, Decimal]]:
    return {s.seat: s.settled for s in verdict.seats}


def codes(verdict: Verdict) -> list[str]:
    return sorted(finding.code for finding in verdict.findings)


def events(verdict_or_events) -> list[tuple[str, int | None, Decimal, Decimal]]:
    found = getattr(verdict_or_events, "events", verdict_or_events)
    return [(e.kind, e.seat, e.amount, e.meter) for e in found]


def bets(ante: str, blind: str, play: str, trips: str = "0") -> dict[str, Decimal]:
    return {
        "ante": Decimal(ante), "blind": Decimal(blind),
        "play": Decimal(play), "trips": Decimal(trips),
    }
