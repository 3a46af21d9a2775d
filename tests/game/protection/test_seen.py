"""A seen dealer card's verdicts: the shipped preflop equity table, each street's rule against a
slow count of the same thing, and the chance counted over exactly the cards no seat held."""

from __future__ import annotations

import random

import numpy as np
import pytest

from game.evaluator import evaluate
from game.protection import seen, seen_table
from game.protection import values as v
from game.protection.preflop import shipped_table
from tests.game.engine_rules import SE_50KR

PAYS = v.PayTable.of(SE_50KR)


def test_the_shipped_equity_table_holds_every_hole_and_card_once_and_no_other():
    table = seen_table.shipped()
    h1, h2, card = np.meshgrid(range(52), range(52), range(52), indexing="ij")
    distinct = (h1 != h2) & (h1 != card) & (h2 != card)
    assert not np.isnan(table[distinct]).any() and np.isnan(table[~distinct]).all()
    assert np.array_equal(table, table.transpose(1, 0, 2), equal_nan=True)  # the hole's order is no matter
    assert (np.abs(table[distinct]) <= 1).all()


@pytest.mark.parametrize("seed", range(3))
def test_a_renaming_of_suits_reads_the_same_equity_and_the_sample_is_the_shipped_one(seed):
    rng = random.Random(seed)
    h1, h2, card = rng.sample(range(52), 3)
    table = seen_table.shipped()
    perm = rng.sample(range(4), 4)
    renamed = [(c & ~3) | perm[c & 3] for c in (h1, h2, card)]
    assert table[h1, h2, card] == table[renamed[0], renamed[1], renamed[2]]
    key = seen_table.canonical(h1, h2, card)
    assert table[h1, h2, card] == pytest.approx(seen_table.equity((key[0], key[1]), key[2]), abs=1e-6)


def test_the_equity_is_worse_with_an_ace_seen_than_with_a_deuce():
    table = seen_table.shipped()
    queen_jack = (10 * 4, 9 * 4 + 1)
    assert table[queen_jack[0], queen_jack[1], 12 * 4 + 2] < table[queen_jack[0], queen_jack[1], 0 * 4 + 2]


def _deal(seed: int, seats: int = 6):
    deck = random.Random(seed).sample(range(52), 7 + 2 * seats)
    board, dealer = tuple(deck[:5]), tuple(deck[5:7])
    holes = [tuple(deck[7 + 2 * i: 9 + 2 * i]) for i in range(seats)]
    return board, dealer, holes


@pytest.mark.parametrize("seed", range(4))
def test_the_chance_is_counted_over_exactly_the_cards_no_seat_held(seed):
    board, dealer, holes = _deal(seed)
    unseen = seen.unseen_at_table(holes, board)
    assert len(unseen) == 52 - 5 - 12 and set(dealer) <= set(unseen.tolist())
    agrees = np.array([c % 3 == 0 for c in unseen.tolist()])
    verdict = seen.verdict(agrees, unseen, dealer)
    assert verdict.share == pytest.approx(agrees.mean())
    assert verdict.informed == (dealer[0] % 3 == 0, dealer[1] % 3 == 0)


@pytest.mark.parametrize("seed", range(3))
def test_the_river_rule_is_the_river_valued_with_each_card_known(seed):
    board, _, holes = _deal(seed)
    unseen = seen.unseen_at_table(holes, board)
    bets = seen.river_best(holes[0], board, unseen, PAYS)
    for card, bet in zip(unseen.tolist(), bets):
        known = v.river_values(holes[0], board, PAYS, known_dealer=(card,))
        assert bet == (known["river_1x"] >= known["fold"])


@pytest.mark.parametrize("seed", range(2))
def test_the_flop_rule_reads_the_equity_a_slow_count_over_the_same_boards_gives(seed):
    board, _, holes = _deal(seed)
    hole, flop = holes[0], board[:3]
    unseen = seen.unseen_at_table(holes, board)
    found = seen.flop_boards(flop, unseen, (seed,))
    total = dict.fromkeys(unseen.tolist(), 0)
    count = dict.fromkeys(unseen.tolist(), 0)
    for turn, river in unseen[found.boards].tolist():
        mine = evaluate((*hole, *flop, turn, river))
        left = [c for c in unseen.tolist() if c not in (turn, river)]
        for card in left:
            for second in left:
                if second != card:
                    dealer = evaluate((card, second, *flop, turn, river))
                    total[card] += (mine > dealer) - (mine < dealer)
                    count[card] += 1
    equity = np.array([total[c] / count[c] for c in unseen.tolist()])
    options = {"flop_2x": -0.3, "check": -0.35}
    expected = options["flop_2x"] - options["check"] + seen.FLOP_SLOPE * (equity - equity.mean()) > 0
    assert np.array_equal(seen.flop_best(hole, flop, found, options), expected)


def test_the_preflop_rule_raises_more_with_a_low_card_seen():
    table = shipped_table()
    hole = (9 * 4, 5 * 4 + 1)  # J7 offsuit: a check without knowledge, near the edge
    options = table.values(hole, PAYS)
    cards = np.array([c for c in range(52) if c not in hole])
    bets = seen.preflop_best(hole, cards, options)
    low, high = bets[cards >> 2 <= 3], bets[cards >> 2 >= 11]
    assert low.mean() > high.mean()


def test_a_choice_agrees_with_the_cards_that_make_it_best():
    bets = np.array([True, False, True])
    assert seen.agreeing("flop", "flop_2x", bets).tolist() == [True, False, True]
    assert seen.agreeing("flop", "check", bets).tolist() == [False, True, False]
    assert seen.agreeing("preflop", "preflop_3x", bets).tolist() == [False, False, False]
    assert seen.agreeing("river", "fold", bets).tolist() == [False, True, False]
