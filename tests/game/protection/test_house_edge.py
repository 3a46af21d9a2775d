"""The project's own optimal strategy, played over seeded deals, returns the published house edge."""

from __future__ import annotations

import pytest

from game.protection import players as pl
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from tests.game.engine_rules import SE_50KR

HOUSE_EDGE = -0.02185  # Ante units, Ante + Blind + Play, optimal play (Wizard of Odds)


@pytest.mark.slow
def test_the_optimal_strategy_returns_the_house_edge_within_the_simulations_error():
    player = pl.OptimalPlayer("P-optimal", PayTable.of(SE_50KR), shipped_table())
    mean, se = pl.simulated_house_edge(player, hands=1500, seed=2185)
    assert 0 < se < 0.05
    assert abs(mean - HOUSE_EDGE) <= 3 * se, (mean, se)
