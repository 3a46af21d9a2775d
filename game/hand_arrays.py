"""Hands of five to seven cards valued by the hundred thousand: numpy arrays of the engine's hand values.

Scoring a decision means valuing every hand the unseen cards could still
make: 990 dealer hands on the river, about a million (board, dealer) pairs
on the flop; simulating a round values boards, flops and every card a dealer
could add to a board. ``game.evaluator`` values one hand at a time; this
module values arrays of them with the same numbers, from the same two rule
tables (``rank_values`` and ``flush_values``), so a value here is always the
engine's value (``tests/game/protection/test_hand_arrays.py`` checks them against
each other).

Every card has one additive ``int64`` key, and the keys of disjoint cards add
up to the key of their union, so a caller sums a board once and adds each
hole pair's key to it. A key packs three counts:

- bits 0-15: the number of cards of each suit, a nibble per suit (as the
  engine's keys): a nibble of five or more is a flush;
- bits 16-29: the ranks 2-7 as a base-5 number (how many of each rank);
- bits 30-46: the ranks 8-A likewise.

The two rank numbers index a dense table of non-flush values (the split
keeps it at about 1,500 × 3,200 entries instead of 5^13). The engine's rank
table holds five and seven cards; a six-card entry is the best of the
five-card entries its six cards hold, which is what "the best five" means.
A flush needs its suit's ranks: every card also has a bit ``13·suit + rank``
in a second ``int64``, the *mask*, and a flush hand looks its suit's 13 bits
up in the engine's flush table. In five to seven cards a flush beats every
hand that is not one (a full house or four of a kind would need three cards
off the suit), so the flush value, where there is one, is the hand's value.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .evaluator import flush_values, rank_values

_LOW_RANKS = 6  # 2..7 in the low rank number, 8..A in the high one
_LOW_SHIFT, _HIGH_SHIFT = 16, 30
_LOW_SPAN = 5**_LOW_RANKS
_SUIT_PROBE_ADD, _SUIT_PROBE_MASK = 0x3333, 0x8888  # a nibble of 5+ sets its top bit


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


def _rank_entries() -> tuple[np.ndarray, np.ndarray]:
    """Every rank multiset of five to seven cards by its base-5 key, and its non-flush value."""
    engine = rank_values()
    keys = np.fromiter(engine.keys(), dtype=np.int64, count=len(engine))
    values = np.fromiter(engine.values(), dtype=np.int64, count=len(engine))
    powers = 5 ** np.arange(13, dtype=np.int64)
    counts = keys[:, None] // powers % 5
    five = counts.sum(axis=1) == 5
    order = np.argsort(keys[five])
    five_keys, five_values, five_counts = keys[five][order], values[five][order], counts[five][order]
    sixes = np.unique((five_keys[:, None] + powers)[five_counts < 4])
    # Each card left out in turn: only ranks the six hold leave a five-card hand.
    held = sixes[:, None] // powers % 5 > 0
    left = np.where(held, sixes[:, None] - powers, five_keys[0])
    best = np.where(held, five_values[np.searchsorted(five_keys, left)], 0).max(axis=1)
    return np.concatenate([keys, sixes]), np.concatenate([values, best])


@cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The non-flush table and its two rank-number indexes, and the flush table.

    Built on first use from the engine's rank table (a second or two: it
    fills the engine's table too, which a forking parent does once anyway).
    """
    keys, value = _rank_entries()
    low, high = keys % _LOW_SPAN, keys // _LOW_SPAN
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
    """The engine's hand values of hands of five to seven cards, given their summed keys and masks.

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
    """The values of hands given as an ``(..., k)`` array of cards, ``k`` from five to seven."""
    cards = np.asarray(cards)
    hands = cards.reshape(-1, cards.shape[-1])
    return values(CARD_KEYS[cards].sum(axis=-1), lambda at: CARD_MASKS[hands[at]].sum(axis=-1))


def values_with_each_card(cards: np.ndarray) -> np.ndarray:
    """``(n, 52)``: each row of ``cards`` valued with each card of the deck added, -1 for its own.

    A board's hands with one card more (the dealer's outs): a row's own cards
    are left out before the lookup, as a card given twice has no key of a hand.
    """
    cards = np.asarray(cards)
    n, size = cards.shape
    own = np.zeros((n, 52), dtype=bool)
    own[np.arange(n)[:, None], cards] = True
    added = np.broadcast_to(np.arange(52), (n, 52))[~own].reshape(n, 52 - size)
    masks = CARD_MASKS[cards].sum(axis=1)
    keys = CARD_KEYS[cards].sum(axis=1)[:, None] + CARD_KEYS[added]
    found = values(keys, lambda at: masks[at // (52 - size)] + CARD_MASKS[added.ravel()[at]])
    by_card = np.full((n, 52), -1, dtype=found.dtype)
    by_card[~own] = found.ravel()
    return by_card
