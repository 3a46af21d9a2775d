"""Simulated tables: an informed player is flagged within a stated number of hands, honest ones not.

One table seats an optimal-strategy player, a weak player and a hole-carder
who sees the dealer's first card on half his hands; every seat is scored as
the service scores a posted round. The false-positive rate over many seeds
is what ``bench/leak_test.py`` prints.
"""

from __future__ import annotations

import pytest

from rounds.protection import leak
from rounds.protection import players as pl
from rounds.protection.codes import ProtectionCode
from rounds.protection.preflop import shipped_table
from rounds.protection.values import PayTable
from tests.rounds.engine_rules import SE_50KR

PAYS = PayTable.of(SE_50KR)
TABLE = shipped_table()
HOLE_CARDER_WITHIN = 150  # rounds, for a hole-carder who sees a card on half his hands
COLLUDER_WITHIN = 300  # rounds, for a player who knows the four other seats' cards on the river


@pytest.fixture(scope="module")
def hole_carding_table():
    players = [
        pl.OptimalPlayer("P-optimal", PAYS, TABLE),
        pl.WeakPlayer("P-weak", PAYS, TABLE),
        pl.HoleCarder("P-peeks", PAYS, TABLE, share=0.5, position=0),
    ]
    seats = pl.scored_seats(pl.deal_rounds(players, HOLE_CARDER_WITHIN, seed=16), PAYS, TABLE)
    return seats, leak.leak_suspicions(seats)


@pytest.mark.slow
def test_the_hole_carder_is_flagged_and_the_honest_players_are_not(hole_carding_table):
    _, found = hole_carding_table
    flagged = {(s.code, s.player) for s in found}
    assert (ProtectionCode.SUSPECTED_HOLE_CARDING.value, "P-peeks") in flagged
    assert {player for _, player in flagged} == {"P-peeks"}
    first = next(s for s in found if s.player == "P-peeks" and s.knowledge == "dealer_first" and not s.dealer)
    round_number, _ = first.trace.steps[first.trace.crossed_at].key
    assert round_number < HOLE_CARDER_WITHIN


@pytest.mark.slow
def test_each_suspicion_carries_its_evidence(hole_carding_table):
    _, found = hole_carding_table
    suspicion = next(s for s in found if s.player == "P-peeks" and s.dealer == "D-1")
    trace = suspicion.trace
    assert trace.peak >= leak.LeakSettings().threshold
    for step in trace.steps:
        decision = step.decision
        assert decision.telling(step.knowledge)
        informed = decision.informed[step.knowledge]
        assert informed.best == step.informed_option != decision.best
        assert step.chose_informed == (decision.chosen == informed.best)
        assert 0 < step.error_rate < 0.5
    # The figure is the running CUSUM of the steps' log-likelihood ratios.
    figure = 0.0
    for step in trace.steps:
        figure = max(0.0, figure + step.llr)
        assert step.figure == pytest.approx(figure)


@pytest.mark.slow
def test_the_honest_players_choices_show_no_drift_towards_the_dealers_cards(hole_carding_table):
    seats, _ = hole_carding_table
    for name in ("P-optimal", "P-weak"):
        played = [s for s in seats if s.player == name]
        model = leak.ErrorModel()
        for seat in played:
            for decision in seat.score.decisions:
                model.add(decision)
        for knowledge in ("dealer_first", "dealer_second"):
            trace = leak.run_test(((s.key, d) for s in played for d in s.score.decisions), knowledge, model)
            assert trace.crossed_at is None
            assert trace.peak < leak.LeakSettings().threshold


@pytest.mark.slow
def test_a_player_who_knows_the_other_seats_cards_is_flagged_for_collusion():
    players = [
        pl.OptimalPlayer("P-a", PAYS, TABLE),
        pl.Colluder("P-knows", PAYS, TABLE),
        pl.OptimalPlayer("P-b", PAYS, TABLE),
        pl.WeakPlayer("P-c", PAYS, TABLE),
        pl.WeakPlayer("P-d", PAYS, TABLE),
    ]
    seats = pl.scored_seats(pl.deal_rounds(players, COLLUDER_WITHIN, seed=8), PAYS, TABLE)
    found = leak.leak_suspicions(seats)
    assert {s.player for s in found} == {"P-knows"}
    collusion = {s.companion for s in found if s.code == ProtectionCode.SUSPECTED_COLLUSION.value}
    # The knowledge is every other seat's cards: he sat with each of them.
    assert collusion == {"P-a", "P-b", "P-c", "P-d"}


def test_a_player_who_always_takes_the_informed_option_crosses_after_few_telling_decisions():
    """The test's arithmetic on hand-made decisions: no cards dealt."""
    from rounds.protection.scoring import DecisionScore, Informed

    def telling(chosen: str) -> DecisionScore:
        return DecisionScore(
            "river", chosen, {"river_1x": 0.3, "fold": -2.0},
            {"dealer_first": Informed({"river_1x": -2.6, "fold": -2.0}, "fold")},
        )

    settings = leak.LeakSettings()
    model = leak.ErrorModel(settings)
    cheat = leak.run_test(((i, telling("fold")) for i in range(10)), "dealer_first", model, settings)
    assert cheat.crossed_at is not None and cheat.crossed_at >= settings.min_telling - 1
    honest = leak.run_test(((i, telling("river_1x")) for i in range(10)), "dealer_first", model, settings)
    assert honest.crossed_at is None and honest.figure == 0
