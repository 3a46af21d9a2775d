"""The shipped preflop table: every starting hand, recomputed on a sample, and the mathematics."""

from __future__ import annotations

import numpy as np
import pytest

from game.cards import parse_cards
from game.protection import preflop
from game.protection.values import PayTable
from tests.game.engine_rules import SE_50KR, US_30K

PAYS = PayTable.of(SE_50KR)
TABLE = preflop.shipped_table()
EXACT_VALUE = -0.0218497  # Ante units, optimal play, Ante + Blind + Play: a house edge of 2.18497 %


def test_the_table_holds_every_starting_hand_for_the_shipped_pay_table():
    assert set(TABLE.classes) == set(preflop.starting_hands())
    assert len(TABLE.classes) == 169
    assert sum(preflop.combinations_of(n) for n in TABLE.classes) == 1326
    assert TABLE.pays == PAYS == PayTable.of(US_30K)


def test_a_table_paying_the_blind_otherwise_has_no_preflop_values():
    other = PayTable(tuple(p * 2 for p in PAYS.blind), PAYS.qualifier)
    assert TABLE.values(parse_cards(["Ah", "Kd"]), other) is None
    assert TABLE.values(parse_cards(["Ah", "Kd"]), PAYS) == TABLE.classes["AKo"].values


@pytest.mark.parametrize("cards, name", [
    (["Ah", "Ad"], "AA"), (["Kd", "As"], "AKo"), (["2c", "7c"], "72s"), (["Th", "9d"], "T9o"),
])
def test_hole_cards_name_their_class(cards, name):
    assert preflop.starting_hand(parse_cards(cards)) == name
    assert preflop.starting_hand(preflop.representative(name)) == name


def test_canonical_flops_stand_for_every_flop_once():
    for name in ("AA", "AKs", "AKo"):
        flops = preflop.canonical_flops(preflop.representative(name))
        assert sum(weight for _, weight in flops) == 19_600  # C(50, 3)


def test_every_class_is_exact_and_optimal_play_gives_the_exact_house_edge():
    """Over all 1,326 hole pairs, the best option's mean is minus the house edge: 2.18497 % of the
    Ante, the figure an evaluator written apart from this code gives, to 1e-5."""
    assert all(c.method == "exact" and c.flops > 0 for c in TABLE.classes.values())
    weighted = [(preflop.combinations_of(n), c) for n, c in TABLE.classes.items()]
    best = sum(w * c.values[c.best] for w, c in weighted) / 1326
    assert best == pytest.approx(TABLE.optimal_value())
    assert abs(best - EXACT_VALUE) < 1e-5


# Wizard of Odds' optimal preflop strategy: 4x with any pair but deuces, any ace,
# a king with 5+ offsuit or any suited king, a queen with 8+ offsuit or 6+ suited,
# a jack with a ten offsuit or 8+ suited; check everything else.
MARGINAL = {
    "33": "preflop_4x", "22": "check",
    "A2o": "preflop_4x", "A2s": "preflop_4x",
    "K5o": "preflop_4x", "K4o": "check", "K2s": "preflop_4x",
    "Q8o": "preflop_4x", "Q7o": "check", "Q6s": "preflop_4x", "Q5s": "check",
    "JTo": "preflop_4x", "J9o": "check", "J8s": "preflop_4x", "J7s": "check",
    "T9s": "check", "T9o": "check",
}


@pytest.mark.parametrize("name, best", sorted(MARGINAL.items()))
def test_the_marginal_hands_agree_with_the_published_strategy(name, best):
    assert TABLE.classes[name].best == best


def _published_raises(name: str) -> bool:
    """The published rule, from the comment above: 4x or check for any starting hand."""
    ranks = "23456789TJQKA"
    high, low = ranks.index(name[0]), ranks.index(name[1])
    suited = name.endswith("s")
    if high == low:
        return high >= ranks.index("3")
    lowest = {"A": "2", "K": "2" if suited else "5", "Q": "6" if suited else "8", "J": "8" if suited else "T"}
    return name[0] in lowest and low >= ranks.index(lowest[name[0]])


def test_every_starting_hand_agrees_with_the_published_strategy():
    wrong = [name for name, c in TABLE.classes.items() if (c.best == "preflop_4x") != _published_raises(name)]
    assert wrong == []
    raised = sum(preflop.combinations_of(n) for n, c in TABLE.classes.items() if c.best == "preflop_4x")
    assert raised == 500  # 37.707 % of the 1,326 hole pairs


def test_three_x_is_never_the_best_preflop_option():
    assert all(c.best != "preflop_3x" for c in TABLE.classes.values())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["AA", "KTo", "Q6s", "72o"])
def test_a_fresh_computation_on_other_flops_agrees_within_the_stated_error(name):
    fresh = preflop.compute_class(name, PAYS, flops=48, seed=7)
    shipped = TABLE.classes[name]
    spread = np.hypot(fresh.se_4x_minus_check, shipped.se_4x_minus_check)
    got = fresh.values["preflop_4x"] - fresh.values["check"]
    want = shipped.values["preflop_4x"] - shipped.values["check"]
    assert abs(got - want) <= 4 * spread
