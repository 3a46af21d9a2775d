"""The yardstick: a plain, correct settlement of RULES.md with treys judging the hands.

This is what a careful engineer writes in an afternoon with a public evaluator:
read the round, rank every hand with ``treys``, pay Ante, Blind, Play and Trips
by the tables, apply the aggregate limit, then run the Progressive. It shares
no code with ``rounds.engine`` (only the wire format and RULES.md), so the
benchmark can also use it to check the engine, round by round.

treys ranks a hand 1 (royal flush) to 7462 (seven-high); lower is better.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal
from itertools import combinations

from treys import Card, Evaluator

# RULES.md categories, low to high.
CATEGORIES = (
    "high_card", "pair", "two_pair", "three_of_a_kind", "straight",
    "flush", "full_house", "four_of_a_kind", "straight_flush", "royal_flush",
)
_RANK_OF_CATEGORY = {name: i for i, name in enumerate(CATEGORIES)}
_TREYS_CLASS_NAMES = {
    "High Card": "high_card", "Pair": "pair", "Two Pair": "two_pair",
    "Three of a Kind": "three_of_a_kind", "Straight": "straight", "Flush": "flush",
    "Full House": "full_house", "Four of a Kind": "four_of_a_kind",
    "Straight Flush": "straight_flush", "Royal Flush": "royal_flush",
}
_ROYAL_FLUSH_RANK = 1  # older treys fold the royal into its straight-flush class

ZERO = Decimal(0)
GAME_BETS = ("ante", "blind", "play", "trips")
PLAY_MULTIPLES = {"preflop_4x": 4, "preflop_3x": 3, "flop_2x": 2, "river_1x": 1, "fold": 0}

_evaluator = Evaluator()


@dataclass(frozen=True)
class PoolLine:
    category: str
    qualifier: str  # "hole", "board" or "any"
    kind: str  # "percent" of the meter or a "fixed" amount
    amount: Decimal


@dataclass(frozen=True)
class Pool:
    wager: Decimal
    rate: Decimal
    reseed: Decimal
    lines: tuple[PoolLine, ...]  # best first


@dataclass(frozen=True)
class Table:
    minor_unit: Decimal
    blind_pays: dict[str, Decimal]
    trips_pays: dict[str, Decimal]
    aggregate_limit: Decimal | None = None
    pool: Pool | None = None


def _decimals(pays: dict[str, str]) -> dict[str, Decimal]:
    return {name: Decimal(pay) for name, pay in pays.items()}


# RULES.md (seed 001) and PROGRESSIVE.md, written out here on purpose.
BLIND_PAYS = _decimals({
    "royal_flush": "500", "straight_flush": "50", "four_of_a_kind": "10",
    "full_house": "3", "flush": "1.5", "straight": "1",
})
TRIPS_PAYS = _decimals({
    "royal_flush": "50", "straight_flush": "40", "four_of_a_kind": "30",
    "full_house": "8", "flush": "7", "straight": "4", "three_of_a_kind": "3",
})
US_PROGRESSIVE = Pool(
    wager=Decimal("5"), rate=Decimal("0.20"), reseed=Decimal("10000.00"),
    lines=(
        PoolLine("royal_flush", "hole", "percent", Decimal("100")),
        PoolLine("straight_flush", "hole", "percent", Decimal("10")),
        PoolLine("royal_flush", "board", "fixed", Decimal("1000")),
        PoolLine("four_of_a_kind", "any", "fixed", Decimal("300")),
        PoolLine("full_house", "any", "fixed", Decimal("25")),
        PoolLine("flush", "any", "fixed", Decimal("20")),
        PoolLine("straight", "any", "fixed", Decimal("15")),
    ),
)
TABLES = {
    "se-50kr": Table(Decimal("0.01"), BLIND_PAYS, TRIPS_PAYS),
    "us-30k": Table(
        Decimal("0.01"), BLIND_PAYS, TRIPS_PAYS,
        aggregate_limit=Decimal("30000"), pool=US_PROGRESSIVE,
    ),
}


@dataclass(frozen=True)
class Seat:
    seat: int
    hole: list[int]  # treys card ints
    ante: Decimal
    blind: Decimal
    trips: Decimal
    play: Decimal
    decision: str
    progressive: Decimal
    progressive_lit: bool


@dataclass(frozen=True)
class Round:
    board: list[int]
    dealer_cards: list[int]
    seats: list[Seat]


@dataclass
class Settlement:
    dealer_category: str
    dealer_qualifies: bool
    categories: dict[int, str]  # seat -> hand category
    results: dict[int, dict[str, Decimal]] = field(default_factory=dict)  # seat -> bet -> amount
    meter: Decimal | None = None  # the pool's meter after the round


def round_from_wire(data: dict) -> Round:
    """A dealt (not void) round as a table posts it."""
    return Round(
        board=[Card.new(c) for c in data["board"]],
        dealer_cards=[Card.new(c) for c in data["dealer_cards"]],
        seats=[
            Seat(
                seat=int(s["seat"]),
                hole=[Card.new(c) for c in s["hole"]],
                ante=Decimal(str(s["ante"])),
                blind=Decimal(str(s["blind"])),
                trips=Decimal(str(s.get("trips", 0))),
                play=Decimal(str(s["play"])),
                decision=s["decision"],
                progressive=Decimal(str(s.get("progressive", 0))),
                progressive_lit=bool(s.get("progressive_lit", False)),
            )
            for s in data["seats"]
        ],
    )


def category(rank: int) -> str:
    if rank == _ROYAL_FLUSH_RANK:
        return "royal_flush"
    return _TREYS_CLASS_NAMES[_evaluator.class_to_string(_evaluator.get_rank_class(rank))]


def at_least(name: str, floor: str) -> bool:
    return _RANK_OF_CATEGORY[name] >= _RANK_OF_CATEGORY[floor]


def round_down(amount: Decimal, minor_unit: Decimal) -> Decimal:
    return amount.quantize(minor_unit, rounding=ROUND_FLOOR)


def settle(rnd: Round, table: Table, meter: Decimal | None = None) -> Settlement:
    """Settle every seat of ``rnd``; ``meter`` is the pool's meter before the round."""
    dealer_rank = _evaluator.evaluate(rnd.board, rnd.dealer_cards)
    dealer_category = category(dealer_rank)
    qualifies = at_least(dealer_category, "pair")
    out = Settlement(dealer_category, qualifies, {})

    for seat in sorted(rnd.seats, key=lambda s: -s.seat):
        rank = _evaluator.evaluate(rnd.board, seat.hole)
        name = category(rank)
        out.categories[seat.seat] = name
        if seat.decision == "fold":
            ante, blind, play = -seat.ante, -seat.blind, ZERO
        elif rank < dealer_rank:
            ante = seat.ante if qualifies else ZERO
            pay = table.blind_pays.get(name)
            blind = round_down(seat.blind * pay, table.minor_unit) if pay else ZERO
            play = seat.play
        elif rank > dealer_rank:
            ante = -seat.ante if qualifies else ZERO
            blind, play = -seat.blind, -seat.play
        else:
            ante = blind = play = ZERO
        trips = ZERO
        if seat.trips:
            pay = table.trips_pays.get(name)
            trips = round_down(seat.trips * pay, table.minor_unit) if pay else -seat.trips
        out.results[seat.seat] = {"ante": ante, "blind": blind, "play": play, "trips": trips}

    _apply_aggregate_limit(out.results, table)
    out.meter = _settle_progressive(rnd, table, meter, out.results)
    return out


def _apply_aggregate_limit(results: dict[int, dict[str, Decimal]], table: Table) -> None:
    limit = table.aggregate_limit
    if limit is None:
        return
    total = sum((a for bets in results.values() for a in bets.values() if a > 0), ZERO)
    if total <= limit:
        return
    for bets in results.values():
        for bet, amount in bets.items():
            if amount > 0:
                bets[bet] = round_down(amount * limit / total, table.minor_unit)


def _settle_progressive(
    rnd: Round, table: Table, meter: Decimal | None, results: dict[int, dict[str, Decimal]]
) -> Decimal | None:
    for bets in results.values():
        bets["progressive"] = ZERO
    pool = table.pool
    if pool is None or meter is None:
        return meter
    lit = [s for s in rnd.seats if s.progressive and s.progressive_lit]
    for seat in lit:
        meter += round_down(pool.rate * seat.progressive, table.minor_unit)
        results[seat.seat]["progressive"] = -seat.progressive
    for seat in sorted(lit, key=lambda s: -s.seat):
        line = _winning_line(pool, rnd.board, seat.hole)
        if line is None:
            continue
        if line.kind == "fixed":
            award = line.amount
        else:
            award = round_down(meter * line.amount / 100, table.minor_unit)
            meter -= award
            if line.amount == 100:
                meter += pool.reseed
        results[seat.seat]["progressive"] = award - seat.progressive
    return meter


def _winning_line(pool: Pool, board: list[int], hole: list[int]) -> PoolLine | None:
    seven = category(_evaluator.evaluate(board, hole))
    for line in pool.lines:
        if line.qualifier == "board":
            if at_least(category(_evaluator.evaluate(board, [])), line.category):
                return line
        elif at_least(seven, line.category):
            if line.qualifier == "any" or at_least(_best_with_hole(board, hole), line.category):
                return line
    return None


def _best_with_hole(board: list[int], hole: list[int]) -> str:
    """The best category among five-card hands that use at least one hole card."""
    best = min(
        _evaluator.evaluate(list(five), [])
        for five in combinations(hole + board, 5)
        if hole[0] in five or hole[1] in five
    )
    return category(best)
