"""The game's mathematics: exact Trips return and the bands actual results should fall in.

Plain Python, no Django. Everything exact is a ``Fraction``; money-facing
results are ``Decimal``.

The Trips bet depends only on the player's seven cards, so its return is a
weighted sum over the best-hand categories of all C(52, 7) = 133,784,560
seven-card hands. Those are counted exactly, without dealing them: a hand is a
multiset of ranks (at most four of each) times a choice of suits for each rank.
For a rank multiset the suits matter only through a flush, and a flush of
seven cards lives in one suit, so for each set ``S`` of five or more of its
ranks we count the suit choices in which one suit holds exactly ``S``; the rest
of the suit choices are not flushes and take the multiset's own category.
About fifty thousand multisets, counted once per process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import cache
from itertools import combinations
from math import comb

# Category indices as the engine numbers them (game.evaluator.CATEGORIES).
HIGH_CARD, PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH, FULL_HOUSE = range(7)
FOUR_OF_A_KIND, STRAIGHT_FLUSH, ROYAL_FLUSH = 7, 8, 9
RANKS = 13
SEVEN_CARD_HANDS = comb(52, 7)

# The 13-bit masks of the ten straights, the wheel (A-2-3-4-5) included; the last is A-high.
_STRAIGHTS = tuple([0b1000000001111] + [0b11111 << low for low in range(9)])
_ROYAL = _STRAIGHTS[-1]


def _straight(mask: int) -> bool:
    return any(mask & run == run for run in _STRAIGHTS)


def _category_without_flush(counts: tuple[int, ...]) -> int:
    """The best five-card category of a rank multiset when suits make no flush."""
    if 4 in counts:
        return FOUR_OF_A_KIND
    trips = counts.count(3)
    pairs = counts.count(2)
    if trips and (pairs or trips > 1):
        return FULL_HOUSE
    if _straight(sum(1 << r for r, c in enumerate(counts) if c)):
        return STRAIGHT
    if trips:
        return THREE_OF_A_KIND
    if pairs >= 2:
        return TWO_PAIR
    return PAIR if pairs else HIGH_CARD


def _flush_category(mask: int) -> int:
    if mask & _ROYAL == _ROYAL:
        return ROYAL_FLUSH
    return STRAIGHT_FLUSH if _straight(mask) else FLUSH


def _rank_multisets(cards: int, ranks: int = RANKS):
    """Every tuple of per-rank counts (0–4 each) summing to ``cards``."""
    if ranks == 1:
        if cards <= 4:
            yield (cards,)
        return
    for here in range(min(cards, 4) + 1):
        for rest in _rank_multisets(cards - here, ranks - 1):
            yield (here, *rest)


def seven_card_category_counts() -> tuple[int, ...]:
    """How many of the 133,784,560 seven-card hands have each best category (index 0–9)."""
    return category_counts(7)


@cache
def category_counts(cards: int) -> tuple[int, ...]:
    """How many ``cards``-card hands (5 to 7) have each best five-card category."""
    if not 5 <= cards <= 7:
        raise ValueError("hands of 5 to 7 cards: with more, two suits could both flush")
    totals = [0] * 10
    for counts in _rank_multisets(cards):
        present = [r for r in range(RANKS) if counts[r]]
        suit_choices = 1
        for r in present:
            suit_choices *= comb(4, counts[r])
        flushes = 0
        if len(present) >= 5:
            for size in range(5, len(present) + 1):
                for suited in combinations(present, size):
                    # One suit holds exactly one card of each rank in ``suited`` and no other;
                    # the other cards of each rank take their suits from the remaining three.
                    ways = 4
                    suited_set = set(suited)
                    for r in present:
                        ways *= comb(3, counts[r] - 1) if r in suited_set else comb(3, counts[r])
                    if ways:
                        totals[_flush_category(sum(1 << r for r in suited))] += ways
                        flushes += ways
        totals[_category_without_flush(counts)] += suit_choices - flushes
    assert sum(totals) == comb(52, cards)
    return tuple(totals)


def category_of_cards(cards: list[int]) -> int:
    """One hand's category by the same rules the counting uses (cards as ``rank * 4 + suit``)."""
    counts = [0] * RANKS
    by_suit = [0] * 4
    for card in cards:
        counts[card >> 2] += 1
        by_suit[card & 3] |= 1 << (card >> 2)
    best = _category_without_flush(tuple(counts))
    for mask in by_suit:
        if mask.bit_count() >= 5:
            best = max(best, _flush_category(mask))
    return best


@dataclass(frozen=True, slots=True)
class WagerMath:
    """Per unit wagered, from the house's side: expected win and its spread."""

    house_edge: Fraction  # the house's expected win per unit
    variance: Fraction  # of the player's result per unit

    @property
    def sd(self) -> Decimal:
        return decimal_sqrt(self.variance)

    @property
    def edge(self) -> Decimal:
        return Decimal(self.house_edge.numerator) / Decimal(self.house_edge.denominator)


def trips_math(pays: Mapping[int, Decimal | int | str]) -> WagerMath:
    """The exact house edge and variance of a Trips pay table ``{category index: pays x to 1}``.

    A category the table does not list loses the wager.
    """
    pays = {int(c): Fraction(str(p)) for c, p in pays.items()}
    return _trips_math(tuple(sorted(pays.items())))


@cache
def _trips_math(pays: tuple[tuple[int, Fraction], ...]) -> WagerMath:
    table = dict(pays)
    mean = second = Fraction(0)
    for category, count in enumerate(seven_card_category_counts()):
        p = Fraction(count, SEVEN_CARD_HANDS)
        result = table.get(category, Fraction(-1))
        mean += p * result
        second += p * result * result
    return WagerMath(house_edge=-mean, variance=second - mean * mean)


def decimal_sqrt(value: Fraction | Decimal) -> Decimal:
    if isinstance(value, Fraction):
        value = Decimal(value.numerator) / Decimal(value.denominator)
    with localcontext() as ctx:
        ctx.prec = 28
        return value.sqrt()


@dataclass(frozen=True, slots=True)
class Band:
    """Where the house's win should fall: ``expected ± z·sd``."""

    expected: Decimal
    sd: Decimal
    z: Decimal

    @property
    def low(self) -> Decimal:
        return self.expected - self.z * self.sd

    @property
    def high(self) -> Decimal:
        return self.expected + self.z * self.sd

    def holds(self, actual: Decimal) -> bool:
        return self.low <= actual <= self.high


Z_95 = Decimal("1.959963984540054")
Z_997 = Decimal("3")  # the "three sigma" band: 99.73 %


def expected_win(*, edge: Decimal, handle: Decimal) -> Decimal:
    return edge * handle


def win_sd(*, sd_per_unit: Decimal, sum_of_squared_wagers: Decimal) -> Decimal:
    """The standard deviation of the total result of independent wagers of varying size.

    Each wager ``w`` contributes ``(sd·w)²``, so equal wagers give ``sd·w·sqrt(n)``.
    """
    return decimal_sqrt(sd_per_unit * sd_per_unit * sum_of_squared_wagers)


def win_band(
    *, edge: Decimal, sd_per_unit: Decimal, handle: Decimal, sum_of_squared_wagers: Decimal, z: Decimal
) -> Band:
    return Band(
        expected=expected_win(edge=edge, handle=handle),
        sd=win_sd(sd_per_unit=sd_per_unit, sum_of_squared_wagers=sum_of_squared_wagers),
        z=z,
    )


def uniform_win_band(*, edge: Decimal, sd_per_unit: Decimal, wager: Decimal, n: int, z: Decimal) -> Band:
    """``n`` equal wagers: expected ``edge·n·w``, band ``± z·sd·w·sqrt(n)``."""
    return win_band(
        edge=edge, sd_per_unit=sd_per_unit, handle=wager * n,
        sum_of_squared_wagers=wager * wager * n, z=z,
    )
