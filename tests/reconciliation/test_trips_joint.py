"""Two seats' hand categories counted over every board: the exact Trips seat–seat covariance.

The counting is checked against the engine deal by deal on boards of its own, the shipped counts
against the exact single-seat Trips figures and an independent evaluator's covariance, and the
simulation's estimate against the exact figure.
"""

from __future__ import annotations

import json
import random
from decimal import Decimal
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from books import seat_covariance as sc
from books import trips_joint as tj
from books.statistics import trips_math
from game.evaluator import category_of, evaluate

from tests.game.engine_rules import BLIND_PAYS, TRIPS_PAYS


def _brute(board: list[int]) -> np.ndarray:
    rest = [c for c in range(52) if c not in board]
    category = {h: category_of(evaluate([*board, *h])) for h in combinations(rest, 2)}
    joint = np.zeros((tj.CATEGORY_COUNT, tj.CATEGORY_COUNT), dtype=np.int64)
    for first, i in category.items():
        for second, j in category.items():
            if not set(first) & set(second):
                joint[i, j] += 1
    return joint


@pytest.mark.slow
def test_a_boards_counts_are_the_engines_deal_by_deal():
    rng = random.Random(26)
    boards = [sorted(rng.sample(range(52), 5)) for _ in range(2)] + [[0, 4, 8, 12, 48]]  # a straight flush
    counted = tj.joint_of_boards(np.array(boards))
    assert (counted == sum(_brute(b) for b in boards)).all()
    assert int(counted.sum()) == 3 * 1081 * 990


def test_the_shipped_counts_hold_every_deal_once_and_both_seats_alike():
    joint = tj.shipped_joint()
    assert int(joint.sum()) == tj.DEALS
    assert (joint == joint.T).all()


@pytest.mark.parametrize("pays", [TRIPS_PAYS, {3: "3", 6: "8", 7: "30", 8: "50"}], ids=["shipped", "other"])
def test_one_seats_margin_is_the_exact_trips_variance(pays):
    assert tj.trips_variance_exact(tj.shipped_joint(), pays) == trips_math(pays).variance


def test_the_shipped_tables_covariance_is_the_independent_figure():
    # 1.564941: an evaluator written apart from this code, enumerating the same deals.
    covariance = tj.trips_covariance_exact(tj.shipped_joint(), TRIPS_PAYS)
    assert abs(float(covariance) - 1.564941) < 1e-6
    assert type(covariance) is Fraction
    assert sc.load_seat_covariance(BLIND_PAYS).trips_covariance(TRIPS_PAYS) == sc.to_decimal(covariance)


def test_the_simulations_estimate_agrees_with_the_exact_figure():
    shipped = sc.load_seat_covariance(BLIND_PAYS)
    estimate, se = shipped.trips_covariance_simulated(TRIPS_PAYS)
    exact = shipped.trips_covariance(TRIPS_PAYS)
    assert abs(estimate - exact) < 4 * se and se > 0


def test_counts_that_do_not_hold_every_deal_are_refused(tmp_path, monkeypatch):
    document = json.loads(tj.DATA.read_text())
    document["counts"][3][3] -= 1
    edited = tmp_path / "trips_joint.json"
    edited.write_text(json.dumps(document))
    monkeypatch.setattr(tj, "DATA", edited)
    tj.shipped_joint.cache_clear()
    try:
        with pytest.raises(ValueError, match="deals"):
            tj.shipped_joint()
    finally:
        monkeypatch.undo()
        tj.shipped_joint.cache_clear()
    assert Decimal(float(tj.trips_covariance_exact(tj.shipped_joint(), TRIPS_PAYS))) > 0
