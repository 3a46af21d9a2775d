"""The collusion test's null for a player who reads the table: each of a companion's possible pairs
weighed by how likely his shown line is with it, the round's own seats never counted."""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest

from game.protection import lines as ln
from game.protection import values as v
from game.protection.scoring import companion_knowledge, river_shares, shown_lines
from game.protection.streets import CHECK, choices
from tests.game.engine_rules import SE_50KR

PAYS = v.PayTable.of(SE_50KR)


def _strong(found: dict[str, np.ndarray], street: str) -> np.ndarray:
    """A rule on buckets, not on cards: raise the top forty classes, bet a hand the hole cards make."""
    if street == "preflop":
        return found["preflop"] < 40
    return found[street] % 2 == 1


def _plan(found, i) -> tuple[tuple[str, str], ...]:
    if _strong(found, "preflop")[i]:
        return (("preflop", "preflop_4x"),)
    if _strong(found, "flop")[i]:
        return (("preflop", CHECK), ("flop", "flop_2x"))
    return (("preflop", CHECK), ("flop", CHECK), ("river", "river_1x" if _strong(found, "river")[i] else "fold"))


def _days_of_the_rule(rounds: int, seed: int) -> ln.LineModel:
    """A day of one companion ("C") who plays ``_plan`` on random cards."""
    rng = random.Random(seed)
    seats = []
    for _ in range(rounds):
        cards = rng.sample(range(52), 7)
        hole, board = tuple(cards[:2]), tuple(cards[2:])
        found = ln.buckets(np.asarray([hole]), board)
        seats.append(ln.ShownSeat("C", hole, board, _plan(found, 0)))
    return ln.LineModel.of(seats)


def test_with_lines_that_tell_the_companion_s_hand_the_share_is_that_of_the_pairs_that_show_it():
    # The model learnt on a long day of a companion who plays by a rule of buckets: the weighted
    # share is, within the smoothing, the share among the pairs that rule would have played as he
    # did; the share counted over every pair is far from it.
    model = _days_of_the_rule(60_000, seed=5)
    rng = random.Random(9)
    lines = [(("preflop", "preflop_4x"),), (("preflop", CHECK), ("flop", "flop_2x")),
             (("preflop", CHECK), ("flop", CHECK), ("river", "fold"))]
    telling = moved = 0
    while telling < 30:
        cards = rng.sample(range(52), 7)
        hole, board = cards[:2], cards[2:]
        unseen = v.river_unseen(hole, board, PAYS)
        if unseen.bet_with_dead_pair.all() or not unseen.bet_with_dead_pair.any():
            continue  # no pair changes his choice: a step no test reads
        found = ln.buckets(unseen.pairs(), board)
        line = lines[telling % 3]
        shows = np.array([_plan(found, i) == line for i in range(len(found["preflop"]))])
        if not shows.any():
            continue
        telling += 1
        exact = unseen.bet_with_dead_pair[shows].mean()
        weighted = river_shares(hole, board, {"C": ()}, PAYS, model, {"C": line})[companion_knowledge("C")]
        assert weighted["river_1x"] == pytest.approx(exact, abs=0.03)
        moved += abs(unseen.bet_with_dead_pair.mean() - exact) > 0.05
    assert moved >= 5  # the lines moved the share, and the weights followed


def test_a_round_s_own_seats_are_left_out_of_the_model_that_weighs_them():
    rng = random.Random(2)
    seats = []
    for n in range(200):
        cards = rng.sample(range(52), 7)
        found = ln.buckets(np.asarray([cards[:2]]), cards[2:])
        seats.append(ln.ShownSeat(f"P-{n % 3}", tuple(cards[:2]), tuple(cards[2:]), _plan(found, 0)))
    whole = ln.LineModel.of(seats)
    without = whole.without(seats[:3])
    rest = ln.LineModel.of(seats[3:])
    for street in whole.table:
        assert np.array_equal(without.table[street], rest.table[street])
        for player in rest.players:
            assert np.array_equal(without.players[player][street], rest.players[player][street])
    assert whole.table["preflop"].sum() == 200  # the model the round came from is not changed


def _seats(count: int, seed: int, players: int = 3) -> list[ln.ShownSeat]:
    rng = random.Random(seed)
    seats = []
    for n in range(count):
        cards = rng.sample(range(52), 7)
        found = ln.buckets(np.asarray([cards[:2]]), cards[2:])
        seats.append(ln.ShownSeat(f"P-{n % players}", tuple(cards[:2]), tuple(cards[2:]), _plan(found, 0)))
    return seats


def test_days_pooled_count_as_one_model_of_all_their_seats_and_are_kept_as_they_count():
    days = [_seats(40, seed=day, players=2 + day) for day in range(3)]
    pooled = ln.LineModel.of(days[2]).pooled(ln.LineModel.of(day) for day in days[:2])
    together = ln.LineModel.of([seat for day in days for seat in day])
    assert set(pooled.players) == set(together.players) == {"P-0", "P-1", "P-2", "P-3"}
    for street in together.table:
        assert np.array_equal(pooled.table[street], together.table[street])
        for player in together.players:
            assert np.array_equal(pooled.players[player][street], together.players[player][street])
        assert np.allclose(pooled.chances("P-3", street), together.chances("P-3", street))
    # As the service keeps a day's counts and reads them the next days.
    kept = ln.LineModel.from_counts_json(json.loads(json.dumps(together.counts_json())))
    for street in together.table:
        assert np.array_equal(kept.table[street], together.table[street])
        assert np.array_equal(kept.players["P-1"][street], together.players["P-1"][street])
    # The day the pooling started from is not changed by it.
    assert ln.LineModel.of(days[2]).table["preflop"].sum() == 40


def test_without_lines_every_pair_counts_alike():
    hole, board = [0, 5], [10, 20, 30, 40, 50]
    unseen = v.river_unseen(hole, board, PAYS)
    assert river_shares(hole, board, {"C": ()}, PAYS)[companion_knowledge("C")]["river_1x"] == pytest.approx(
        unseen.bet_with_dead_pair.mean())


def test_a_companion_s_pairs_leave_every_card_dealt_elsewhere_but_his_own():
    # Given the other seats' and the dealer's cards, the other seats' lines say nothing more of his.
    hole, board = [43, 14], [1, 18, 26, 29, 48]  # a river where some pairs make the call best
    companion, other, dealer = (0, 2), (3, 4), (5, 6)
    unseen = v.river_unseen(hole, board, PAYS)
    pairs = unseen.pairs()
    free = ~np.isin(pairs, [*other, *dealer]).any(axis=1)
    shares = river_shares(hole, board, {"C": companion, "D": other}, PAYS, elsewhere=(*companion, *other, *dealer))
    assert shares[companion_knowledge("C")]["river_1x"] == pytest.approx(unseen.bet_with_dead_pair[free].mean())
    assert 0 < shares[companion_knowledge("C")]["river_1x"] < 1
    assert shares[companion_knowledge("C")]["river_1x"] != pytest.approx(
        river_shares(hole, board, {"C": companion}, PAYS)[companion_knowledge("C")]["river_1x"])
    # D's pairs leave C's cards, not his own.
    free = ~np.isin(pairs, [*companion, *dealer]).any(axis=1)
    assert shares[companion_knowledge("D")]["river_1x"] == pytest.approx(unseen.bet_with_dead_pair[free].mean())


def test_where_no_pair_makes_an_option_best_its_weighted_share_is_exactly_nought():
    model = _days_of_the_rule(2_000, seed=1)
    rng = random.Random(4)
    for _ in range(200):
        cards = rng.sample(range(52), 7)
        unseen = v.river_unseen(cards[:2], cards[2:], PAYS)
        if unseen.bet_with_dead_pair.all():
            shares = river_shares(cards[:2], cards[2:], {"C": ()}, PAYS, model,
                                  {"C": (("preflop", "preflop_4x"),)})
            assert shares[companion_knowledge("C")] == {"river_1x": 1.0, "fold": 0.0}
            return
    pytest.fail("no river where every pair makes the bet best")


def test_a_seat_sees_the_river_choices_of_the_seats_before_it_only():
    plans = [choices(d) for d in ("fold", "river_1x", "preflop_4x")]
    shown = shown_lines(plans, ["A", "B", "C"])
    assert shown[0]["B"] == (("preflop", CHECK), ("flop", CHECK))  # B acts after A
    assert shown[1]["A"] == plans[0]  # A folded before B's turn
    assert shown[2]["A"] == plans[0] and shown[2]["B"] == plans[1] and "C" not in shown[2]


def test_buckets_say_whether_the_hole_cards_make_the_hand():
    board = (0, 1, 22)  # a pair of deuces on the flop (cards 0 and 1: two deuces)
    found = ln.buckets(np.asarray([[40, 44], [2, 45]]), board)
    # Two unrelated cards: the board's pair only. A third deuce: trips the hole card makes.
    assert found["flop"][0] == 2 * 1 and found["flop"][1] == 2 * 3 + 1
    assert set(found) == {"preflop", "flop"}


@pytest.mark.parametrize("a,b", list(itertools.combinations((0, 13, 51), 2)))
def test_the_class_of_two_cards_is_that_of_either_order(a, b):
    assert ln.buckets(np.asarray([[a, b]]), ())["preflop"][0] == ln.buckets(np.asarray([[b, a]]), ())["preflop"][0]


def test_a_pair_s_buckets_are_its_class_and_what_it_makes_with_the_board():
    from game.evaluator import category_of, evaluate
    from game.protection.preflop import starting_hand, starting_hands

    rng = random.Random(8)
    for _ in range(300):
        cards = rng.sample(range(52), 7)
        pair, board = cards[:2], cards[2:]
        found = ln.buckets(np.asarray([pair]), board)
        assert starting_hands()[found["preflop"][0]] == starting_hand(pair)
        for street, seen in (("flop", board[:3]), ("river", board)):
            category = category_of(evaluate([*pair, *seen]))
            alone = category_of(evaluate(seen)) if len(seen) == 5 else ln._board_category(seen)
            assert found[street][0] == 2 * category + (category > alone)
