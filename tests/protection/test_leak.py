"""The leak test's e-value: its expectation is one under honest play whatever the player does, it
rises for a player who chooses the informed option, and its budget is divided as documented."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from game.protection import leak
from game.protection.scoring import DecisionScore, Informed, SeatScore

SETTINGS = leak.LeakSettings()


def river(chosen: str, informed_best: str, bet_share: float) -> DecisionScore:
    shares = {"river_1x": bet_share, "fold": 1 - bet_share}
    told = Informed({"river_1x": 0.0, "fold": -2.0}, informed_best, shares)
    return DecisionScore("river", chosen, {"river_1x": -2.1, "fold": -2.0},
                         {"dealer_first": told, "dealer_second": told})


def test_one_step_factor_has_expectation_one_under_honest_play():
    for share, f in itertools.product((0.02, 0.3, 0.5, 0.97), SETTINGS.shares):
        up = (share + f * (1 - share)) / share
        assert share * up + (1 - share) * (1 - f) == pytest.approx(1)


def test_the_evalue_is_exactly_a_martingale_over_every_honest_outcome():
    # Three steps over two days, the honest chance of each outcome weighted exactly: the mean
    # e-value is 1 (Ville's inequality rests on it), whatever the shares.
    shares = (0.2, 0.7, 0.45)
    days = (1, 1, 2)
    mean = 0.0
    for outcome in itertools.product((True, False), repeat=3):
        chance, e = 1.0, leak.EValue(SETTINGS.shares)
        for x, q, day in zip(outcome, shares, days):
            chance *= q if x else 1 - q
            e.add(day, q, x)
        mean += chance * math.exp(e.figure)
    assert mean == pytest.approx(1.0)


def test_the_evalue_fails_its_mean_when_the_chance_is_wrong():
    # The check above can fail: an honest chance misstated (0.2 said, 0.4 true) breaks it.
    mean = 0.0
    for outcome in itertools.product((True, False), repeat=3):
        chance, e = 1.0, leak.EValue(SETTINGS.shares)
        for x in outcome:
            chance *= 0.4 if x else 0.6
            e.add(1, 0.2, x)
        mean += chance * math.exp(e.figure)
    assert mean > 1.2


def _seats(player, decisions, dealer="D-1", companions=(), day_every=20):
    return [
        leak.PlayedSeat((n, player), player, dealer, companions, SeatScore((d,), True), n // day_every)
        for n, d in enumerate(decisions)
    ]


def test_a_player_who_always_takes_the_informed_option_crosses_and_an_honest_one_does_not():
    rng = random.Random(7)
    honest, cheat = [], []
    for _ in range(400):
        q = rng.uniform(0.2, 0.8)
        best = "river_1x" if rng.random() < q else "fold"  # the card he could not see, drawn
        honest.append(river("river_1x", best, q))  # always calls: informed exactly when the card says bet
        cheat.append(river(best, best, q if best == "river_1x" else q))
    assert not leak.leak_suspicions(_seats("P-honest", honest), SETTINGS)
    crossed = leak.leak_suspicions(_seats("P-cheat", cheat), SETTINGS)
    assert {(t.test.code, t.test.knowledge, t.test.dealer) for t in crossed} >= {
        (leak.HOLE_CARDING, "dealer_first", None), (leak.HOLE_CARDING, "dealer_second", None),
    }
    first = next(t for t in crossed if t.test.knowledge == "dealer_first" and t.test.dealer is None)
    assert first.crossed_at < 60
    assert first.steps[first.crossed_at].figure >= first.threshold > first.steps[first.crossed_at - 1].figure
    assert first.informed == len(first.steps) == sum(s.chose_informed for s in first.steps)
    assert first.expected == pytest.approx(sum(s.share for s in first.steps)) and first.expected < first.informed


def test_decisions_every_card_or_none_would_make_best_are_not_read():
    certain = [river("river_1x", "river_1x", 1.0), river("fold", "fold", 0.0)] * 50
    trace = leak.leak_traces(_seats("P-1", certain))["P-1"][0]
    assert trace.steps == () and trace.figure == 0.0


def test_the_budget_is_divided_among_the_tests_and_sums_to_alpha_at_most():
    seats = []
    for n in range(30):
        seats += _seats("P-1", [river("fold", "fold", 0.5)], dealer=f"D-{n % 5}", companions=(f"P-{n % 7 + 2}",))
    tests = [t for t, _ in leak.player_tests("P-1", seats)]
    assert sum(t.weight for t in tests) < 1
    overall = [t for t in tests if t.code == leak.HOLE_CARDING and t.dealer is None]
    assert [t.weight for t in overall] == pytest.approx([1 / 6, 1 / 6])
    per_dealer = [t.weight for t in tests if t.dealer == "D-0"]
    assert per_dealer == pytest.approx([1 / 6 / 2, 1 / 6 / 2])  # the first dealer met: 1/(1·2) of half
    companions = [t for t in tests if t.code == leak.COLLUSION]
    assert [t.companion for t in companions] == [f"P-{n}" for n in range(2, 9)]
    assert companions[1].weight == pytest.approx(1 / 3 / 6)
    assert overall[0].threshold(SETTINGS) == pytest.approx(math.log(6 / SETTINGS.alpha))


def test_a_round_in_which_he_held_two_seats_gives_no_steps():
    seats = _seats("P-1", [river("river_1x", "river_1x", 0.5)] * 10, companions=("P-1",))
    assert all(not t.steps for t in leak.leak_traces(seats)["P-1"])


@pytest.mark.parametrize("given", [dict(alpha=0), dict(alpha=1.5), dict(shares=()), dict(shares=(0.5, 1.0))])
def test_settings_out_of_range_are_refused(given):
    with pytest.raises(ValueError):
        leak.LeakSettings(**given)
