"""The leak test's e-value: its expectation is one under honest play whatever the player does, it
rises for a player who chooses the informed option, and its budget is divided as documented, by
no rule that depends on how names sort."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from game.protection import leak
from game.protection.scoring import DecisionScore, Informed, SeatScore
from game.protection.seen import SeenVerdict

SETTINGS = leak.LeakSettings()


def river(
    chosen: str, informed_best: str, bet_share: float, seen: SeenVerdict | None = None, companions=("P-2",),
) -> DecisionScore:
    """A river decision with each companion's knowledge and a dealer card's verdict."""
    shares = {"river_1x": bet_share, "fold": 1 - bet_share}
    told = Informed({"river_1x": 0.0, "fold": -2.0}, informed_best, shares)
    return DecisionScore("river", chosen, {"river_1x": -2.1, "fold": -2.0},
                         {f"companion:{c}": told for c in companions}, seen=seen)


def test_one_step_factor_has_expectation_one_under_honest_play():
    for share, f in itertools.product((0.02, 0.3, 0.5, 0.97), SETTINGS.shares):
        up, down = 1 - f + f / share, 1 - f
        assert share * up + (1 - share) * down == pytest.approx(1)


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
            e.add(day, x / q)
        mean += chance * math.exp(e.figure)
    assert mean == pytest.approx(1.0)


def test_the_evalue_fails_its_mean_when_the_chance_is_wrong():
    # The check above can fail: an honest chance misstated (0.2 said, 0.4 true) breaks it.
    mean = 0.0
    for outcome in itertools.product((True, False), repeat=3):
        chance, e = 1.0, leak.EValue(SETTINGS.shares)
        for x in outcome:
            chance *= 0.4 if x else 0.6
            e.add(1, x / 0.2)
        mean += chance * math.exp(e.figure)
    assert mean > 1.2


def _verdicts(agrees: list[bool]) -> list[tuple[float, SeenVerdict]]:
    """Every way the dealer's two cards can lie among the unseen cards, each equally likely, as a verdict."""
    n = len(agrees)
    share = sum(agrees) / n
    return [
        (1 / (n * (n - 1)), SeenVerdict((agrees[a], agrees[b]), share))
        for a, b in itertools.permutations(range(n), 2)
    ]


def test_either_dealer_card_s_ratio_has_expectation_one_over_every_deal_of_the_two():
    # The two cards drawn without replacement from the unseen cards, in either order: the average
    # of their two ratios has mean one, whatever share of the cards agrees with the choice.
    for agrees in ([True, False, False], [True, True, False, False, False], [False] * 6 + [True] * 3):
        assert sum(p * v.ratio() for p, v in _verdicts(agrees)) == pytest.approx(1.0)


def test_either_dealer_card_s_ratio_fails_its_mean_when_the_share_is_misstated():
    agrees = [True, True, False, False, False]
    wrong = [(p, SeenVerdict(v.informed, 0.2)) for p, v in _verdicts(agrees)]  # 0.4 agree, 0.2 said
    assert sum(p * v.ratio() for p, v in wrong) == pytest.approx(2.0)


def _seats(player, decisions, dealer="D-1", companions=(), day_every=20):
    return [
        leak.PlayedSeat((n, player), player, dealer, companions, SeatScore((d,), True, d.seen), n // day_every)
        for n, d in enumerate(decisions)
    ]


def _hole_carding(trace_list):
    return next(t for t in trace_list if t.test.code == leak.HOLE_CARDING and t.test.dealer is None)


def test_a_player_who_chooses_as_one_dealer_card_says_crosses_whichever_card_and_an_honest_one_does_not():
    rng = random.Random(7)
    honest, first, second = [], [], []
    for _ in range(400):
        q = rng.uniform(0.2, 0.8)
        cards = (rng.random() < q, rng.random() < q)  # whether each card makes a call best
        call = SeenVerdict(cards, q)
        fold = SeenVerdict((not cards[0], not cards[1]), 1 - q)
        honest.append(river("river_1x", "fold", 0.5, call))  # always calls: agrees as the cards fall
        first.append(river("river_1x", "fold", 0.5, call) if cards[0] else river("fold", "fold", 0.5, fold))
        second.append(river("river_1x", "fold", 0.5, call) if cards[1] else river("fold", "fold", 0.5, fold))
    assert not leak.leak_suspicions(_seats("P-honest", honest), SETTINGS)
    crossed = {}
    for name, decisions in (("P-first", first), ("P-second", second)):
        trace = _hole_carding(leak.leak_traces(_seats(name, decisions))[name])
        assert trace.crossed and trace.test.knowledge == "dealer_card"
        assert trace.steps[trace.crossed_at].figure >= trace.threshold > trace.steps[trace.crossed_at - 1].figure
        assert trace.informed > trace.expected + 60
        assert {s.part for s in trace.steps} == {"river", "hand"}
        crossed[name] = trace.crossed_at
    assert max(crossed.values()) < 80


def test_a_hole_carding_trace_is_the_mean_of_its_parts():
    verdicts = [SeenVerdict((True, False), 0.25)] * 5
    seats = _seats("P-1", [river("river_1x", "fold", 0.5, v) for v in verdicts], day_every=100)
    trace = _hole_carding(leak.leak_traces(seats)["P-1"])
    one = leak.EValue(SETTINGS.shares)
    for _ in verdicts:
        one.add(0, 2.0)  # (1 + 0) / (2 · 0.25)
    # The river and the hand each saw the five steps; preflop and flop none (e-value one each).
    assert trace.parts["river"] == (5, pytest.approx(one.figure)) == trace.parts["hand"]
    assert trace.figure == pytest.approx(math.log((2 * math.exp(one.figure) + 2) / 4))


def test_decisions_every_card_or_none_would_make_best_are_not_read():
    certain = [river("river_1x", "river_1x", 1.0, SeenVerdict((True, True), 1.0)),
               river("fold", "fold", 0.0, SeenVerdict((False, False), 0.0))] * 50
    traces = leak.leak_traces(_seats("P-1", certain, companions=("P-2",)))["P-1"]
    assert all(t.steps == () and t.figure == 0.0 for t in traces)


def _history(names: dict[str, str]):
    """Thirty seats; the dealers rotate, companions come two by two, some met in the same round."""
    seats = []
    for n in range(30):
        companions = (names[f"P-{n % 7 + 2}"], names[f"P-{(n + 3) % 7 + 2}"])
        seats += [leak.PlayedSeat(
            (n, "P-1"), names["P-1"], names[f"D-{n % 5}"], companions,
            SeatScore((river("fold", "river_1x" if n % 3 else "fold", 0.4, SeenVerdict((n % 2 == 0, False), 0.5),
                             companions),), True), n // 10,
            # The first companion's steps about P-1's cards, on the river and the flop.
            {companions[0]: ((n % 4 == 0, 0.3, "river"), (n % 5 == 0, 0.4, "flop"))},
        )]
    return seats


def test_the_budget_is_divided_among_the_tests_and_sums_to_alpha_at_most():
    same = {name: name for name in ["P-1", *(f"P-{n}" for n in range(2, 9)), *(f"D-{n}" for n in range(5))]}
    tests = [t for t, _ in leak.player_tests("P-1", _history(same))[0]]
    assert sum(t.weight for t in tests) < 1  # the places not yet met keep the rest
    overall = [t for t in tests if t.code == leak.HOLE_CARDING and t.dealer is None]
    assert [t.weight for t in overall] == pytest.approx([1 / 3])
    assert overall[0].threshold(SETTINGS) == pytest.approx(math.log(3 / SETTINGS.alpha))
    by_dealer = {t.dealer: t.weight for t in tests if t.dealer}
    assert by_dealer["D-0"] == pytest.approx(1 / 3 / 2) and by_dealer["D-1"] == pytest.approx(1 / 3 / 6)
    companions = {t.companion: t.weight for t in tests if t.code == leak.COLLUSION}
    # P-2 and P-5 were met in the first round together: they share its place equally.
    assert companions["P-2"] == companions["P-5"] == pytest.approx(1 / 3 / 2 / 2)


def test_renaming_every_player_and_dealer_changes_no_verdict_and_no_threshold():
    names = ["P-1", *(f"P-{n}" for n in range(2, 9)), *(f"D-{n}" for n in range(5))]
    same = {name: name for name in names}
    shuffled = list(names)
    random.Random(3).shuffle(shuffled)
    renamed = {name: f"Z{other[::-1]}" for name, other in zip(names, shuffled)}  # sorts every other way
    before = leak.leak_traces(_history(same), SETTINGS)["P-1"]
    after = leak.leak_traces(_history(renamed), SETTINGS)[renamed["P-1"]]

    def described(traces, of):
        back = {v: k for k, v in of.items()}
        return sorted(
            (t.test.code, back.get(t.test.dealer or "", ""), back.get(t.test.companion or "", ""),
             round(t.threshold, 9), round(t.figure, 9), t.crossed_at, tuple(sorted(t.parts.items())))
            for t in traces
        )
    assert described(before, same) == described(after, renamed)
    assert any(t.parts.get(leak.PAIR, (0, 0))[0] for t in before)  # the pair's part is read too


def _described(traces):
    return sorted(
        (leak.key_of(t.test), t.test.weight, t.threshold, t.figure, t.peak, t.step_count, t.informed, t.expected,
         t.crossing, t.first_day, tuple(sorted(t.parts.items())),
         (t.state.partner_steps, t.state.partner_informed, t.state.partner_expected))
        for t in traces
    )


@pytest.mark.parametrize("cuts", [(1,), (1, 2), (2,)])
def test_going_on_from_where_the_tests_stood_gives_exactly_what_the_whole_history_gives(cuts):
    # The nightly reads one day and goes on from the state the night before left: every figure,
    # peak, count, crossing and weight (companions first met in a later part too) comes out equal
    # to the last float with reading the whole history at once.
    rng, theirs = random.Random(11), random.Random(12)
    seats = []
    for n in range(90):
        q = rng.uniform(0.2, 0.8)
        cards = (rng.random() < q, rng.random() < q)
        cheat = cards[0] if n % 4 else rng.random() < q
        verdict = SeenVerdict(cards, q) if cheat else SeenVerdict((not cards[0], not cards[1]), 1 - q)
        companions = (f"P-{n % 9 + 2}", f"P-{n // 30 + 20}")
        seats.append(leak.PlayedSeat(
            (n, "P-1"), "P-1", f"D-{n % 4}", companions,
            SeatScore((river("river_1x" if cheat else "fold", "fold", 0.5, verdict, companions),), True, verdict),
            n // 30, {companions[1]: ((theirs.random() < 0.6, 0.5, "river"),)} if n % 3 else {},
        ))
    whole, _ = leak.player_run("P-1", seats, SETTINGS)
    assert any(t.crossed for t in whole)  # the check can see a crossing carried
    state, traces = None, []
    for part in itertools.pairwise((0, *cuts, 3)):
        day_seats = [s for s in seats if part[0] <= s.day < part[1]]
        traces, after = leak.player_run("P-1", day_seats, SETTINGS, state)
        if state is not None:
            after.tests = {**state.tests, **after.tests}
        state = after
    by_key = {leak.key_of(t.test): t for t in traces}
    assert _described(whole) == _described(
        [by_key.get(leak.key_of(t.test)) or _carried(t.test, state) for t in whole])


def _carried(test, state):
    return leak.Trace(test, test.threshold(SETTINGS), (), state.tests[leak.key_of(test)])


def test_a_state_given_is_not_changed_by_the_run_that_goes_on_from_it():
    seats = _seats("P-1", [river("river_1x", "fold", 0.5, SeenVerdict((True, False), 0.25))] * 10)
    _, state = leak.player_run("P-1", seats[:5], SETTINGS)
    before = _described([leak.Trace(t, 0.0, (), s) for t, s in _tests_of(state)])
    leak.player_run("P-1", seats[5:], SETTINGS, state)
    assert _described([leak.Trace(t, 0.0, (), s) for t, s in _tests_of(state)]) == before


def _tests_of(state):
    return [(leak.LeakTest(code, "P-1", "x", s.weight, dealer or None, companion or None), s)
            for (code, dealer, companion), s in state.tests.items()]


def test_a_round_in_which_he_held_two_seats_gives_no_steps():
    seats = _seats("P-1", [river("river_1x", "river_1x", 0.5, SeenVerdict((True, False), 0.5))] * 10,
                   companions=("P-1",))
    assert all(not t.steps for t in leak.leak_traces(seats)["P-1"])


@pytest.mark.parametrize("given", [dict(alpha=0), dict(alpha=1.5), dict(shares=()), dict(shares=(0.5, 1.0))])
def test_settings_out_of_range_are_refused(given):
    with pytest.raises(ValueError):
        leak.LeakSettings(**given)
