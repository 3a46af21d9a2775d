"""Seven-card hands valued by the hundred thousand: numpy arrays of the engine's hand values.

Scoring a decision means valuing every hand the unseen cards could still
make: 990 dealer hands on the river, about a million (board, dealer) pairs
on the flop. ``game.evaluator`` values one hand at a time; this
module values arrays of them with the same numbers, from the same two rule
tables (``rank_values`` and ``flush_values``), so a value here is always the
engine's value (``tests/protection/test_hand_arrays.py`` checks them against
each other).

Every card has one additive ``int64`` key, and the keys of disjoint cards add
up to the key of their union, so a caller sums a board once and adds each
hole pair's key to it. A key packs three counts:

- bits 0-15: the number of cards of each suit, a nibble per suit (as the
  engine's keys): a nibble of five or more is a flush;
- bits 16-29: the ranks 2-7 as a base-5 number (how many of each rank);
- bits 30-46: the ranks 8-A likewise.

The two rank numbers index a dense table of non-flush values (the split
keeps it at about 1,500 × 3,200 entries instead of 5^13). A flush needs its
suit's ranks: every card also has a bit ``13·suit + rank`` in a second
``int64``, the *mask*, and a flush hand looks its suit's 13 bits up in the
engine's flush table. In seven cards a flush beats every hand that is not
one (a full house or four of a kind would need three cards off the suit),
so the flush value, where there is one, is the hand's value.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from game.evaluator import PAIR, flush_values, rank_values

_LOW_RANKS = 6  # 2..7 in the low rank number, 8..A in the high one
_LOW_SHIFT, _HIGH_SHIFT = 16, 30
_LOW_SPAN = 5**_LOW_RANKS
_SUIT_PROBE_ADD, _SUIT_PROBE_MASK = 0x3333, 0x8888  # a nibble of 5+ sets its top bit

# The lowest hand value of each category: ``value >= QUALIFIES`` is a pair or better.
QUALIFIES = PAIR << 20


def _card_keys() -> tuple[np.ndarray, np.ndarray]:
    keys = np.zeros(52, dtype=np.int64)
    masks = np.zeros(52, dtype=np.int64)
    for card in range(52):
        rank, suit = card >> 2, card & 3
        rank_part = (5**rank << _LOW_SHIFT) if rank < _LOW_RANKS else (
            5 ** (rank - _LOW_RANKS) << _HIGH_SHIFT
        )
        keys[card] = rank_part | (1 << 4 * suit)
        masks[card] = 1 << (13 * suit + rank)
    return keys, masks


CARD_KEYS, CARD_MASKS = _card_keys()


@cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The non-flush table and its two rank-number indexes, and the flush table.

    Built on first use from the engine's rank table (a second or two: it
    fills the engine's table too, which a forking parent does once anyway).
    """
    sevens = []
    for key, value in rank_values().items():
        counted, rest = 0, key
        for _ in range(13):
            rest, count = divmod(rest, 5)
            counted += count
        if counted == 7:
            sevens.append((key % _LOW_SPAN, key // _LOW_SPAN, value))
    low, high, value = (np.array(column, dtype=np.int64) for column in zip(*sevens))
    low_index = np.full(_LOW_SPAN, -1, dtype=np.int32)
    high_index = np.full(5 ** (13 - _LOW_RANKS), -1, dtype=np.int32)
    lows, low_at = np.unique(low, return_inverse=True)
    highs, high_at = np.unique(high, return_inverse=True)
    # The low number's index comes already multiplied by the table's width: one flat lookup.
    low_index[lows] = np.arange(len(lows), dtype=np.int32) * len(highs)
    high_index[highs] = np.arange(len(highs), dtype=np.int32)
    table = np.zeros(len(lows) * len(highs), dtype=np.int32)
    table[low_at * len(highs) + high_at] = value
    flush = np.array(flush_values(), dtype=np.int32)
    return low_index, high_index, table, flush


def key_of(cards) -> tuple[int, int]:
    """The key and the mask of some distinct cards (ints 0..51)."""
    cards = list(cards)
    return int(CARD_KEYS[cards].sum()), int(CARD_MASKS[cards].sum())


def values(keys: np.ndarray, masks) -> np.ndarray:
    """The engine's hand values of seven-card hands, given their summed keys and masks.

    ``masks`` is the array of summed masks, or a function that sums the masks
    of the hands at some indexes: only flushes read a mask, a few hands in a
    hundred, and the caller need not sum the rest.
    """
    low_index, high_index, table, flush = _tables()
    low = (keys >> _LOW_SHIFT) & 0x3FFF
    high = keys >> _HIGH_SHIFT
    result = table[low_index[low] + high_index[high]]
    probe = ((keys & 0xFFFF) + _SUIT_PROBE_ADD) & _SUIT_PROBE_MASK
    flushed = np.flatnonzero(probe)
    if flushed.size:
        # Bit 4·suit + 3 of the probe is set: the suit is that bit's nibble.
        suit = np.log2(probe.ravel()[flushed]).astype(np.int64) >> 2
        summed = masks(flushed) if callable(masks) else masks.ravel()[flushed]
        # ``flat`` writes in place whatever the layout (``ravel`` would copy a transposed array).
        result.flat[flushed] = flush[(summed >> (13 * suit)) & 0x1FFF]
    return result


def values_of(cards: np.ndarray) -> np.ndarray:
    """The values of hands given as an ``(n, 7)`` array of cards."""
    return values(CARD_KEYS[cards].sum(axis=-1), CARD_MASKS[cards].sum(axis=-1))
