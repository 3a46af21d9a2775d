"""What each option of a decision is worth, in Antes, given what the player could see.

The Ante and the Blind are equal (RULES.md), so a seat's result over Ante,
Blind and Play is, in Antes, ``base + m·w`` where ``m`` is the Play multiple
and, against one dealer hand,

- the player wins: ``w = +1``, ``base`` = the Ante (+1 if the dealer
  qualifies, else 0) + the Blind's pay for the player's hand (0 below the pay
  table);
- the dealer wins: ``w = −1``, ``base`` = −1 for the Blind, −1 more for the
  Ante if the dealer qualifies;
- a tie: both 0.

A fold loses Ante and Blind: −2. Trips does not depend on any decision and is
left out. Every value is an expectation over the cards the player could not
see, each equally likely:

- **river**: exact, over the dealer's possible hands (990 with nothing else
  known);
- **flop**: exact, over every turn and river card and, for each, every
  dealer hand, with the best river decision taken inside: the four unseen
  cards are valued once per set of four (178,365 dealer hands), and each
  split of a set into (turn and river, dealer) reads that value;
- **preflop**: from the shipped table of starting hands (``preflop``).

Extra knowledge (a dealer card seen, the other seats' hole cards) is
``known_dealer`` and ``dead``: those cards leave the unseen deck, and a
known dealer card is in the dealer's hand. The same code values an honest
player's options and an informed one's.

Values are floats: they are expectations, not money; what a seat lost is
turned into money (its Ante times the Antes lost) where money is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, lru_cache
from itertools import combinations

import numpy as np

from rounds.engine.cards import Card
from rounds.engine.evaluator import CATEGORIES
from rounds.engine.rules import TableRules
from rounds.engine.vocabulary import Decision

from . import hand_arrays as ha
from .streets import CHECK

FOLD_VALUE = -2.0  # the Ante and the Blind lost


@dataclass(frozen=True, slots=True)
class PayTable:
    """What the values need of a table's rules: the Blind's pays and the dealer's qualifier."""

    blind: tuple[float, ...]  # multiple by hand category, 0 where the Blind pushes
    qualifier: int  # the lowest hand value that qualifies the dealer

    @classmethod
    def of(cls, rules: TableRules) -> PayTable:
        return cls.from_pays(rules.blind_pays, rules.dealer_qualifier)

    @classmethod
    def from_pays(cls, blind_pays: Mapping[int, Decimal], qualifier_category: int) -> PayTable:
        blind = tuple(float(blind_pays.get(c, 0)) for c in range(len(CATEGORIES)))
        return cls(blind, qualifier_category << 20)


@dataclass(frozen=True, slots=True)
class Outcomes:
    """Expectations of ``base`` and ``w`` (see the module) over the dealer's hands, per board."""

    base: np.ndarray
    w: np.ndarray

    def play(self, multiple: int) -> np.ndarray:
        return self.base + multiple * self.w

    def river_best(self) -> np.ndarray:
        """The river's value per board when the player bets 1x or folds, whichever is worth more."""
        return np.maximum(self.play(1), FOLD_VALUE)


def _outcomes(player: np.ndarray, dealer: np.ndarray, pays: PayTable) -> Outcomes:
    """``player``: a value per board, shape (B,); ``dealer``: the dealer's values, shape (B, H)."""
    column = player[:, None]
    hands = dealer.shape[1]
    n_win = np.count_nonzero(dealer < column, axis=1)
    n_loss = np.count_nonzero(dealer > column, axis=1)
    n_qualified = np.count_nonzero(dealer >= pays.qualifier, axis=1)
    # A dealer who beats a qualifying hand qualifies too; below a pair the
    # player can lose to an unqualified dealer, and beat only unqualified ones.
    qualifies = player >= pays.qualifier
    n_win_q = np.where(qualifies, n_win - (hands - n_qualified), 0)
    n_loss_q = np.where(qualifies, n_loss, n_qualified)
    blind = np.asarray(pays.blind)[player >> 20]
    base = (n_win_q + n_win * blind - n_loss - n_loss_q) / hands
    w = (n_win - n_loss) / hands
    return Outcomes(base, w)


def _colex(sets: np.ndarray) -> np.ndarray:
    """The position of each sorted k-set (rows of ``sets``) in colexicographic order."""
    index = np.zeros(sets.shape[:-1], dtype=np.int64)
    for k in range(sets.shape[-1]):
        x = sets[..., k]
        # C(x, k+1), exactly, for small x.
        term = np.ones_like(x)
        for j in range(k + 1):
            term = term * (x - j) // (j + 1)
        index += term
    return index


@cache
def _combos(n: int, k: int) -> np.ndarray:
    """Every k-set of ``range(n)``, row ``i`` the set of colex position ``i``."""
    if k == 0:
        return np.zeros((1, 0), dtype=np.int64)
    sets = np.array(list(combinations(range(n), k)), dtype=np.int64)
    ordered = np.empty_like(sets)
    ordered[_colex(sets)] = sets
    return ordered


@dataclass(frozen=True, slots=True)
class _Splits:
    """How the unseen cards (positions ``0..n-1``) can fall: boards, and dealer hands on each.

    ``boards``: the board completions, ``(B, board_missing)`` positions;
    ``sets``: every set of all the missing cards, as positions, its first two
    and its rest (``head``: a pair's colex row; ``tail``: a pair's row, a
    single position, or nothing); ``split``: for each board and each dealer
    completion, the row of their set, ``(B, H)``.
    """

    boards: np.ndarray
    head: np.ndarray | None
    tail: np.ndarray | None
    tail_size: int
    split: np.ndarray


@cache
def _splits(unseen: int, board_missing: int, dealer_missing: int) -> _Splits:
    boards = _combos(unseen, board_missing)
    together = board_missing + dealer_missing
    sets = _combos(unseen, together)
    head = _colex(sets[:, :2]) if together >= 2 else None
    tail_size = max(together - 2, 0) if together >= 2 else together
    tail = sets[:, 2:] if together >= 2 else sets
    tail = _colex(tail) if tail_size == 2 else (tail[:, 0] if tail_size == 1 else None)
    if board_missing == 0:
        split = _colex(_combos(unseen, dealer_missing))[None, :]
    else:
        rest = np.array([[p for p in range(unseen) if p not in row] for row in boards.tolist()])
        dealer = _combos(unseen - board_missing, dealer_missing)
        union = np.concatenate(
            [np.broadcast_to(boards[:, None, :], (len(boards), len(dealer), board_missing)),
             rest[:, dealer]], axis=2,
        )
        union.sort(axis=2)
        split = _colex(union)
    return _Splits(boards, head, tail, tail_size, split)


def _set_sums(parts: np.ndarray, splits: _Splits, rows: np.ndarray | None = None) -> np.ndarray:
    """Each set's summed key (or mask), from the unseen cards' ``parts``, a pair's sum read once;
    with ``rows``, only those sets'."""
    pairs = _combos(len(parts), 2)
    by_pair = parts[pairs[:, 0]] + parts[pairs[:, 1]]
    head, tail = splits.head, splits.tail
    if rows is not None:
        head = head[rows] if head is not None else None
        tail = tail[rows] if tail is not None else None
    total = by_pair[head] if head is not None else 0
    if splits.tail_size == 2:
        total = total + by_pair[tail]
    elif splits.tail_size == 1:
        total = total + parts[tail]
    return total


def outcomes(
    hole: Sequence[Card],
    board: Sequence[Card],
    pays: PayTable,
    known_dealer: Sequence[Card] = (),
    dead: Sequence[Card] = (),
) -> Outcomes:
    """Per possible completion of the board, the expected ``base`` and ``w`` over the dealer's hands."""
    seen = {*hole, *board, *known_dealer, *dead}
    if len(seen) != len(hole) + len(board) + len(known_dealer) + len(dead):
        raise ValueError("a card is given twice")
    unseen = np.array([c for c in range(52) if c not in seen], dtype=np.int64)
    board_missing, dealer_missing = 5 - len(board), 2 - len(known_dealer)
    splits = _splits(len(unseen), board_missing, dealer_missing)
    board_key, board_mask = ha.key_of(board)
    hole_key, hole_mask = ha.key_of(hole)
    dealer_key, dealer_mask = ha.key_of(known_dealer)
    keys, masks = ha.CARD_KEYS[unseen], ha.CARD_MASKS[unseen]

    boards = splits.boards
    player = ha.values(
        board_key + hole_key + keys[boards].sum(axis=1),
        board_mask + hole_mask + masks[boards].sum(axis=1),
    )
    if dealer_missing == 0 and board_missing == 0:
        dealer = ha.values(np.array([[board_key + dealer_key]]), np.array([[board_mask + dealer_mask]]))
        return _outcomes(player, dealer, pays)
    by_set = ha.values(
        board_key + dealer_key + _set_sums(keys, splits),
        lambda rows: board_mask + dealer_mask + _set_sums(masks, splits, rows),
    )
    return _outcomes(player, by_set[splits.split], pays)


def river_values(hole, board, pays: PayTable, known_dealer=(), dead=()) -> dict[str, float]:
    """The river's options, ``river_1x`` and ``fold``, in Antes: exact."""
    if len(board) != 5:
        raise ValueError("the river is decided on five board cards")
    return dict(_river(tuple(hole), tuple(board), pays, tuple(known_dealer), tuple(dead)))


def flop_values(hole, board, pays: PayTable, known_dealer=(), dead=()) -> dict[str, float]:
    """The flop's options, ``flop_2x`` and ``check`` (then the best river option), in Antes: exact."""
    if len(board) != 3:
        raise ValueError("the flop is decided on three board cards")
    return dict(_flop(tuple(hole), tuple(board), pays, tuple(known_dealer), tuple(dead)))


# A seat's flop is valued when the player decides it (a simulated player) and
# again when it is scored: the second time is a lookup.
@lru_cache(maxsize=4096)
def _river(hole, board, pays, known_dealer, dead) -> tuple[tuple[str, float], ...]:
    played = outcomes(hole, board, pays, known_dealer, dead).play(1)
    return ((Decision.RIVER_1X.value, float(played[0])), (Decision.FOLD.value, FOLD_VALUE))


@lru_cache(maxsize=4096)
def _flop(hole, board, pays, known_dealer, dead) -> tuple[tuple[str, float], ...]:
    found = outcomes(hole, board, pays, known_dealer, dead)
    return (
        (Decision.FLOP_2X.value, float(found.play(2).mean())),
        (CHECK, float(found.river_best().mean())),
    )
