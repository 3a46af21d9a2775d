"""The shipped configurations as the engine sees them, written out from the specs.

The numbers are copied from RULES.md (seed 001 pay tables) and PROGRESSIVE.md
(``se-50kr``, ``us-30k``, ``us-progressive``) rather than read from the
database, so the engine tests need no Django and check the engine against the
specs, not against the migrations.
"""

from __future__ import annotations

from decimal import Decimal

from game.evaluator import CATEGORY_INDEX
from game.rules import PayLine, PoolRules, TableRules, pay_table

CENT = Decimal("0.01")

BLIND_PAYS = pay_table(
    {
        "royal_flush": "500", "straight_flush": "50", "four_of_a_kind": "10",
        "full_house": "3", "flush": "1.5", "straight": "1",
    }
)
TRIPS_PAYS = pay_table(
    {
        "royal_flush": "50", "straight_flush": "40", "four_of_a_kind": "30",
        "full_house": "8", "flush": "7", "straight": "4", "three_of_a_kind": "3",
    }
)

SE_50KR = TableRules(
    currency="SEK", minor_unit=CENT, unit=Decimal(50),
    ante_min=Decimal(50), ante_max=Decimal(1000), trips_min=Decimal(50), trips_max=Decimal(1000),
    blind_pays=BLIND_PAYS, trips_pays=TRIPS_PAYS,
)
US_30K = TableRules(
    currency="USD", minor_unit=CENT, unit=Decimal(5),
    ante_min=Decimal(5), ante_max=Decimal(500), trips_min=Decimal(5), trips_max=Decimal(100),
    blind_pays=BLIND_PAYS, trips_pays=TRIPS_PAYS, aggregate_limit=Decimal(30000),
)


def line(category: str, qualifier: str, kind: str, amount: str) -> PayLine:
    return PayLine(CATEGORY_INDEX[category], qualifier, kind, Decimal(amount))


US_PROGRESSIVE_LINES = (
    line("royal_flush", "hole", "percent", "100"),
    line("straight_flush", "hole", "percent", "10"),
    line("royal_flush", "board", "fixed", "1000"),
    line("four_of_a_kind", "any", "fixed", "300"),
    line("full_house", "any", "fixed", "25"),
    line("flush", "any", "fixed", "20"),
    line("straight", "any", "fixed", "15"),
)
US_PROGRESSIVE = PoolRules(
    currency="USD", minor_unit=CENT, wager=Decimal(5), rate=Decimal("0.20"),
    reseed=Decimal("10000.00"), lines=US_PROGRESSIVE_LINES,
)

# configuration name -> (table rules, pool rules or None), as the example files name them.
CONFIGS: dict[str, tuple[TableRules, PoolRules | None]] = {
    "se-50kr": (SE_50KR, None),
    "us-30k": (US_30K, US_PROGRESSIVE),
}
