"""The game's mathematics: exact hand counts, the Trips return, and the bands."""

from __future__ import annotations

import random
from decimal import Context, Decimal
from fractions import Fraction

import pytest

from books.statistics import (
    Z_95, Z_997, category_counts, category_of_cards, seven_card_category_counts, trips_math,
    uniform_win_band, win_band,
)
from game.evaluator import CATEGORY_INDEX, category_of, evaluate
from game.rules import pay_table

SEED_TRIPS = {"royal_flush": "50", "straight_flush": "40", "four_of_a_kind": "30",
              "full_house": "8", "flush": "7", "straight": "4", "three_of_a_kind": "3"}

# The published counts of best hands among all seven-card and five-card hands.
SEVEN = (23294460, 58627800, 31433400, 6461620, 6180020, 4047644, 3473184, 224848, 37260, 4324)
FIVE = (1302540, 1098240, 123552, 54912, 10200, 5108, 3744, 624, 36, 4)


def test_every_seven_card_hand_is_counted_once_in_its_category():
    assert seven_card_category_counts() == SEVEN
    assert sum(SEVEN) == 133_784_560


def test_the_same_counting_gives_the_five_card_counts():
    assert category_counts(5) == FIVE


def test_the_counting_rules_agree_with_the_engine_on_random_hands():
    rng = random.Random(20261128)
    for _ in range(3000):
        cards = rng.sample(range(52), 7)
        assert category_of_cards(cards) == category_of(evaluate(cards)), cards


def test_the_seed_trips_table_keeps_3_498_percent():
    math = trips_math(pay_table(SEED_TRIPS))
    assert round(math.edge * 100, 3) == Decimal("3.498")
    # Exact: the return is a ratio of whole hand counts.
    wins = sum(count * int(SEED_TRIPS[name]) for name, count in
               zip(["three_of_a_kind", "straight", "flush", "full_house", "four_of_a_kind",
                    "straight_flush", "royal_flush"], SEVEN[3:]))
    losses = sum(SEVEN[:3])
    assert math.house_edge == Fraction(losses - wins, sum(SEVEN))


def test_a_full_house_paying_9_keeps_0_902_percent():
    math = trips_math(pay_table({**SEED_TRIPS, "full_house": "9"}))
    assert round(math.edge * 100, 3) == Decimal("0.902")


def test_trips_variance_comes_from_the_same_distribution():
    math = trips_math(pay_table(SEED_TRIPS))
    pays = {CATEGORY_INDEX[k]: int(v) for k, v in SEED_TRIPS.items()}
    total = sum(SEVEN)
    second = Fraction(sum(n * pays.get(c, -1) ** 2 for c, n in enumerate(SEVEN)), total)
    assert math.variance == second - math.house_edge ** 2
    assert Decimal("2.68") < math.sd < Decimal("2.69")


def test_bands_widen_with_the_square_root_of_the_hands():
    edge, sd = Decimal("0.02185"), Decimal("4.94")
    band = uniform_win_band(edge=edge, sd_per_unit=sd, wager=Decimal(100), n=10_000, z=Z_95)
    assert band.expected == Decimal("21850.00000")
    assert band.sd == Decimal("49400")  # 4.94 · 100 · sqrt(10,000)
    assert band.low == band.expected - Z_95 * 49400
    assert band.holds(Decimal(0)) and not band.holds(Decimal(-100_000))
    wide = uniform_win_band(edge=edge, sd_per_unit=sd, wager=Decimal(100), n=10_000, z=Z_997)
    assert wide.low < band.low and wide.high > band.high


def test_unequal_wagers_weigh_by_their_squares():
    band = win_band(edge=Decimal("0.1"), sd_per_unit=Decimal(2), handle=Decimal(50),
                    sum_of_squared_wagers=Decimal(10 * 10 + 40 * 40), z=Z_95)
    assert band.expected == Decimal("5.0")
    assert band.sd == (Decimal(4) * 1700).sqrt(Context(prec=28))  # decimal_sqrt's 28 digits


@pytest.mark.parametrize("cards", [4, 8])
def test_only_five_to_seven_cards_are_counted(cards):
    with pytest.raises(ValueError):
        category_counts(cards)
