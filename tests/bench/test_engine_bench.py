"""The benchmark's own checks (bench/engine.py), run small so its comparison code cannot rot.

Nothing here is timed: speed is reported by ``python -m bench.engine``, never asserted.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from bench import treys_settlement
from bench.dealing import VARIANTS, deal_hands, deal_rounds
from bench.engine import Disagreement, check_agreement, check_evaluators
from game.evaluator import CATEGORY_INDEX

ROUNDS = 200


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_engine_settles_every_dealt_round_as_the_treys_settlement_does(variant):
    assert check_agreement(variant, deal_rounds(variant, ROUNDS, seed=11)) == ROUNDS


def test_the_agreement_check_catches_a_different_settlement():
    # Trips paying 4 to 1 on three of a kind instead of 3: some dealt seat will show it.
    variant = VARIANTS[0]
    trips_pays = {**variant.rules.trips_pays, CATEGORY_INDEX["three_of_a_kind"]: Decimal(4)}
    generous = replace(variant, rules=replace(variant.rules, trips_pays=trips_pays))
    with pytest.raises(Disagreement, match="trips"):
        check_agreement(generous, deal_rounds(variant, ROUNDS, seed=11))


def test_the_agreement_check_catches_a_wrong_payout_report():
    variant = VARIANTS[0]
    wires = deal_rounds(variant, 5, seed=11)
    wires[3]["seats"][0]["paid"]["ante"] = "12345"
    with pytest.raises(Disagreement, match="status"):
        check_agreement(variant, wires)


def test_the_four_evaluators_agree_on_dealt_hands():
    check_evaluators(deal_hands(2_000, seed=11))


@pytest.mark.parametrize("ranker", ["phevaluator", "eval7"])
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_plain_settlement_says_the_same_with_every_evaluator(variant, ranker):
    """The yardstick with phevaluator or eval7 ranking the hands settles as it does with treys."""
    other = treys_settlement.RANKERS[ranker]
    table = treys_settlement.TABLES[variant.name]
    meter = Decimal("10000.00") if table.pool else None
    for wire in deal_rounds(variant, ROUNDS, seed=13):
        if wire["void"]:
            continue
        expected = treys_settlement.settle(treys_settlement.round_from_wire(wire), table, meter)
        got = treys_settlement.settle(treys_settlement.round_from_wire(wire, other), table, meter, other)
        assert (got.dealer_category, got.categories, got.results, got.meter) == (
            expected.dealer_category, expected.categories, expected.results, expected.meter)


def test_phevaluators_categories_are_treys_for_every_rank():
    phe = treys_settlement.RANKERS["phevaluator"]
    assert all(phe.category(rank) == treys_settlement.category(rank) for rank in range(1, 7463))
