"""What a companion's two cards, had a player seen them, would have told him on the flop.

On the flop a player bets 2x or checks. A companion's two cards will not
come on the turn or the river: held by a friend, they tell a player whether
his outs are still to come (two of his flush cards in the friend's hand make
his draw worth less). The collusion test reads that street too.

**The rule.** As for a dealer card (``seen``): 2x when
``(2x − check) + FLOP_SLOPE·ΔE[w] > 0``, where ``2x − check`` is his own
values' gap and ``ΔE[w]`` is what the pair, taken out of the turn and the
river, does to his equity (the chance he beats the dealer less the chance
he loses). The equity of every turn-and-river pair is counted against
``RUNOUT_DEALERS`` dealer hands drawn among the cards it leaves; the pair's
equity is the mean over the turn-and-river pairs without its cards (and
without his), so each pair's is the whole less what each of its cards
holds, with the pair given back once: one pass for all of them. The dealer's
side of the removal (the pair is not the dealer's either) is left out: it
moves the equity far less than the outs.

**Why the chance stays exact.** Any fixed rule of the pair and of what the
test conditions on keeps ``q`` exact; the dealer hands are drawn once, by
position among the cards a flop leaves (the same for every flop and seat,
never by a hidden card), and each seat's counts leave out only his own
cards. ``q`` is counted as on the river
(``scoring.companion_shares``), over the pairs that are neither his nor on
the whole board nor dealt elsewhere: his flop choice, made before the turn
and the river, is independent of the companion's cards given what he saw,
and so also given the turn and river that came.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from game import hand_arrays as ha
from game.cards import Card
from . import values as v
from .seen import FLOP_2X, FLOP_SLOPE
from .streets import CHECK

RUNOUT_DEALERS = 12  # dealer hands drawn for each turn-and-river pair
CLEAR = 47 * 46 // 2  # the turn-and-river pairs of a flop without a player's cards
MOST_TAKEN = 2 * 46 - 1  # of those, the ones that hold a card of a pair (of two cards neither his nor the flop's)


@dataclass(frozen=True, slots=True)
class FlopRunouts:
    """Every turn-and-river pair of a flop and, on each, the dealer hands drawn (``values[r, k]``)."""

    cards: np.ndarray  # (49,) the cards not on the flop, in order
    runouts: np.ndarray  # (R, 2) every pair of them, row r the pair of colex row r of positions in ``cards``
    dealers: np.ndarray  # (R, K) the dealer hands drawn among the cards each leaves, a bit a card
    values: np.ndarray  # (R, K) those hands' values on the flop and the turn and river
    runout_bits: np.ndarray  # (R,) each turn-and-river pair, a bit a card


def flop_runouts(flop: Sequence[Card]) -> FlopRunouts:
    """A flop's turn-and-river pairs and dealer hands, the same whatever order the flop is listed in
    (every seat of a round shares them)."""
    return _flop_runouts(tuple(sorted(flop)))


@cache
def _draws() -> tuple[np.ndarray, np.ndarray]:
    """Every pair of 49 positions (a flop's cards left, in order) and, for each, ``RUNOUT_DEALERS``
    pairs of the positions it leaves, drawn once: which cards they are is the flop's."""
    positions = v._combos(52 - 3, 2)
    rng = np.random.default_rng([len(positions), RUNOUT_DEALERS])
    shape = (len(positions), RUNOUT_DEALERS)
    first = rng.integers(0, 52 - 3 - 2, size=shape)
    second = rng.integers(0, 52 - 3 - 3, size=shape)
    second += second >= first
    drawn = np.stack([first, second], axis=2)
    # The j-th position a pair leaves: step past its two, the lower first.
    drawn += drawn >= positions[:, 0, None, None]
    drawn += drawn >= positions[:, 1, None, None]
    return positions, drawn


@lru_cache(maxsize=4)
def _flop_runouts(flop: tuple[Card, ...]) -> FlopRunouts:
    cards = np.array([c for c in range(52) if c not in flop], dtype=np.int64)
    positions, drawn = _draws()
    shape = drawn.shape[:2]
    runouts, dealers = cards[positions], cards[drawn]
    key, mask = ha.key_of(flop)
    # Each pair's two cards added, not summed over an axis of two: numpy's sum is slower there.
    keys = (key + ha.CARD_KEYS[runouts[:, 0]] + ha.CARD_KEYS[runouts[:, 1]])[:, None] + (
        ha.CARD_KEYS[dealers[..., 0]] + ha.CARD_KEYS[dealers[..., 1]])
    runout_masks = mask + ha.CARD_MASKS[runouts[:, 0]] + ha.CARD_MASKS[runouts[:, 1]]

    def masks(at: np.ndarray) -> np.ndarray:
        r, k = np.divmod(at, RUNOUT_DEALERS)
        return runout_masks[r] + ha.CARD_MASKS[dealers[r, k]].sum(axis=-1)

    values = ha.values(keys.ravel(), masks).reshape(shape)
    return FlopRunouts(cards, runouts, card_bits(dealers), values, card_bits(runouts))


def card_bits(cards) -> np.ndarray:
    """Each row of cards (the last axis; a plain sequence is one row) as one ``int64`` with a bit a
    card: whether two share a card is one AND."""
    cards = np.asarray(cards, dtype=np.int64)
    if cards.ndim == 1:
        return np.bitwise_or.reduce(np.left_shift(np.int64(1), cards))
    bits = np.left_shift(np.int64(1), cards)
    found = bits[..., 0].copy()
    for column in range(1, cards.shape[-1]):
        found |= bits[..., column]
    return found


def _unseen(hole: Sequence[Card], board: Sequence[Card]) -> np.ndarray:
    return np.array([c for c in range(52) if c not in (*hole, *board)], dtype=np.int64)


def unseen_pairs(hole: Sequence[Card], board: Sequence[Card]) -> np.ndarray:
    """``(n, 2)``: the pairs of cards neither his nor on the board, in colex order of those cards
    (as the river's ``values.Unseen.pairs``): where a companion's cards lie, for the test's chance."""
    cards = _unseen(hole, board)
    return cards[v._combos(len(cards), 2)]


def pair_row(hole: Sequence[Card], board: Sequence[Card], pair: Sequence[Card]) -> int:
    """The row of ``unseen_pairs`` holding ``pair``."""
    return v.pair_row(_unseen(hole, board), pair)


def pair_bets(
    hole: Sequence[Card], flop: Sequence[Card], found: FlopRunouts, options: dict[str, float], pairs: np.ndarray,
) -> np.ndarray:
    """Per pair (rows of ``pairs``), whether 2x is best (else check) with it known to be elsewhere.

    A pair takes out at most ``MOST_TAKEN`` of the ``CLEAR`` turn-and-river
    pairs his equity is the mean of, each worth between −1 and 1, so it moves
    the mean by at most ``2·MOST_TAKEN/(CLEAR − MOST_TAKEN)``: where his own
    gap is wider than that times the slope, every pair leaves the option as
    it was, and none need be counted."""
    gap = options[FLOP_2X] - options[CHECK]
    if abs(gap) > FLOP_SLOPE * 2 * MOST_TAKEN / (CLEAR - MOST_TAKEN):
        return np.full(len(pairs), gap > 0)
    return gap + FLOP_SLOPE * equity_moved(hole, flop, found, pairs) > 0


def equity_moved(hole: Sequence[Card], flop: Sequence[Card], found: FlopRunouts, pairs: np.ndarray) -> np.ndarray:
    """Per pair (rows of ``pairs``), what it does to his equity when it cannot come on the turn or
    the river: the mean of each turn-and-river pair's equity over those without its cards (and his),
    less the mean over all without his."""
    his = int(card_bits(hole))
    clear = found.runout_bits & his == 0  # the turn-and-river pairs without his cards
    key, mask = ha.key_of((*hole, *flop))
    player = np.zeros(len(clear), dtype=np.int64)
    player[clear] = ha.values(key + ha.CARD_KEYS[found.runouts[clear]].sum(axis=1),
                              mask + ha.CARD_MASKS[found.runouts[clear]].sum(axis=1))
    dealt = found.dealers & his == 0  # (R, K): the hands without his cards
    counted = dealt.sum(axis=1)
    beats = np.where(dealt, np.sign(player[:, None] - found.values), 0).sum(axis=1)
    # A turn and river whose every hand drawn holds his cards (chance all but rules it out) counts as even.
    equity = np.where(clear, beats / np.maximum(counted, 1), 0.0)
    holding = v._pairs_holding(len(found.cards))
    by_card, clear_by_card = equity[holding].sum(axis=1), clear[holding].sum(axis=1)
    at = np.searchsorted(found.cards, pairs)
    low, high = at.min(axis=1), at.max(axis=1)
    row = low + high * (high - 1) // 2  # the runout of the pair's own two cards
    total = equity.sum() - by_card[low] - by_card[high] + equity[row]
    count = clear.sum() - clear_by_card[low] - clear_by_card[high] + clear[row]
    return total / count - equity.sum() / clear.sum()
