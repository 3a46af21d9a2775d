"""The published basic strategy of the Wizard of Odds, one seat's decisions from his own cards and the board.

No solved optimal strategy is part of this project yet; this one stands in
for it wherever a simulation needs honest play by published rules (the
seat covariance's rounds, a simulated player of game protection). It gives
up a little to optimal play. Ranks are ``2 … A``; "hidden" means that a hole
card takes part.

- Before the flop, Play 4x with: a pair of threes or better; any ace; a king
  with any suited card, or with a 5 or better offsuit; a queen with a 6 or
  better suited, an 8 or better offsuit; a jack with an 8 or better suited,
  a ten offsuit. Never 3x.
- On the flop (the hole cards and three board cards), Play 2x with:
  two pair or better that the flop alone does not hold (a flop of three of a
  kind is not a hand of the player's; a straight, flush, full house, four of
  a kind or straight flush always counts); a hidden pair, that is a pocket
  pair other than deuces, or a hole card of a rank on the flop; four cards of
  one suit among the five, with a hole card of that suit ranked ten or better.
- On the river (all seven cards), Play 1x with: a hidden pair or better, that
  is a pocket pair (deuces too), a hole card of a rank on the board (whether
  or not that pair is among the best five), or a straight or better that beats
  the board's own five cards; or fewer than 21 dealer outs. A dealer out is
  one of the 45 cards the player has not seen (the other seats' and the
  dealer's cards are unseen) which, with the five board cards, makes a hand
  (the best five of those six) that beats the player's; a tie is not an out.
- Otherwise fold.

The plain functions (``preflop_4x``, ``flop_2x``, ``river_1x``,
``dealer_outs``) say the strategy in plain code; the ``*_bulk`` ones decide
numpy arrays of seats at once, and tests hold them equal to the plain ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import hand_arrays as ha
from .cards import RANKS, Card, rank_of, suit_of
from .evaluator import HIGH_CARD, PAIR, STRAIGHT, THREE_OF_A_KIND, TWO_PAIR, category_of, evaluate

_RANK = {name: index for index, name in enumerate(RANKS)}
DEUCE, THREE, FIVE, SIX, EIGHT, TEN = (_RANK[r] for r in "23568T")
JACK, QUEEN, KING, ACE = (_RANK[r] for r in "JQKA")
OUTS_TO_FOLD = 21
_CATEGORY_SHIFT = 20  # evaluator values are category << 20 followed by ranks

DECISION_OF_MULTIPLE = {4: "preflop_4x", 2: "flop_2x", 1: "river_1x", 0: "fold"}


# ---- one seat, said plainly ----------------------------------------------------


def _raises_preflop(high: int, low: int, suited: bool) -> bool:
    if high == low:
        return high >= THREE
    if high == ACE:
        return True
    if high == KING:
        return suited or low >= FIVE
    if high == QUEEN:
        return low >= (SIX if suited else EIGHT)
    if high == JACK:
        return low >= (EIGHT if suited else TEN)
    return False


def preflop_4x(hole: Sequence[Card]) -> bool:
    low, high = sorted(rank_of(c) for c in hole)
    return _raises_preflop(high, low, suit_of(hole[0]) == suit_of(hole[1]))


def _category_of_three(flop: Sequence[Card]) -> int:
    distinct = len({rank_of(c) for c in flop})
    return THREE_OF_A_KIND if distinct == 1 else PAIR if distinct == 2 else HIGH_CARD


def flop_2x(hole: Sequence[Card], flop: Sequence[Card]) -> bool:
    five = (*hole, *flop)
    category = category_of(evaluate(five))
    if category >= TWO_PAIR and category > _category_of_three(flop):
        return True  # two pair or better, not the flop's alone
    first, second = rank_of(hole[0]), rank_of(hole[1])
    on_flop = {rank_of(c) for c in flop}
    if (first == second != DEUCE) or first in on_flop or second in on_flop:
        return True  # a hidden pair, except pocket deuces
    for card in hole:
        if rank_of(card) >= TEN and sum(suit_of(c) == suit_of(card) for c in five) >= 4:
            return True  # four to a flush with a hidden ten or better of that suit
    return False


def hidden_pair_or_better(hole: Sequence[Card], board: Sequence[Card], hand: int | None = None) -> bool:
    hand = evaluate((*hole, *board)) if hand is None else hand
    first, second = rank_of(hole[0]), rank_of(hole[1])
    on_board = {rank_of(c) for c in board}
    if first == second or first in on_board or second in on_board:
        return True
    return category_of(hand) >= STRAIGHT and hand > evaluate(board)


def dealer_outs(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """Unseen cards that, with the board, would give the dealer a hand beating the player's."""
    hand = evaluate((*hole, *board))
    seen = {*hole, *board}
    return sum(1 for card in range(52) if card not in seen and evaluate((*board, card)) > hand)


def river_1x(hole: Sequence[Card], board: Sequence[Card]) -> bool:
    if hidden_pair_or_better(hole, board):
        return True
    return dealer_outs(hole, board) < OUTS_TO_FOLD


def play_multiple(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """The strategy's Play bet in Antes for a seat's hole cards on this board: 4, 2, 1, or 0 (fold)."""
    if preflop_4x(hole):
        return 4
    if flop_2x(hole, board[:3]):
        return 2
    return 1 if river_1x(hole, board) else 0


def decision(hole: Sequence[Card], board: Sequence[Card]) -> str:
    """The strategy's decision as the engine spells it (``preflop_4x`` … ``fold``)."""
    return DECISION_OF_MULTIPLE[play_multiple(hole, board)]


# ---- many seats at once: (n, 2) hole cards, (n, 3) flops, (n, 5) boards --------

_PREFLOP = np.array(
    [[[_raises_preflop(high, low, bool(suited)) for suited in (0, 1)] for low in range(13)]
     for high in range(13)]
)


def preflop_4x_bulk(hole: np.ndarray) -> np.ndarray:
    first, second = hole[:, 0] >> 2, hole[:, 1] >> 2
    high, low = np.maximum(first, second), np.minimum(first, second)
    return _PREFLOP[high, low, ((hole[:, 0] & 3) == (hole[:, 1] & 3)).astype(np.int64)]


def flop_2x_bulk(hole: np.ndarray, flop: np.ndarray) -> np.ndarray:
    five = np.concatenate([hole, flop], axis=1)
    category = ha.values_of(five) >> _CATEGORY_SHIFT
    f = flop >> 2
    all_same = (f[:, 0] == f[:, 1]) & (f[:, 1] == f[:, 2])
    any_same = (f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 0] == f[:, 2])
    flop_category = np.where(all_same, THREE_OF_A_KIND, np.where(any_same, PAIR, HIGH_CARD))
    made = (category >= TWO_PAIR) & (category > flop_category)
    first, second = hole[:, 0] >> 2, hole[:, 1] >> 2
    paired = (((first == second) & (first != DEUCE))
              | (f == first[:, None]).any(axis=1) | (f == second[:, None]).any(axis=1))
    suits = five & 3
    draw = np.zeros(len(hole), dtype=bool)
    for i in range(2):
        same_suit = (suits == suits[:, i, None]).sum(axis=1)
        draw |= (hole[:, i] >> 2 >= TEN) & (same_suit >= 4)
    return made | paired | draw


def hidden_pair_or_better_bulk(
    hole: np.ndarray, board: np.ndarray, hand: np.ndarray, board_value: np.ndarray
) -> np.ndarray:
    """``hand``: the seats' seven-card values; ``board_value``: their boards' own."""
    board_ranks = board >> 2
    first, second = hole[:, 0] >> 2, hole[:, 1] >> 2
    return ((first == second) | (board_ranks == first[:, None]).any(axis=1)
            | (board_ranks == second[:, None]).any(axis=1)
            | ((hand >> _CATEGORY_SHIFT >= STRAIGHT) & (hand > board_value)))


def dealer_outs_bulk(board_with_each_card: np.ndarray, hole: np.ndarray, hand: np.ndarray) -> np.ndarray:
    """Dealer outs from ``hand_arrays.values_with_each_card`` of the seats' boards (-1 never beats)."""
    beats = board_with_each_card > hand[:, None]
    rows = np.arange(len(hole))
    outs = beats.sum(axis=1)
    for column in range(2):  # the seat's own cards are not unseen
        outs -= beats[rows, hole[:, column]]
    return outs
