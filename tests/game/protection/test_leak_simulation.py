"""Simulated tables: honest players of every style are not flagged, informed ones are.

Every seat is scored as the service scores a posted round and the leak test
runs over the whole history as the nightly job runs it. The rates over many
seeds and 90-day histories are what ``bench/leak_test.py`` prints.
"""

from __future__ import annotations

import pytest

from game.protection import leak
from game.protection import players as pl
from game.protection.flop_table import shipped_table as shipped_flops
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from tests.game.engine_rules import SE_50KR

from .styles import basic_strategy

PAYS = PayTable.of(SE_50KR)
TABLE = shipped_table()
FLOPS = shipped_flops()
ROUNDS = 300
PEEKER_WITHIN = 150  # rounds, for a hole-carder who sees a card on every hand
PAIR_ROUNDS = 1800  # a pair sharing cards at the river is flagged later than a hole-carder (docs/PROTECTION.md)


def _honest(*names):
    styles = {
        "P-optimal": pl.OptimalPlayer, "P-basic": basic_strategy, "P-weak": pl.WeakPlayer,
        "P-calls": pl.CallingStation, "P-random": pl.RandomPlayer, "P-tight": pl.TightPlayer,
        "P-loose": pl.LoosePlayer,
    }
    return [styles[name](name, PAYS, TABLE, FLOPS) for name in names]


@pytest.fixture(scope="module")
def hole_carding_table():
    players = [
        *_honest("P-optimal", "P-basic", "P-weak", "P-calls"),
        pl.NoisyPlayer("P-noisy", PAYS, TABLE, FLOPS, noise=0.2),
        pl.CardReader("P-peeks", PAYS, TABLE, FLOPS, position=0),
    ]
    seats = pl.scored_seats(pl.deal_rounds(players, ROUNDS, seed=16), PAYS, TABLE, flops=FLOPS, rounds_a_day=30)
    return seats, leak.leak_traces(seats)


@pytest.mark.slow
def test_the_hole_carder_is_flagged_and_the_honest_players_are_not(hole_carding_table):
    _, traces = hole_carding_table
    flagged = {player for player, found in traces.items() if any(t.crossed for t in found)}
    assert flagged == {"P-peeks"}
    crossed = [t for t in traces["P-peeks"] if t.crossed]
    # He sees one of the dealer's cards, and shares no one's cards.
    assert {(t.test.code, t.test.knowledge) for t in crossed} == {(leak.HOLE_CARDING, "dealer_card")}
    first = next(t for t in crossed if t.test.dealer is None)
    round_number, _ = first.steps[first.crossed_at].key
    assert round_number < PEEKER_WITHIN


@pytest.mark.slow
def test_each_step_carries_its_evidence(hole_carding_table):
    _, traces = hole_carding_table
    trace = next(t for t in traces["P-peeks"] if t.crossed and t.test.dealer is None)
    assert {s.part for s in trace.steps} == set(leak.PARTS)
    for step in trace.steps:
        seen = step.decision.seen if step.part != leak.HAND else None
        if seen is not None:
            assert step.share == seen.share and step.agreed == sum(seen.informed) / 2
        assert 0 < step.share < 1
        assert step.chose_informed == (step.agreed > 0)
        assert step.informed_option == step.decision.chosen or not step.chose_informed


@pytest.mark.slow
def test_the_honest_players_choose_the_informed_option_as_often_as_chance_says(hole_carding_table):
    # The null of the test, seen in the data: over every honest step of each street, informed
    # choices less their expected number stay within a few standard deviations of zero.
    _, traces = hole_carding_table
    for player in ("P-optimal", "P-basic", "P-weak", "P-calls", "P-noisy"):
        trace = next(t for t in traces[player] if t.test.code == leak.HOLE_CARDING and t.test.dealer is None)
        for part in leak.PARTS:
            steps = [s for s in trace.steps if s.part == part]
            observed = sum(s.agreed for s in steps)
            expected = sum(s.share for s in steps)
            spread = sum(s.share * (1 - s.share) for s in steps) ** 0.5
            assert abs(observed - expected) < 4 * spread, (player, part)


@pytest.mark.slow
def test_a_colluding_pair_is_flagged_naming_the_partner_and_no_one_else():
    players = [
        *_honest("P-optimal", "P-basic", "P-calls", "P-random"),
        pl.Colluder("P-pair-a", PAYS, TABLE, partner="P-pair-b", flops=FLOPS),
        pl.Colluder("P-pair-b", PAYS, TABLE, partner="P-pair-a", flops=FLOPS),
    ]
    seats = pl.scored_seats(pl.deal_rounds(players, PAIR_ROUNDS, seed=8), PAYS, TABLE, flops=FLOPS, rounds_a_day=100)
    crossed = [t for t in leak.leak_suspicions(seats)]
    assert crossed
    assert {(t.test.code, t.test.player, t.test.companion) for t in crossed} <= {
        (leak.COLLUSION, "P-pair-a", "P-pair-b"), (leak.COLLUSION, "P-pair-b", "P-pair-a"),
    }
