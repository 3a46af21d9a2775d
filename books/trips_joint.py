"""Two seats' hand categories on one board, counted exactly: the Trips seat–seat covariance.

Two seats of a round share the five board cards and each holds two hole
cards, dealt from one deck. Trips pays by the category of a seat's seven
cards whatever he decides, so the covariance of two seats' Trips results,
for any Trips pay table, follows from how often the first seat's hand is of
category ``i`` and the second's of ``j``. ``joint_categories`` counts that
over every board and every ordered two disjoint hole pairs it leaves:
2,598,960 boards × 1,081 × 990 deals.

On one board, with ``n_i`` the hole pairs making category ``i`` and
``R_ci`` those of them holding card ``c``, the ordered pairs of disjoint
hole pairs of categories ``(i, j)`` are ``n_i·n_j − Σ_c R_ci·R_cj + [i = j]·n_i``:
all pairs, less those sharing a card (a pair sharing one card is counted
once in the sum over cards; the same pair twice, so it is given back once).

The hands are valued by ``game.hand_arrays`` (the engine's
own values); the boards go in chunks, the sums over cards as one matrix
product. Every count is an integer, and the figures from them are
``Fraction`` s: ``trips_covariance_exact`` is exact, not estimated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from fractions import Fraction
from functools import cache
from itertools import combinations
from pathlib import Path

import numpy as np

from game import hand_arrays as ha
from game.evaluator import CATEGORIES

DATA = Path(__file__).with_name("data") / "trips_joint.json"  # written by manage.py trips_joint --write
CATEGORY_COUNT = len(CATEGORIES)
BOARDS_AT_ONCE = 256
DEALS = 2_598_960 * 1081 * 990  # boards × the first seat's hole pairs × the second's


def _pairs() -> tuple[np.ndarray, np.ndarray]:
    pairs = np.array(list(combinations(range(52), 2)), dtype=np.int64)
    incidence = np.zeros((52, len(pairs)), dtype=np.float32)
    incidence[pairs[:, 0], np.arange(len(pairs))] = 1
    incidence[pairs[:, 1], np.arange(len(pairs))] = 1
    return pairs, incidence


def _boards() -> np.ndarray:
    return np.array(list(combinations(range(52), 5)), dtype=np.int64)


def joint_of_boards(boards: np.ndarray) -> np.ndarray:
    """The ``(category, category)`` counts of ordered disjoint hole pairs over ``boards``."""
    pairs, incidence = _pairs()
    bits = np.int64(1) << np.arange(52, dtype=np.int64)
    pair_bits = bits[pairs].sum(axis=1)
    pair_keys, pair_masks = ha.CARD_KEYS[pairs].sum(axis=1), ha.CARD_MASKS[pairs].sum(axis=1)
    joint = np.zeros((CATEGORY_COUNT, CATEGORY_COUNT), dtype=np.int64)
    for start in range(0, len(boards), BOARDS_AT_ONCE):
        chunk = boards[start:start + BOARDS_AT_ONCE]
        board_bits = bits[chunk].sum(axis=1)
        dealt = (board_bits[:, None] & pair_bits[None, :]) == 0
        # A pair holding a board card is no deal: valued as the board's first pair that is (its
        # own cards would be no hand at all), then put in a category of its own, never read.
        at = np.where(dealt, np.arange(len(pairs)), dealt.argmax(axis=1)[:, None])
        keys = ha.CARD_KEYS[chunk].sum(axis=1)[:, None] + pair_keys[at]
        masks = ha.CARD_MASKS[chunk].sum(axis=1)[:, None] + pair_masks[at]
        category = np.where(dealt, ha.values(keys, masks) >> 20, CATEGORY_COUNT)
        onehot = np.zeros((len(chunk), len(pairs), CATEGORY_COUNT + 1), dtype=np.float32)
        np.put_along_axis(onehot, category[:, :, None], 1, axis=2)
        onehot = onehot[:, :, :CATEGORY_COUNT]
        n = onehot.sum(axis=1).astype(np.int64)  # (B, categories)
        by_card = np.matmul(incidence, onehot)  # (B, 52, categories): exact small integers
        sharing = np.matmul(by_card.transpose(0, 2, 1), by_card).round().astype(np.int64)
        joint += (n[:, :, None] * n[:, None, :]).sum(axis=0) - sharing.sum(axis=0) + np.diag(n.sum(axis=0))
    return joint


def joint_categories(progress: Callable[[int, int], None] | None = None, parts: int = 64) -> np.ndarray:
    """Every board's counts summed (``joint_of_boards`` over all 2,598,960 boards)."""
    boards = _boards()
    joint = np.zeros((CATEGORY_COUNT, CATEGORY_COUNT), dtype=np.int64)
    for i, part in enumerate(np.array_split(boards, parts), start=1):
        joint += joint_of_boards(part)
        if progress is not None:
            progress(i, parts)
    return joint


def _results(pays: Mapping[int, object]) -> list[Fraction]:
    """Per category what a Trips unit returns: pays x to 1, or −1 for a category not paid."""
    table = {int(c): Fraction(str(p)) for c, p in pays.items()}
    return [table.get(c, Fraction(-1)) for c in range(CATEGORY_COUNT)]


def trips_covariance_exact(joint: np.ndarray, pays: Mapping[int, object]) -> Fraction:
    """Cov(Trips of one seat, Trips of another) per unit², from the exact joint counts."""
    t = _results(pays)
    total = int(joint.sum())
    both = sum(int(joint[i, j]) * t[i] * t[j] for i in range(CATEGORY_COUNT) for j in range(CATEGORY_COUNT))
    mean = sum(int(joint[i].sum()) * t[i] for i in range(CATEGORY_COUNT)) / total
    return Fraction(both, 1) / total - mean * mean


def trips_variance_exact(joint: np.ndarray, pays: Mapping[int, object]) -> Fraction:
    """One seat's Trips variance from the same counts' margin (a check against ``trips_math``)."""
    t = _results(pays)
    total = int(joint.sum())
    margin = [int(joint[i].sum()) for i in range(CATEGORY_COUNT)]
    mean = sum(m * x for m, x in zip(margin, t)) / total
    return sum(m * x * x for m, x in zip(margin, t)) / total - mean * mean


@cache
def shipped_joint() -> np.ndarray:
    """The shipped counts (``manage.py trips_joint --write``), checked to hold every deal once."""
    document = json.loads(DATA.read_text())
    joint = np.array(document["counts"], dtype=np.int64)
    if joint.shape != (CATEGORY_COUNT, CATEGORY_COUNT) or int(joint.sum()) != DEALS:
        raise ValueError(f"{DATA} does not hold the {DEALS} deals of two seats on one board")
    return joint
