"""The numbers a casino can change, as the engine receives them.

The database keeps these as versioned records; the engine only ever sees these
frozen values, so a verdict depends on nothing but its inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from decimal import ROUND_FLOOR, Decimal

from .evaluator import CATEGORY_INDEX, PAIR
# BETS stays importable from here, where its callers have always found it.
from .vocabulary import BETS, Decision  # noqa: F401

# The Play bet as a multiple of the Ante, by decision (RULES.md "A round").
DECISION_MULTIPLES: Mapping[str, int] = {
    Decision.PREFLOP_4X.value: 4,
    Decision.PREFLOP_3X.value: 3,
    Decision.FLOP_2X.value: 2,
    Decision.RIVER_1X.value: 1,
    Decision.FOLD.value: 0,
}
FOLD = Decision.FOLD.value

# The highest pay a configuration may set: ROUND_RECORD.md bounds a wager at 12
# integer digits and a paid amount at 15, a 500:1 pay on the largest wager.
MOST_PAY = 500

QUALIFIERS = ("hole", "board", "any")
PAY_KINDS = ("percent", "fixed")


class RulesError(ValueError):
    """A configuration the engine cannot settle by."""


def pay_table(pays: Mapping[str, object]) -> dict[int, Decimal]:
    """``{"royal_flush": "500", ...}`` as ``{category index: multiple}``."""
    table: dict[int, Decimal] = {}
    for name, pay in pays.items():
        if name not in CATEGORY_INDEX:
            raise RulesError(f"unknown hand category {name!r}")
        amount = Decimal(str(pay))
        if amount <= 0:
            raise RulesError(f"the pay for {name} must be positive, not {amount}")
        table[CATEGORY_INDEX[name]] = amount
    return table


@dataclass(frozen=True, slots=True)
class TableRules:
    currency: str
    minor_unit: Decimal
    unit: Decimal
    ante_min: Decimal
    ante_max: Decimal
    trips_min: Decimal
    trips_max: Decimal
    # Category index -> pay multiple; a winning Blind below every listed
    # category pushes, a Trips bet below every listed category loses.
    blind_pays: Mapping[int, Decimal]
    trips_pays: Mapping[int, Decimal]
    aggregate_limit: Decimal | None = None
    dealer_qualifier: int = PAIR
    one_hand_per_player: bool = True
    # Every Ante (and Trips) that breaks no rule, for an O(1) check of the
    # common, clean seat; None when the limits allow too many to list.
    legal_antes: frozenset[Decimal] | None = field(init=False, repr=False, compare=False)
    legal_trips: frozenset[Decimal] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.unit <= 0 or self.minor_unit <= 0:
            raise RulesError("the betting unit and the minor unit must be positive")
        if not (0 < self.ante_min <= self.ante_max):
            raise RulesError("the Ante limits must satisfy 0 < minimum <= maximum")
        if not (0 < self.trips_min <= self.trips_max):
            raise RulesError("the Trips limits must satisfy 0 < minimum <= maximum")
        if self.aggregate_limit is not None and self.aggregate_limit <= 0:
            raise RulesError("an aggregate limit must be positive")
        object.__setattr__(self, "legal_antes", _whole_units(self.ante_min, self.ante_max, self.unit))
        object.__setattr__(self, "legal_trips", _whole_units(self.trips_min, self.trips_max, self.unit))


# The numbers a table configuration is made of, in TableRules' order: what a
# configuration version stores, what a new version's numbers are checked for,
# what the engine is built from. A number added to TableRules is one of them.
TABLE_NUMBERS: tuple[str, ...] = tuple(f.name for f in fields(TableRules) if f.init)


def _category(name: object) -> int:
    if name not in CATEGORY_INDEX:
        raise RulesError(f"unknown hand category {name!r}")
    return CATEGORY_INDEX[str(name)]


def _minor_unit(amount: object) -> Decimal:
    # A column of four decimals reads 0.01 as 0.0100; settled amounts take the
    # minor unit's own places, so it is normalised before the engine sees it.
    return Decimal(str(amount)).normalize()


# The numbers a configuration keeps in another form than the engine's, that
# form's type, and how the engine reads it: pay tables by hand name
# ({"royal_flush": "500"}), the dealer's qualifier by name ("pair").
_STORED_FORMS = {
    "minor_unit": ("Decimal", _minor_unit),
    "blind_pays": ("dict[str, str]", pay_table),
    "trips_pays": ("dict[str, str]", pay_table),
    "dealer_qualifier": ("str", _category),
}
# Each number's type as a configuration keeps it (see ``table_rules``).
STORED_TYPES: Mapping[str, str] = {
    f.name: _STORED_FORMS[f.name][0] if f.name in _STORED_FORMS else str(f.type)
    for f in fields(TableRules)
    if f.init
}


def table_rules(numbers: Mapping[str, object]) -> TableRules:
    """A configuration's rules from its numbers as it keeps them: every name of ``TABLE_NUMBERS``."""
    engine = {}
    for name in TABLE_NUMBERS:
        value = numbers[name]
        engine[name] = _STORED_FORMS[name][1](value) if name in _STORED_FORMS else value
    return TableRules(**engine)


_MAX_LISTED = 10_000


def _whole_units(low: Decimal, high: Decimal, unit: Decimal) -> frozenset[Decimal] | None:
    first, last = low // unit, high // unit  # both positive: // floors
    if first * unit < low:
        first += 1
    if last - first >= _MAX_LISTED:
        return None
    return frozenset(unit * n for n in range(int(first), int(last) + 1))


@dataclass(frozen=True, slots=True)
class PayLine:
    category: int
    qualifier: str
    kind: str
    amount: Decimal  # percent of the meter, or a fixed amount

    def __post_init__(self) -> None:
        if self.qualifier not in QUALIFIERS:
            raise RulesError(f"unknown qualifier {self.qualifier!r}; one of {QUALIFIERS}")
        if self.kind not in PAY_KINDS:
            raise RulesError(f"unknown pay kind {self.kind!r}; one of {PAY_KINDS}")
        if self.amount <= 0:
            raise RulesError("a pay line must pay a positive amount")
        if self.kind == "percent" and self.amount > 100:
            raise RulesError("a percentage pay cannot exceed 100")

    @property
    def resets_meter(self) -> bool:
        return self.kind == "percent" and self.amount == 100


def pay_line(spec: Mapping[str, object]) -> PayLine:
    """A pay line from its stored form ``{"category", "qualifier", "kind", "amount"}``."""
    name = spec.get("category")
    if name not in CATEGORY_INDEX:
        raise RulesError(f"unknown hand category {name!r}")
    return PayLine(
        category=CATEGORY_INDEX[str(name)],
        qualifier=str(spec.get("qualifier")),
        kind=str(spec.get("kind")),
        amount=Decimal(str(spec.get("amount"))),
    )


@dataclass(frozen=True, slots=True)
class PoolRules:
    currency: str
    minor_unit: Decimal
    wager: Decimal
    rate: Decimal
    reseed: Decimal
    lines: tuple[PayLine, ...]  # best line first
    ceiling: Decimal | None = None
    reserve_rate: Decimal = Decimal(0)
    # What one lit wager of exactly ``wager`` adds to the meter and to the reserve.
    wager_contribution: Decimal = field(init=False, repr=False, compare=False)
    wager_reserve: Decimal = field(init=False, repr=False, compare=False)

    def shares(self, wager: Decimal) -> tuple[Decimal, Decimal]:
        """The meter's and the reserve's shares of a lit wager, each rounded down."""
        if wager == self.wager:
            return self.wager_contribution, self.wager_reserve
        return (
            (self.rate * wager).quantize(self.minor_unit, ROUND_FLOOR),
            (self.reserve_rate * wager).quantize(self.minor_unit, ROUND_FLOOR),
        )

    def __post_init__(self) -> None:
        if self.wager <= 0:
            raise RulesError("the progressive wager must be positive")
        if not (0 <= self.rate <= 1) or not (0 <= self.reserve_rate <= 1):
            raise RulesError("contribution rates are fractions between 0 and 1")
        if self.rate + self.reserve_rate > 1:
            raise RulesError("the contribution and reserve rates cannot exceed the wager")
        if self.reseed < 0:
            raise RulesError("the reseed amount cannot be negative")
        if self.ceiling is not None and self.ceiling < self.reseed:
            raise RulesError("the ceiling cannot be below the reseed amount")
        if not self.lines:
            raise RulesError("a pool needs at least one pay line")
        object.__setattr__(self, "wager_contribution", (self.rate * self.wager).quantize(self.minor_unit, ROUND_FLOOR))
        object.__setattr__(self, "wager_reserve", (self.reserve_rate * self.wager).quantize(self.minor_unit, ROUND_FLOOR))
