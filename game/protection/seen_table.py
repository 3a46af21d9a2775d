"""A starting hand's equity with one dealer card known: the table the preflop test of hole-carding reads.

Before the flop a hole-carder who has seen one of the dealer's cards decides
from three cards. What that card tells him is mostly how often his hand will
beat the dealer's: the equity ``E[w]`` (``values``: +1 a win, −1 a loss, 0 a
tie) over every board and every second dealer card. This module computes it
for every (hole, card) up to suit renaming (5,083 classes) by seeded sampling
of whole deals, and ships it as ``data/preflop_seen_equity.npz``: a
52 × 52 × 52 array indexed by the two hole cards and the card, NaN where
cards repeat.

The test needs only a fixed rule naming the best option for each card
(``seen``), not an exact value: an honest player's choice is independent of
the dealer's cards whatever the rule, so its chance of agreeing with the rule
is counted exactly over the cards (``seen.SeenVerdict``). The sample's error
(a standard error of about 0.006 in ``E[w]`` a class) moves the rule near
its edge, and so only the test's power.

``.venv/bin/python manage.py preflop_seen --write`` makes the file again;
the same arguments give the same file.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from itertools import permutations
from pathlib import Path

import numpy as np

from game import hand_arrays as ha

DATA = Path(__file__).with_name("data") / "preflop_seen_equity.npz"
DEALS = 24_000  # deals sampled a class
SEED = 4417

_PERMUTATIONS = tuple(permutations(range(4)))


def _renamed(card: int, perm: tuple[int, ...]) -> int:
    return (card & ~3) | perm[card & 3]


def canonical(h1: int, h2: int, card: int) -> tuple[int, int, int]:
    """The class of a hole and a seen card: the least of their renamings under the 24 suit permutations."""
    best = None
    for perm in _PERMUTATIONS:
        a, b = sorted((_renamed(h1, perm), _renamed(h2, perm)))
        key = (a, b, _renamed(card, perm))
        if best is None or key < best:
            best = key
    return best  # type: ignore[return-value]


def classes() -> dict[tuple[int, int, int], list[tuple[int, int, int]]]:
    """Every class, with the (h1, h2, card) triples it stands for (each hole in both orders)."""
    found: dict[tuple[int, int, int], list[tuple[int, int, int]]] = {}
    for h1 in range(52):
        for h2 in range(52):
            if h1 == h2:
                continue
            for card in range(52):
                if card in (h1, h2):
                    continue
                if h1 < h2:
                    key = canonical(h1, h2, card)
                    found.setdefault(key, []).append((h1, h2, card))
    return found


def equity(hole: tuple[int, int], card: int, deals: int = DEALS, seed: int = SEED) -> float:
    """``E[w]`` of the hole against the dealer holding ``card``: seeded whole deals (board and second card)."""
    deck = np.array([c for c in range(52) if c not in (*hole, card)], dtype=np.int64)
    rng = np.random.default_rng([seed, *hole, card])
    drawn = deck[np.argsort(rng.random((deals, len(deck))), axis=1)[:, :6]]
    board, second = drawn[:, :5], drawn[:, 5]
    board_keys = ha.CARD_KEYS[board].sum(axis=1)
    board_masks = ha.CARD_MASKS[board].sum(axis=1)
    hole_key, hole_mask = ha.key_of(hole)
    card_key, card_mask = ha.key_of((card,))
    player = ha.values(board_keys + hole_key, board_masks + hole_mask)
    dealer = ha.values(
        board_keys + card_key + ha.CARD_KEYS[second], board_masks + card_mask + ha.CARD_MASKS[second],
    )
    return float(np.sign(player - dealer).mean())


def _one(args: tuple[tuple[int, int, int], int, int]) -> tuple[tuple[int, int, int], float]:
    key, deals, seed = args
    return key, equity((key[0], key[1]), key[2], deals, seed)


def compute(deals: int = DEALS, seed: int = SEED, mapper=map, found=None) -> np.ndarray:
    """The whole 52³ table (``mapper``: e.g. a process pool's ``imap`` to use several cores;
    ``found``: ``classes()``, where the caller has it)."""
    found = found if found is not None else classes()
    table = np.full((52, 52, 52), np.nan, dtype=np.float32)
    for key, value in mapper(_one, [(key, deals, seed) for key in sorted(found)]):
        for h1, h2, card in found[key]:
            table[h1, h2, card] = table[h2, h1, card] = value
    return table


def write(path: Path, table: np.ndarray, deals: int, seed: int) -> None:
    np.savez_compressed(path, equity=table, deals=np.array(deals), seed=np.array(seed))


@cache
def shipped() -> np.ndarray:
    with np.load(DATA) as data:
        return data["equity"]


def hole_equity(table: np.ndarray, hole: Iterable[int]) -> float:
    """The hole's equity with no dealer card known: the mean over the 50 cards it leaves."""
    h1, h2 = hole
    return float(np.nanmean(table[h1, h2]))
