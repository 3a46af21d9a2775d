"""The flop's option values for every (hole, flop), up to suit renaming, read from a shipped table.

Valuing a flop exactly (``values.flop_values``) costs a million (board,
dealer) pairs: nearly all of a day's scoring. A flop's values depend only on
the hole cards and the flop, and not on which suit is which, so there are
1,286,792 of them: the 169 starting hands' canonical flops
(``preflop.canonical_flops``: 6,212 for a pair, 4,494 suited, 10,968 offsuit).
``python manage.py flop_values`` computes them all with the same exact code
and writes ``data/flop_values.npz``; scoring then reads a flop's uninformed
values here and computes only what a piece of knowledge changes.

A flop's key: its starting hand's position in ``preflop.starting_hands()``
times 52³, plus its canonical flop's three cards in base 52. The hole cards
are renamed to the hand's representative (``preflop.representative``), and
of the renamings that do so (the hole's own symmetries) the one giving the
smallest sorted flop is the flop's canonical form, as ``canonical_flops``
counts them. Values are kept as float32: six significant digits of an Ante.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import permutations
from pathlib import Path

import numpy as np

from game.cards import Card
from game.vocabulary import Decision

from .preflop import representative, starting_hand, starting_hands
from .streets import CHECK
from .values import PayTable

DATA = Path(__file__).with_name("data") / "flop_values.npz"
SPAN = 52**3
_RENAMINGS = tuple(permutations(range(4)))
HAND_INDEX = {name: i for i, name in enumerate(starting_hands())}


def _renamed(cards: Sequence[Card], renaming: Sequence[int]) -> list[Card]:
    return [(c & ~3) | renaming[c & 3] for c in cards]


def flop_key(hole: Sequence[Card], flop: Sequence[Card]) -> int:
    """The key of a (hole, flop) that every suit renaming of it shares."""
    name = starting_hand(hole)
    wanted = set(representative(name))
    best: tuple[Card, ...] | None = None
    for renaming in _RENAMINGS:
        if set(_renamed(hole, renaming)) != wanted:
            continue
        mapped = tuple(sorted(_renamed(flop, renaming)))
        if best is None or mapped < best:
            best = mapped
    assert best is not None  # some renaming always maps a hand to its class's representative
    return HAND_INDEX[name] * SPAN + (best[0] * 52 + best[1]) * 52 + best[2]


def key_of_canonical(name: str, flop: Sequence[Card]) -> int:
    """The key of a class's canonical flop (as ``canonical_flops`` gives it)."""
    a, b, c = flop
    return HAND_INDEX[name] * SPAN + (a * 52 + b) * 52 + c


@dataclass(frozen=True)
class FlopTable:
    pays: PayTable
    keys: np.ndarray  # sorted int64
    flop_2x: np.ndarray  # float32, by key
    check: np.ndarray

    def values(self, hole: Sequence[Card], flop: Sequence[Card], pays: PayTable) -> dict[str, float] | None:
        """The flop's options from the table; None for another pay table or a flop not in it."""
        if pays != self.pays or not len(self.keys):
            return None
        key = flop_key(hole, flop)
        at = int(np.searchsorted(self.keys, key))
        if at == len(self.keys) or self.keys[at] != key:
            return None
        return {Decision.FLOP_2X.value: float(self.flop_2x[at]), CHECK: float(self.check[at])}


def write_table(path: Path, pays: PayTable, keys, flop_2x, check, header: str) -> None:
    order = np.argsort(np.asarray(keys, dtype=np.int64))
    np.savez_compressed(
        path, keys=np.asarray(keys, dtype=np.int64)[order],
        flop_2x=np.asarray(flop_2x, dtype=np.float32)[order], check=np.asarray(check, dtype=np.float32)[order],
        blind=np.asarray(pays.blind, dtype=np.float64), qualifier=np.int64(pays.qualifier),
        header=np.array(header),
    )


def read_table(path: Path) -> FlopTable:
    with np.load(path) as data:
        pays = PayTable(tuple(float(p) for p in data["blind"]), int(data["qualifier"]))
        return FlopTable(pays, data["keys"], data["flop_2x"], data["check"])


@cache
def shipped_table() -> FlopTable | None:
    """The shipped table, or None while none is shipped (every flop is then valued exactly)."""
    return read_table(DATA) if DATA.exists() else None
