"""The hands and rounds the benchmark deals: seeded, so every run sees the same ones.

Rounds are dealt as a table posts them (ROUND_RECORD.md), four seats each,
with the bets players at the shipped configurations place: whole units
within the limits, Trips on about half the seats, and on ``us-30k`` a lit
Progressive wager on most of them. ``paid`` is what a correct dealer reports,
worked out by the treys settlement, so every round should come out verified.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal

from bench import treys_settlement
from game.cards import card_text
from game.rules import DECISION_MULTIPLES, PoolRules, TableRules, pay_line, pay_table

DECK = tuple(range(52))
SEATS_PER_ROUND = 4
OPENING_METER = Decimal("10000.00")  # every round is judged from the reseeded meter
# Roughly how players act: most raise preflop, the rest check down or fold at the river.
DECISION_WEIGHTS = {"preflop_4x": 35, "preflop_3x": 5, "flop_2x": 20, "river_1x": 20, "fold": 20}
TRIPS_SHARE = 0.5

Hand = tuple[tuple[int, ...], tuple[int, int]]  # (board, hole)


def _pays(table: dict[str, Decimal]) -> dict[int, Decimal]:
    return pay_table({name: str(pay) for name, pay in table.items()})


def _table_rules(
    currency: str, unit: str, ante: tuple[str, str], trips: tuple[str, str],
    aggregate_limit: str | None = None,
) -> TableRules:
    """A shipped configuration (rounds/migrations/0002) as the engine receives it."""
    return TableRules(
        currency=currency, minor_unit=Decimal("0.01"), unit=Decimal(unit),
        ante_min=Decimal(ante[0]), ante_max=Decimal(ante[1]),
        trips_min=Decimal(trips[0]), trips_max=Decimal(trips[1]),
        blind_pays=_pays(treys_settlement.BLIND_PAYS),
        trips_pays=_pays(treys_settlement.TRIPS_PAYS),
        aggregate_limit=Decimal(aggregate_limit) if aggregate_limit else None,
    )


def _pool_rules(pool: treys_settlement.Pool) -> PoolRules:
    return PoolRules(
        currency="USD", minor_unit=Decimal("0.01"), wager=pool.wager, rate=pool.rate,
        reseed=pool.reseed,
        lines=tuple(
            pay_line({"category": line.category, "qualifier": line.qualifier,
                      "kind": line.kind, "amount": str(line.amount)})
            for line in pool.lines
        ),
    )


@dataclass(frozen=True)
class Variant:
    """One shipped configuration and how its players bet."""

    name: str
    rules: TableRules
    pool: PoolRules | None = None
    progressive_share: float = 0.0  # of seats with a lit Progressive wager

    @property
    def label(self) -> str:
        return f"{self.name} + progressive" if self.pool else self.name


VARIANTS = (
    Variant("se-50kr", _table_rules("SEK", "50", ("50", "1000"), ("50", "1000"))),
    Variant(
        "us-30k", _table_rules("USD", "5", ("5", "500"), ("5", "100"), aggregate_limit="30000"),
        pool=_pool_rules(treys_settlement.US_PROGRESSIVE), progressive_share=0.6,
    ),
)


def deal_hands(count: int, seed: int) -> list[Hand]:
    """``count`` seven-card hands as (board, hole), every card distinct within a hand."""
    rng = random.Random(f"{seed}-hands")
    hands = []
    for _ in range(count):
        cards = rng.sample(DECK, 7)
        hands.append((tuple(cards[:5]), (cards[5], cards[6])))
    return hands


def deal_rounds(variant: Variant, count: int, seed: int) -> list[dict]:
    """``count`` rounds of ``variant`` in wire form, with the ``paid`` a correct dealer reports."""
    rng = random.Random(f"{seed}-{variant.name}")
    table = treys_settlement.TABLES[variant.name]
    rounds = []
    for number in range(count):
        wire = _deal_round(variant, rng, number)
        settled = treys_settlement.settle(
            treys_settlement.round_from_wire(wire), table, OPENING_METER
        )
        for seat in wire["seats"]:
            results = settled.results[seat["seat"]]
            seat["paid"] = {bet: str(amount) for bet, amount in results.items()}
        rounds.append(wire)
    return rounds


def _deal_round(variant: Variant, rng: random.Random, number: int) -> dict:
    rules = variant.rules
    cards = [card_text(c) for c in rng.sample(DECK, 7 + 2 * SEATS_PER_ROUND)]
    seats = []
    for i, seat_number in enumerate(sorted(rng.sample(range(1, 8), SEATS_PER_ROUND))):
        ante = _whole_units(rng, rules.unit, rules.ante_min, rules.ante_max)
        trips = Decimal(0)
        if rng.random() < TRIPS_SHARE:
            trips = _whole_units(rng, rules.unit, rules.trips_min, rules.trips_max)
        decision = rng.choices(list(DECISION_WEIGHTS), list(DECISION_WEIGHTS.values()))[0]
        seat = {
            "seat": seat_number, "player": f"P-{number:06d}-{i}",
            "hole": cards[7 + 2 * i: 9 + 2 * i],
            "ante": str(ante), "blind": str(ante), "trips": str(trips),
            "decision": decision, "play": str(ante * DECISION_MULTIPLES[decision]),
        }
        if variant.pool is not None and rng.random() < variant.progressive_share:
            seat.update(progressive=str(variant.pool.wager), progressive_lit=True)
        seats.append(seat)
    return {
        "table": "B01", "round": f"bench-{number:06d}", "dealt_at": "2026-11-29T21:14:03+01:00",
        "dealer": "D0001", "void": False,
        "board": cards[:5], "dealer_cards": cards[5:7], "seats": seats,
    }


def _whole_units(rng: random.Random, unit: Decimal, low: Decimal, high: Decimal) -> Decimal:
    return unit * rng.randint(int(low / unit), int(high / unit))
