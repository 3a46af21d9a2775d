"""The Progressive side bet: contributions, awards and reseeds of one round.

The meter is the caller's to lock and store; this module only says, given the
meter before the round, which events the round makes and in what order
(RULES.md: every lit wager's contribution first, then the awards, each seat by
seat from the highest seat number down whatever order the body lists them in,
a reseed right after a 100 % award).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from . import findings as f
from .evaluator import CATEGORIES, best_using_hole, category_of, evaluate
from .findings import Finding
from .record import RoundRecord, SeatRecord
from .rules import PayLine, PoolRules
from .settlement import ZERO, floor_to, seat_number
from .vocabulary import Bet, MeterEventKind

# The kinds a round makes, by the names this module has always used.
CONTRIBUTION = MeterEventKind.CONTRIBUTION.value
OVERFLOW = MeterEventKind.OVERFLOW.value
RESERVE = MeterEventKind.RESERVE.value
AWARD = MeterEventKind.AWARD.value
FIXED_AWARD = MeterEventKind.FIXED_AWARD.value
RESEED = MeterEventKind.RESEED.value
_BET = Bet.PROGRESSIVE.value


@dataclass(frozen=True, slots=True)
class Meters:
    meter: Decimal  # what the players see and percentage awards are taken from
    overflow: Decimal = ZERO  # contributions above the ceiling
    reserve: Decimal = ZERO  # the hidden meter that funds the next reseed


@dataclass(slots=True)
class MeterEvent:
    kind: str
    seat: int | None
    amount: Decimal
    meter: Decimal  # the meter after the event
    overflow: Decimal
    reserve: Decimal


@dataclass(slots=True)
class ProgressiveSettlement:
    results: dict[int, Decimal] = field(default_factory=dict)
    events: list[MeterEvent] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    meters: Meters | None = None


def settle_progressive(
    record: RoundRecord,
    pool: PoolRules | None,
    meters: Meters | None,
    *,
    awards_allowed: bool = True,
    hands: Mapping[int, int | None] | None = None,
) -> ProgressiveSettlement:
    """Settle every seat's Progressive wager against ``meters`` (the pool's state before).

    ``hands`` are the seats' seven-card values when the caller already has them.
    """
    out = ProgressiveSettlement(results={s.seat: ZERO for s in record.seats}, meters=meters)
    if record.void:
        return out
    wagered = [seat for seat in record.seats if seat.progressive]
    if not wagered:
        return out
    # Highest seat first, for the findings as for the events: what the round
    # records never depends on the order of the body's seats.
    wagered.sort(key=seat_number, reverse=True)
    lit: list[SeatRecord] = []
    for seat in wagered:
        if not seat.progressive_lit:
            out.findings.append(
                Finding(
                    f.PROGRESSIVE_NOT_LIT, seat.seat, _BET, claimed=seat.progressive,
                    detail="the sensor was not lit at coin-in: the wager is void",
                )
            )
        elif pool is None:
            out.findings.append(
                Finding(
                    f.PROGRESSIVE_WAGER_INVALID, seat.seat, _BET, claimed=seat.progressive,
                    detail="this table feeds no progressive pool: the wager is void",
                )
            )
        else:
            if seat.progressive != pool.wager:
                out.findings.append(
                    Finding(
                        f.PROGRESSIVE_WAGER_INVALID, seat.seat, _BET,
                        expected=pool.wager, claimed=seat.progressive,
                        detail=f"the pool's wager is exactly {pool.wager} {pool.currency}; "
                        "this one is collected but cannot win",
                    )
                )
            lit.append(seat)
    if not lit or pool is None or meters is None:
        return out

    state = _State(pool, meters, out.events)
    for seat in lit:
        state.contribute(seat)
        out.results[seat.seat] = -seat.progressive
    if awards_allowed and record.board is not None:
        board_category = category_of(evaluate(record.board))
        # Only the pool's own wager plays for the pay table: a lit wager of
        # another amount (an operator error) must not take a share of the meter.
        for seat in lit:
            if seat.progressive != pool.wager:
                continue
            hand = hands.get(seat.seat) if hands is not None else None
            line = winning_line(pool.lines, record.board, seat.hole, board_category, hand)
            if line is None:
                continue
            award = state.pay(seat.seat, line)
            out.results[seat.seat] = award - seat.progressive
            out.findings.append(
                Finding(
                    f.PROGRESSIVE_AWARD, seat.seat, _BET, expected=award,
                    detail=f"{CATEGORIES[line.category]} ({line.qualifier}): "
                    + (f"{line.amount} % of the meter" if line.kind == "percent" else "fixed pay"),
                )
            )
    out.meters = state.meters()
    return out


def winning_line(
    lines: tuple[PayLine, ...], board: tuple[int, ...], hole: tuple[int, int] | None,
    board_category: int, hand: int | None = None,
) -> PayLine | None:
    """The best line the seat's seven cards satisfy, under each line's qualifier."""
    if hole is None:
        return None
    seven_category = category_of(hand if hand is not None else evaluate((*board, *hole)))
    for line in lines:
        if line.qualifier == "board":
            if board_category >= line.category:
                return line
        elif seven_category >= line.category:
            if line.qualifier == "any":
                return line
            if category_of(best_using_hole(board, hole)) >= line.category:
                return line
    return None


class _State:
    def __init__(self, pool: PoolRules, meters: Meters, events: list[MeterEvent]):
        self.pool = pool
        self.meter, self.overflow, self.reserve = meters.meter, meters.overflow, meters.reserve
        self.events = events

    def meters(self) -> Meters:
        return Meters(self.meter, self.overflow, self.reserve)

    def _event(self, kind: str, seat: int | None, amount: Decimal) -> None:
        self.events.append(MeterEvent(kind, seat, amount, self.meter, self.overflow, self.reserve))

    def contribute(self, seat: SeatRecord) -> None:
        pool = self.pool
        amount, hidden = pool.shares(seat.progressive)
        to_meter = amount
        if pool.ceiling is not None:
            to_meter = max(ZERO, min(amount, pool.ceiling - self.meter))
        self.meter += to_meter
        self._event(CONTRIBUTION, seat.seat, to_meter)
        if to_meter != amount:
            self.overflow += amount - to_meter
            self._event(OVERFLOW, seat.seat, amount - to_meter)
        if hidden:
            self.reserve += hidden
            self._event(RESERVE, seat.seat, hidden)

    def pay(self, seat: int, line: PayLine) -> Decimal:
        if line.kind == "fixed":
            self._event(FIXED_AWARD, seat, line.amount)
            return line.amount
        award = floor_to(self.meter * line.amount / 100, self.pool.minor_unit)
        self.meter -= award
        self._event(AWARD, seat, award)
        if line.resets_meter:
            # The reserve funds the reseed as far as it goes; the house the rest.
            self.reserve -= min(self.reserve, self.pool.reseed)
            self.meter += self.pool.reseed
            self._event(RESEED, seat, self.pool.reseed)
        return award


# What a contribution brings with it: the part above a ceiling, the reserve's share.
_WITH_CONTRIBUTION = (OVERFLOW, RESERVE)


def in_contract_order(events: Sequence[tuple]) -> list[tuple]:
    """A round's ``(kind, seat, amount, meter after)`` events with its contributions highest seat first.

    Rounds stored before ROUND_RECORD.md settled the order (and the worked
    examples) list the contributions in the order of the body's seats. The
    same events in the contract's order: each seat's contribution with what it
    brings, from the highest seat down, the meter after each counted again
    from the meter before the round; the awards and reseeds after them as they
    were. Events already in that order come back as they are.
    """
    contributions = 0
    while contributions < len(events) and events[contributions][0] in (CONTRIBUTION, *_WITH_CONTRIBUTION):
        contributions += 1
    if not contributions:
        return list(events)
    first_kind, _, first_amount, first_meter = events[0]
    meter = first_meter - first_amount if first_kind == CONTRIBUTION else first_meter
    by_seat: dict[int, list[tuple]] = {}
    for event in events[:contributions]:
        by_seat.setdefault(event[1], []).append(event)
    ordered = []
    for seat in sorted(by_seat, reverse=True):
        for kind, _, amount, _ in by_seat[seat]:
            if kind == CONTRIBUTION:
                meter += amount
            ordered.append((kind, seat, amount, meter))
    return ordered + list(events[contributions:])
