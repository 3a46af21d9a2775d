"""The pair's part of a companion's test: the hands two players shared, each one's choices about the
other's cards read as one product. Its expectation is one while neither sees the other's cards (the
later side's chance may depend on the earlier side's choice), it fails that when a chance is
misstated, it finds a pair sooner than one side alone, and it is looked at only once a hand is read."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest

from game.protection import leak
from game.protection.scoring import DecisionScore, Informed, SeatScore

SETTINGS = leak.LeakSettings()
TEST = leak.LeakTest(leak.COLLUSION, "P-1", "companion:P-2", 1 / 3, companion="P-2")


def river(chosen: str, bet_share: float | None, informed_best: str = "river_1x") -> DecisionScore:
    """P-1's river decision with P-2's cards' verdict (``bet_share`` the chance they make the bet best)."""
    shares = None if bet_share is None else {"river_1x": bet_share, "fold": 1 - bet_share}
    told = Informed({"river_1x": 0.0, "fold": -2.0}, informed_best, shares)
    return DecisionScore("river", chosen, {"river_1x": -2.1, "fold": -2.0}, {"companion:P-2": told})


def seat(n: int, mine: tuple[bool, float] | None, theirs: tuple[tuple[bool, float], ...] = (), day: int = 0):
    """A hand of P-1 with P-2: his own step (chose informed, q) if any, and P-2's steps about his cards."""
    decision = river("fold", None) if mine is None else river(
        "river_1x" if mine[0] else "fold", mine[1])
    return leak.PlayedSeat((n, "P-1"), "P-1", "D-1", ("P-2",), SeatScore((decision,), True), day,
                           {"P-2": tuple((*step, "river") for step in theirs)} if theirs else {})


def _mean_evalue(hands: list[tuple[tuple[float, float] | None, tuple[float, float] | None]]) -> float:
    """The e-value's mean over every outcome of ``hands``, each side's step (q said, q true) chosen
    informed with its true chance: exactly, by enumeration."""
    sides = [(h, s) for h, hand in enumerate(hands) for s, step in enumerate(hand) if step is not None]
    mean = 0.0
    for outcome in itertools.product((True, False), repeat=len(sides)):
        chance, chose = 1.0, dict(zip(sides, outcome))
        for (h, s), x in chose.items():
            true = hands[h][s][1]
            chance *= true if x else 1 - true
        seats = []
        for h, (mine, theirs) in enumerate(hands):
            seats.append(seat(
                h, None if mine is None else (chose[h, 0], mine[0]),
                () if theirs is None else ((chose[h, 1], theirs[0]),), day=h // 2))
        mean += chance * math.exp(leak.companion_test(seats, TEST, SETTINGS).figure)
    return mean


def test_the_test_is_exactly_a_martingale_over_every_honest_outcome_of_both_sides():
    # Hands with both sides' steps, with one side's only, over two days: each chance told truly.
    hands = [((0.3, 0.3), (0.6, 0.6)), ((0.5, 0.5), None), (None, (0.2, 0.2)), ((0.8, 0.8), (0.45, 0.45))]
    assert _mean_evalue(hands) == pytest.approx(1.0)


def test_the_later_side_s_chance_may_depend_on_the_earlier_side_s_choice():
    # The player decides first; the companion, having seen his chips, has a chance of 0.3 or 0.7 by
    # what he chose, told truly: the product over the hand still has expectation one.
    mean = 0.0
    for a, b in itertools.product((True, False), repeat=2):
        q_b = 0.3 if a else 0.7
        chance = (0.4 if a else 0.6) * (q_b if b else 1 - q_b)
        figure = leak.companion_test([seat(0, (a, 0.4), ((b, q_b),))], TEST, SETTINGS).figure
        mean += chance * math.exp(figure)
    assert mean == pytest.approx(1.0)


def test_the_check_fails_when_the_companion_s_chance_is_misstated():
    # The companion chooses as the player's cards say twice as often as his chance was told.
    hands = [((0.3, 0.3), (0.2, 0.4)), ((0.5, 0.5), (0.2, 0.4)), (None, (0.2, 0.4))]
    assert _mean_evalue(hands) > 1.1


def _cheat(rng: random.Random, q: float, informed: bool) -> tuple[bool, float]:
    return (rng.random() < (1.0 if informed else q)), q


def _crossing_hand(both: bool, seed: int) -> int | None:
    """The hand at which P-1's test with P-2 crosses when both read the other's cards (or P-1 alone)."""
    rng = random.Random(seed)
    seats = []
    for n in range(2000):
        q1, q2 = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8)
        cheating = rng.random() < 0.25
        mine = _cheat(rng, q1, cheating)
        theirs = (_cheat(rng, q2, cheating),) if both else ()
        seats.append(seat(n, mine, theirs, day=n // 20))
    trace = leak.companion_test(seats, TEST, SETTINGS)
    return trace.steps[trace.crossed_at].key[0] if trace.crossed else None


def test_a_pair_who_both_read_the_other_s_cards_is_found_sooner_than_one_side_alone():
    # Over twenty seeds: the same player's choices, with and without the companion's about his cards.
    alone = [_crossing_hand(False, seed) for seed in range(20)]
    both = [_crossing_hand(True, seed) for seed in range(20)]
    assert None not in alone and None not in both
    assert sum(b < a for a, b in zip(alone, both)) >= 15
    assert statistics.median(both) < 0.85 * statistics.median(alone)


def test_an_honest_player_whose_companion_reads_his_cards_is_named_with_him_by_the_pair_s_part():
    # One-sided: P-2 sees P-1's cards and uses them; P-1 chooses as chance says. P-1's test crosses on
    # the pair's part, and says what each of the two chose.
    rng = random.Random(3)
    seats = [seat(n, _cheat(rng, 0.5, False), (_cheat(rng, 0.5, True),), day=n // 20) for n in range(400)]
    trace = leak.companion_test(seats, TEST, SETTINGS)
    assert trace.crossed
    (own_steps, own_figure), (pair_steps, pair_figure) = trace.parts[leak.OWN], trace.parts[leak.PAIR]
    assert own_steps == pair_steps == 400 and pair_figure > own_figure
    assert trace.state.partner_steps == 400 and trace.state.partner_informed == 400
    assert trace.state.partner_expected == pytest.approx(200)
    assert abs(trace.informed - 200) < 4 * 10  # P-1's own choices: chance


def test_the_figure_is_looked_at_when_the_hand_is_read_not_between_the_two_sides():
    rng = random.Random(5)
    seats = [seat(n, _cheat(rng, 0.4, True), (_cheat(rng, 0.4, True),)) for n in range(60)]
    trace = leak.companion_test(seats, TEST, SETTINGS)
    mine_only = leak.companion_test([seat(n, _own(s)) for n, s in enumerate(seats)],
                                    TEST, SETTINGS)
    assert trace.crossed and [s.figure for s in trace.steps] != [s.figure for s in mine_only.steps]
    # A step's figure is the hand's at its end, the companion's choices read too.
    for step, n in zip(trace.steps, range(60)):
        first = leak.companion_test(seats[:n + 1], TEST, SETTINGS)
        assert step.figure == first.figure


def _own(played: leak.PlayedSeat) -> tuple[bool, float]:
    decision = played.score.decisions[0]
    return decision.chosen == "river_1x", decision.informed["companion:P-2"].shares[decision.chosen]


def test_a_test_may_cross_on_a_hand_where_only_the_companion_chose():
    rng = random.Random(9)
    seats = [seat(n, None, (_cheat(rng, 0.5, True),)) for n in range(200)]
    trace = leak.companion_test(seats, TEST, SETTINGS)
    assert trace.crossed and trace.steps == () and trace.crossed_at is None
    assert trace.crossing.step == 0 and trace.crossing.key[0] > 0
    assert trace.parts[leak.PAIR][0] == 200 and trace.parts[leak.OWN] == (0, 0.0)


def test_a_hand_with_no_step_on_either_side_is_not_read():
    seats = [seat(0, None), seat(1, (True, 1.0)), seat(2, None)]  # no step; one with q of 1; none again
    trace = leak.companion_test(seats, TEST, SETTINGS)
    assert trace.steps == () and trace.figure == 0.0 and trace.parts[leak.PAIR] == (0, 0.0)
    assert trace.state.first_day is None


def _score(bet_share: float, names) -> SeatScore:
    shares = {"river_1x": bet_share, "fold": 1 - bet_share}
    told = Informed({"river_1x": 0.0, "fold": -2.0}, "river_1x", shares)
    return SeatScore((DecisionScore("river", "river_1x", {"river_1x": -2.1, "fold": -2.0},
                                    {f"companion:{c}": told for c in names}),), True)


def test_each_seat_gets_its_companions_steps_about_its_cards_and_a_player_on_two_seats_gives_none():
    players = {1: "A", 2: "B", 3: "C", 4: "C", 5: ""}
    scores = {1: _score(0.3, ["B", "C"]), 2: _score(0.6, ["A", "C"]), 3: _score(0.5, ["A", "B"]),
              4: _score(0.5, ["A", "B"]), 5: _score(0.5, ["A", "B"])}
    found = leak.partner_steps(scores, players)
    assert found == {1: {"B": ((True, 0.6, "river"),)}, 2: {"A": ((True, 0.3, "river"),)}}


def flop(chosen: str, bet_share: float, informed_best: str) -> DecisionScore:
    """P-1's flop decision with P-2's cards' verdict (``bet_share`` the chance they make 2x best)."""
    told = Informed({}, informed_best, {"flop_2x": bet_share, "check": 1 - bet_share})
    return DecisionScore("flop", chosen, {"flop_2x": 0.0, "check": 0.0}, {"companion:P-2": told})


def test_the_flop_and_the_river_are_parts_apart_so_cards_read_twice_keep_expectation_one():
    # P-2's cards are of two kinds, alike: one makes checking the flop and calling the river best, the
    # other 2x and folding. P-1 always checks and calls, as chance has it: his two steps of a hand
    # are both informed or neither. One product of both streets would have expectation 1 + f² a hand.
    kinds = [("check", "river_1x"), ("flop_2x", "fold")]
    mean = 0.0
    for hands in itertools.product(kinds, repeat=3):
        seats = [leak.PlayedSeat((n, "P-1"), "P-1", "D-1", ("P-2",),
                                 SeatScore((flop("check", 0.5, f), river("river_1x", 0.5, r)), True), n)
                 for n, (f, r) in enumerate(hands)]
        mean += math.exp(leak.companion_test(seats, TEST, SETTINGS).figure) / len(kinds) ** len(hands)
    assert mean == pytest.approx(1.0)


def test_each_street_s_steps_go_to_its_own_parts_and_the_companion_s_to_its_street_s_pair():
    seats = [leak.PlayedSeat((0, "P-1"), "P-1", "D-1", ("P-2",), SeatScore((flop("check", 0.4, "check"),), True), 0,
                             {"P-2": ((True, 0.3, "flop"),)}),
             leak.PlayedSeat((1, "P-1"), "P-1", "D-1", ("P-2",), SeatScore((river("fold", 0.6),), True), 0,
                             {"P-2": ((False, 0.5, "river"),)})]
    parts = leak.companion_test(seats, TEST, SETTINGS).parts
    assert {p: n for p, (n, _) in parts.items()} == {leak.OWN_FLOP: 1, leak.PAIR_FLOP: 1, leak.OWN: 1, leak.PAIR: 1}
    assert parts[leak.PAIR_FLOP][1] > parts[leak.OWN_FLOP][1] > 0  # both informed on the flop
    assert parts[leak.PAIR][1] < parts[leak.OWN][1] < 0  # neither informed on the river
