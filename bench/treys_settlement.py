"""The yardstick: a plain, correct settlement of RULES.md with a public evaluator judging the hands.

This is what a careful engineer writes in an afternoon with a public evaluator:
read the round, rank every hand with ``treys``, pay Ante, Blind, Play and Trips
by the tables, apply the aggregate limit, then run the Progressive. It shares
no code with ``game`` (only the wire format and RULES.md), so the
benchmark can also use it to check the engine, round by round.

The same settlement runs with ``phevaluator`` or ``eval7`` ranking the hands
instead (``RANKERS``), so the benchmark can show what each evaluator makes of
a whole round. treys and phevaluator rank a hand 1 (royal flush) to 7462
(seven-high); eval7 scores it higher-is-better, so its score is negated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal
from itertools import combinations

import phevaluator
from treys import Card, Evaluator

try:  # eval7 has no wheel for some Pythons; the benchmark then leaves it out
    import eval7
except ImportError:  # pragma: no cover
    eval7 = None

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
    hole: list  # the ranker's cards
    ante: Decimal
    blind: Decimal
    trips: Decimal
    play: Decimal
    decision: str
    progressive: Decimal
    progressive_lit: bool


@dataclass(frozen=True)
class Round:
    board: list
    dealer_cards: list
    seats: list[Seat]


@dataclass
class Settlement:
    dealer_category: str
    dealer_qualifies: bool
    categories: dict[int, str]  # seat -> hand category
    results: dict[int, dict[str, Decimal]] = field(default_factory=dict)  # seat -> bet -> amount
    meter: Decimal | None = None  # the pool's meter after the round


def category(rank: int) -> str:
    if rank == _ROYAL_FLUSH_RANK:
        return "royal_flush"
    return _TREYS_CLASS_NAMES[_evaluator.class_to_string(_evaluator.get_rank_class(rank))]


# Cactus Kev's ranks, which phevaluator shares with treys: the worst rank of each category.
_CACTUS_KEV_FLOORS = (
    (1, "royal_flush"), (10, "straight_flush"), (166, "four_of_a_kind"), (322, "full_house"),
    (1599, "flush"), (1609, "straight"), (2467, "three_of_a_kind"), (3325, "two_pair"),
    (6185, "pair"), (7462, "high_card"),
)


def _cactus_kev_category(rank: int) -> str:
    for floor, name in _CACTUS_KEV_FLOORS:
        if rank <= floor:
            return name
    raise ValueError(rank)


@dataclass(frozen=True)
class Ranker:
    """A public evaluator as the settlement uses it."""

    name: str
    card: Callable[[str], object]  # "Ah" -> the library's card
    rank: Callable[[list, list], int]  # (cards, more cards), 5 to 7 in all -> lower is better
    category: Callable[[int], str]  # a rank -> its RULES.md category


TREYS = Ranker("treys", Card.new, _evaluator.evaluate, category)
RANKERS = {"treys": TREYS}
RANKERS["phevaluator"] = Ranker(
    "phevaluator", lambda text: phevaluator.Card(text).id_,
    lambda cards, more: phevaluator.evaluate_cards(*cards, *more), _cactus_kev_category,
)
if eval7 is not None:
    _EVAL7_NAMES = {
        "High Card": "high_card", "Pair": "pair", "Two Pair": "two_pair", "Trips": "three_of_a_kind",
        "Straight": "straight", "Flush": "flush", "Full House": "full_house",
        "Quads": "four_of_a_kind", "Straight Flush": "straight_flush",
    }
    _EVAL7_ROYAL = eval7.evaluate([eval7.Card(c) for c in ("Ah", "Kh", "Qh", "Jh", "Th")])

    def _eval7_category(rank: int) -> str:
        return "royal_flush" if -rank == _EVAL7_ROYAL else _EVAL7_NAMES[eval7.handtype(-rank)]

    RANKERS["eval7"] = Ranker(
        "eval7", eval7.Card, lambda cards, more: -eval7.evaluate(cards + more), _eval7_category,
    )


def round_from_wire(data: dict, ranker: Ranker = TREYS) -> Round:
    """A dealt (not void) round as a table posts it, its cards the ranker's."""
    card = ranker.card
    return Round(
        board=[card(c) for c in data["board"]],
        dealer_cards=[card(c) for c in data["dealer_cards"]],
        seats=[
            Seat(
                seat=int(s["seat"]),
                hole=[card(c) for c in s["hole"]],
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


def at_least(name: str, floor: str) -> bool:
    return _RANK_OF_CATEGORY[name] >= _RANK_OF_CATEGORY[floor]


def round_down(amount: Decimal, minor_unit: Decimal) -> Decimal:
    return amount.quantize(minor_unit, rounding=ROUND_FLOOR)


def settle(rnd: Round, table: Table, meter: Decimal | None = None, ranker: Ranker = TREYS) -> Settlement:
    """Settle every seat of ``rnd`` (read with the same ``ranker``); ``meter`` is the pool's
    meter before the round."""
    evaluate, category = ranker.rank, ranker.category
    dealer_rank = evaluate(rnd.board, rnd.dealer_cards)
    dealer_category = category(dealer_rank)
    qualifies = at_least(dealer_category, "pair")
    out = Settlement(dealer_category, qualifies, {})

    for seat in sorted(rnd.seats, key=lambda s: -s.seat):
        rank = evaluate(rnd.board, seat.hole)
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
    out.meter = _settle_progressive(rnd, table, meter, out.results, ranker)
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
    rnd: Round, table: Table, meter: Decimal | None, results: dict[int, dict[str, Decimal]], ranker: Ranker,
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
        line = _winning_line(pool, rnd.board, seat.hole, ranker)
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


def _winning_line(pool: Pool, board: list, hole: list, ranker: Ranker) -> PoolLine | None:
    seven = ranker.category(ranker.rank(board, hole))
    for line in pool.lines:
        if line.qualifier == "board":
            if at_least(ranker.category(ranker.rank(board, [])), line.category):
                return line
        elif at_least(seven, line.category):
            if line.qualifier == "any" or at_least(_best_with_hole(board, hole, ranker), line.category):
                return line
    return None


def _best_with_hole(board: list, hole: list, ranker: Ranker) -> str:
    """The best category among five-card hands that use at least one hole card."""
    best = min(
        ranker.rank(list(five), [])
        for five in combinations(hole + board, 5)
        if hole[0] in five or hole[1] in five
    )
    return ranker.category(best)
