"""Every worked round of ../shared/examples judged by the engine alone, file by file, in order."""

from __future__ import annotations

from decimal import Decimal

import pytest

from game.evaluator import category_name
from game.progressive import Meters
from game.record import round_from_wire
from game.verdict import judge_round
from tests import examples

from .engine_rules import CONFIGS


@pytest.mark.parametrize("name,table,config", examples.EXAMPLE_FILES)
def test_every_worked_round_is_judged_as_expected(name, table, config):
    rules, pool = CONFIGS[config]
    # Each file's pool starts at the reseed amount (examples/README.md).
    meters = Meters(pool.reseed) if pool else None
    rounds = examples.load(name)
    assert rounds, f"no examples in {name}"
    for i, example in enumerate(rounds):
        where = examples.label(example, i)
        assert example["config"] == config, where
        assert example["record"]["table"] == table, where
        expect = example["expect"]

        verdict = judge_round(round_from_wire(example["record"]), rules, pool, meters)

        settled = examples.as_decimals({s.seat: s.settled for s in verdict.seats})
        assert settled == examples.as_decimals(expect["results"]), where
        assert {f.code for f in verdict.findings} == set(expect["codes"]), where
        assert verdict.status == examples.expected_status(example), where
        events = [(e.kind, e.seat, e.amount, e.meter) for e in verdict.events]
        if expect["meter"] is None:
            assert pool is None and events == [] and verdict.meters_after is None, where
        else:
            assert events == examples.expected_events(example), where
            assert verdict.meters_after.meter == Decimal(expect["meter"]), where
            meters = verdict.meters_after


@pytest.mark.parametrize("name,table,config", examples.EXAMPLE_FILES)
def test_every_worked_round_has_a_dealer_hand_unless_void(name, table, config):
    rules, pool = CONFIGS[config]
    for i, example in enumerate(examples.load(name)):
        where = examples.label(example, i)
        record = round_from_wire(example["record"])
        verdict = judge_round(record, rules, pool, Meters(Decimal(10000)))
        if example["record"].get("void"):
            assert verdict.dealer_hand is None and verdict.dealer_qualifies is None, where
            assert all(s.hand is None for s in verdict.seats), where
        else:
            qualifies = category_name(verdict.dealer_hand) != "high_card"
            assert verdict.dealer_qualifies == qualifies, where
            assert all(s.hand is not None for s in verdict.seats), where

