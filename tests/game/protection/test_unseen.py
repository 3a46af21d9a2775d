"""What each unseen card would have told on the river (``values.river_unseen``), against the values
themselves: every card's and pair's informed best is the one ``river_values`` gives with it known."""

from __future__ import annotations

import random

import pytest

from game.protection import values as v
from game.protection.scoring import best_of
from tests.game.engine_rules import SE_50KR

PAYS = v.PayTable.of(SE_50KR)


@pytest.mark.parametrize("seed", range(6))
def test_every_unseen_card_and_pair_tells_what_the_values_say(seed):
    rng = random.Random(seed)
    deck = rng.sample(range(52), 7)
    hole, board = deck[:2], deck[2:]
    unseen = v.river_unseen(hole, board, PAYS)
    assert sorted(unseen.cards) == sorted(set(range(52)) - set(deck))
    for i, card in enumerate(unseen.cards):
        best = best_of(v.river_values(hole, board, PAYS, known_dealer=(card,)))
        assert (best == "river_1x") == bool(unseen.bet_with_dealer_card[i])
    for _ in range(40):
        pair = rng.sample(unseen.cards, 2)
        best = best_of(v.river_values(hole, board, PAYS, dead=tuple(pair)))
        assert (best == "river_1x") == bool(unseen.bet_with_dead_pair[unseen.pair_row(pair)])
    assert len(unseen.bet_with_dealer_card) == 45
    assert len(unseen.bet_with_dead_pair) == 990


def test_a_card_that_flips_the_call_is_counted():
    # Ten high folds against an unknown dealer; a deuce known in his hand makes the call best
    # for some cards and not for others: the share is strictly between 0 and 1.
    cards = {c: i for i, c in enumerate(f"{r}{s}" for r in "23456789TJQKA" for s in "cdhs")}
    hole = [cards["Td"], cards["4c"]]
    board = [cards[c] for c in ("Ks", "Qd", "8c", "5h", "3s")]
    unseen = v.river_unseen(hole, board, PAYS)
    assert 0 < unseen.bet_with_dealer_card.mean() < 1
    assert bool(unseen.bet_with_dealer_card[unseen.cards.index(cards["2c"])])
    assert not bool(unseen.bet_with_dealer_card[unseen.cards.index(cards["Kd"])])
