"""The array evaluator gives the engine's value for every hand it is asked about."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from game import hand_arrays as ha
from game.evaluator import evaluate, evaluate_by_combinations

seven_cards = st.lists(st.integers(0, 51), min_size=7, max_size=7, unique=True)


def test_random_hands_have_the_engines_values():
    rng = np.random.default_rng(20261202)
    hands = np.argsort(rng.random((20_000, 52)), axis=1)[:, :7]
    got = ha.values_of(hands)
    assert [int(g) for g in got] == [evaluate(h) for h in hands.tolist()]


@settings(max_examples=300, deadline=None)
@given(seven_cards)
def test_any_hand_has_the_slow_literal_value(cards):
    assert int(ha.values_of(np.array([cards]))[0]) == evaluate_by_combinations(cards)


def test_flushes_straight_flushes_and_the_wheel():
    hands = {
        "royal flush beside a pair": [48, 44, 40, 36, 32, 1, 2],  # A K Q J T of clubs, 2d 2h
        "flush of six": [48, 40, 28, 20, 12, 4, 5],
        "steel wheel": [48, 0, 4, 8, 12, 45, 46],  # A 2 3 4 5 of clubs
        "straight with a flush of another rank set": [1, 5, 9, 13, 16, 20, 44],
        "four of a kind": [0, 1, 2, 3, 48, 49, 44],
    }
    for cards in hands.values():
        assert int(ha.values_of(np.array([cards]))[0]) == evaluate(cards)


def test_keys_of_disjoint_cards_add_up():
    key_a, mask_a = ha.key_of([0, 17, 33])
    key_b, mask_b = ha.key_of([2, 51, 40, 7])
    key, mask = ha.key_of([0, 17, 33, 2, 51, 40, 7])
    assert (key_a + key_b, mask_a + mask_b) == (key, mask)
    assert int(ha.values(np.array([key]), np.array([mask]))[0]) == evaluate([0, 17, 33, 2, 51, 40, 7])


def test_hands_laid_out_in_any_order_in_memory_have_the_same_values():
    # A transposed array is not row by row in memory: a flush written through a copy of it
    # would be lost. Every layout must give the values of the same hands laid out row by row.
    rng = np.random.default_rng(2)
    hands = np.argsort(rng.random((300, 52)), axis=1)[:, :7].reshape(20, 15, 7)
    keys, masks = ha.CARD_KEYS[hands].sum(axis=-1), ha.CARD_MASKS[hands].sum(axis=-1)
    transposed = ha.values(np.asfortranarray(keys.T), np.asfortranarray(masks.T))
    assert not transposed.flags.c_contiguous
    assert (transposed.T == ha.values(keys, masks)).all()
    assert [int(x) for x in transposed.T.ravel()] == [evaluate(h) for h in hands.reshape(-1, 7).tolist()]
