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
  dealer hand, with the best river decision taken inside;
- **preflop**: from the shipped table of starting hands (``preflop``).

What a player could see is a ``View``: his hole cards and any extra
knowledge (a dealer card seen, the other seats' hole cards: ``known_dealer``
and ``dead``). The same code values an honest player's options and an
informed one's.

The seats of a round share its board and its dealer cards, so the dealer's
hands are valued once for all of them (``_dealer_hands``: from every card
off the board and not known to be the dealer's, each set of cards still to
come valued once, 17,296 sets of three on a flop with a dealer card known),
and each view then counts, board completion by board completion, the hands
it beats, loses to and that qualify, leaving out what its own cards and the
dead ones make impossible (``_counted``; on the river, ``_river_counted``).
A view valued alone on the flop shares with no one: its dealer hands leave
its own cards out from the start.

Values are floats: they are expectations, not money; what a seat lost is
turned into money (its Ante times the Antes lost) where money is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, lru_cache
from itertools import combinations
from math import comb

import numpy as np

from game import hand_arrays as ha
from game.cards import Card
from game.evaluator import CATEGORIES
from game.rules import TableRules
from game.vocabulary import Decision

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


def _expectations(player, n_win, n_loss, n_qualified, hands: int | np.ndarray, pays: PayTable) -> Outcomes:
    """``base`` and ``w`` from how many of the dealer's ``hands`` the player's hand beats, loses to,
    and how many qualify: the one place a value is made of counts."""
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
    """How the cards still to come (positions ``0..n-1``) can fall: boards, and dealer hands on each.

    ``boards``: the board completions, ``(B, board_missing)`` positions;
    ``sets``: every set of all the missing cards, as positions, its first two
    and its rest (``head``: a pair's colex row; ``tail``: a pair's row, a
    single position, or nothing); ``split``: for each dealer completion and
    each board, the row of their set, ``(H, B)``, the dealer's completions
    of a board being ``_combos(n - board_missing, dealer_missing)`` of the
    positions the board leaves, in order; ``among``: ``(n, B)``, where each
    position stands among those each board leaves.

    Dealer completions run down and boards across: a seat's counting sums
    down the columns, whole rows at a time.
    """

    boards: np.ndarray
    head: np.ndarray | None
    tail: np.ndarray | None
    tail_size: int
    sets: int
    split: np.ndarray
    among: np.ndarray


@cache
def _splits(unseen: int, board_missing: int, dealer_missing: int) -> _Splits:
    boards = _combos(unseen, board_missing)
    together = board_missing + dealer_missing
    sets = _combos(unseen, together)
    head = _colex(sets[:, :2]) if together >= 2 else None
    tail_size = max(together - 2, 0) if together >= 2 else together
    tail = sets[:, 2:] if together >= 2 else sets
    tail = _colex(tail) if tail_size == 2 else (tail[:, 0] if tail_size == 1 else None)
    rest = np.array([[p for p in range(unseen) if p not in row] for row in boards.tolist()])
    dealer = _combos(unseen - board_missing, dealer_missing)
    union = np.concatenate(
        [np.broadcast_to(boards[:, None, :], (len(boards), len(dealer), board_missing)),
         rest[:, dealer]], axis=2,
    )
    union.sort(axis=2)
    positions = np.arange(unseen)
    among = positions - np.count_nonzero(boards[:, :, None] < positions, axis=1)
    among[(boards[:, :, None] == positions).any(axis=1)] = 0  # on the board: never read
    return _Splits(
        boards, head, tail, tail_size, len(sets),
        np.ascontiguousarray(_colex(union).T), np.ascontiguousarray(among.T),
    )


def _set_sums(parts: np.ndarray, splits: _Splits, rows: np.ndarray | None = None) -> np.ndarray:
    """Each set's summed key (or mask), from the cards' ``parts``, a pair's sum read once;
    with ``rows``, only those sets'."""
    pairs = _combos(len(parts), 2)
    by_pair = parts[pairs[:, 0]] + parts[pairs[:, 1]]
    head, tail = splits.head, splits.tail
    if rows is not None:
        head = head[rows] if head is not None else None
        tail = tail[rows] if tail is not None else None
    total = by_pair[head] if head is not None else np.zeros(splits.sets if rows is None else len(rows), np.int64)
    if splits.tail_size == 2:
        total = total + by_pair[tail]
    elif splits.tail_size == 1:
        total = total + parts[tail]
    return total


@dataclass(frozen=True, slots=True)
class _DealerHands:
    """The dealer's hand valued for every way the cards to come can fall on a board.

    ``cards``: every card neither on the board nor known to be the dealer's,
    sorted; the board's and the dealer's completions are drawn from them
    (``splits``, by position), ``values[h, b]`` is the dealer's hand with
    dealer completion ``h`` on board completion ``b``, and ``board_keys`` and
    ``board_masks`` each board completion's summed key and mask. Without
    ``left_out`` no seat's cards are left out: every seat of a round shares
    these, and each then keeps what its own cards (and any dead ones) leave
    possible; a lone view's own cards are left out from the start.
    """

    cards: np.ndarray
    dealer_missing: int
    splits: _Splits
    values: np.ndarray
    board_keys: np.ndarray
    board_masks: np.ndarray


@lru_cache(maxsize=8)  # a round's flop and river, and its dealer cards each known in turn
def _dealer_hands(
    board: tuple[Card, ...], known_dealer: tuple[Card, ...], left_out: tuple[Card, ...] = (),
) -> _DealerHands:
    """``left_out``: cards no view valued against these can have (a lone view's own)."""
    cards = np.array([c for c in range(52) if c not in (*board, *known_dealer, *left_out)], dtype=np.int64)
    splits = _splits(len(cards), 5 - len(board), 2 - len(known_dealer))
    dealer_key, dealer_mask = ha.key_of((*board, *known_dealer))
    keys, masks = ha.CARD_KEYS[cards], ha.CARD_MASKS[cards]
    by_set = ha.values(
        dealer_key + _set_sums(keys, splits),
        lambda rows: dealer_mask + _set_sums(masks, splits, rows),
    )
    completions = cards[splits.boards]
    return _DealerHands(
        cards, 2 - len(known_dealer), splits, np.take(by_set, splits.split),
        ha.CARD_KEYS[completions].sum(axis=1), ha.CARD_MASKS[completions].sum(axis=1),
    )


def pair_row(cards: Sequence[Card], pair: Sequence[Card]) -> int:
    """The colex row of ``pair`` among the pairs of ``cards`` (sorted), as ``_combos`` orders them."""
    a, b = sorted(np.searchsorted(np.asarray(cards), pair).tolist())
    return a + b * (b - 1) // 2


@cache
def _pairs_holding(count: int) -> np.ndarray:
    """Row ``q``: the colex rows of the pairs of ``range(count)`` that hold position ``q``."""
    pairs = _combos(count, 2)
    return np.array([np.flatnonzero((pairs == q).any(axis=1)) for q in range(count)])


@dataclass(frozen=True, slots=True)
class View:
    """What a player could see when deciding: his hole cards and any extra knowledge, dealer cards
    he knows (``known_dealer``) and cards he knows are elsewhere (``dead``)."""

    hole: tuple[Card, ...]
    known_dealer: tuple[Card, ...] = ()
    dead: tuple[Card, ...] = ()

    @classmethod
    def of(cls, hole, known_dealer=(), dead=()) -> View:
        return cls(tuple(hole), tuple(known_dealer), tuple(dead))

    @property
    def elsewhere(self) -> tuple[Card, ...]:
        """The cards in no completion of his board or the dealer's hand: his own and the dead."""
        return (*self.hole, *self.dead)


def _outcomes_of(views: Sequence[View], board: tuple[Card, ...], pays: PayTable) -> list[Outcomes]:
    for view in views:
        given = (*view.hole, *board, *view.known_dealer, *view.dead)
        if len(set(given)) != len(given):
            raise ValueError("a card is given twice")
    if len(board) == 5:
        return _river_counted(views, board, pays)
    found: list[Outcomes] = [None] * len(views)  # type: ignore[list-item]
    alike: dict[tuple[tuple[Card, ...], int], list[int]] = {}
    for i, view in enumerate(views):
        alike.setdefault((tuple(sorted(view.known_dealer)), len(view.elsewhere)), []).append(i)
    for (known_dealer, _), at in alike.items():
        # A view alone shares the dealer's hands with no one: they leave its own cards out.
        left_out = tuple(sorted(views[at[0]].elsewhere)) if len(at) == 1 else ()
        hands = _dealer_hands(tuple(sorted(board)), known_dealer, left_out)
        for i, outcome in zip(at, _counted(hands, board, pays, [views[i] for i in at])):
            found[i] = outcome
    return found


def _counted(hands: _DealerHands, board, pays: PayTable, views: Sequence[View]) -> list[Outcomes]:
    """Every view's hand against every dealer hand on every board completion, counted at once.

    The views know the same dealer cards (``hands``) and have as many cards
    elsewhere, which are in none of their completions: a view's boards
    holding one are left out, and the dealer completions holding one are
    taken back off its counts (on two missing dealer cards, a pair holding
    two of them was taken back twice and is given back once).
    """
    splits, seats = hands.splits, len(views)
    boards, dealer = len(splits.boards), hands.values  # dealer: (H, B)
    in_deck = set(hands.cards.tolist())
    elsewhere = np.searchsorted(  # (S, e): the positions of each view's cards elsewhere
        hands.cards, [[c for c in view.elsewhere if c in in_deck] for view in views],
    ).reshape(seats, -1)
    is_elsewhere = np.zeros((seats, len(hands.cards)), dtype=bool)
    is_elsewhere[np.arange(seats)[:, None], elsewhere] = True
    held_elsewhere = np.zeros((seats, boards), dtype=bool)
    for column in splits.boards.T:
        held_elsewhere |= is_elsewhere[:, column]
    possible = ~held_elsewhere  # (S, B): each view's boards

    own = np.array([ha.key_of((*view.hole, *board)) for view in views], dtype=np.int64)  # (S, 2)
    # A board a view cannot have is valued as its first possible one, and never read.
    rows = np.where(possible, np.arange(boards), possible.argmax(axis=1)[:, None])
    player = ha.values(own[:, :1] + hands.board_keys[rows], own[:, 1:] + hands.board_masks[rows])
    row = player[:, None, :]

    def count(held: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """How many of ``held`` (dealer hands down, boards across) each view beats, loses to, and
        how many qualify; counts fit 16 bits (at most 1,081 hands, 2,162 taken back)."""
        return (
            (held < row).sum(axis=-2, dtype=np.int16),
            (held > row).sum(axis=-2, dtype=np.int16),
            (held >= pays.qualifier).sum(axis=-2, dtype=np.int16),
        )

    n_win, n_loss, qualified = count(dealer)
    n_qualified = np.broadcast_to(qualified, n_win.shape).copy()  # the same for every view, until taken back
    left = len(hands.cards) - splits.boards.shape[1]  # the positions each board leaves the dealer
    impossible = comb(left, hands.dealer_missing) - comb(left - elsewhere.shape[1], hands.dealer_missing)
    if impossible:
        among = splits.among[elsewhere]  # (S, e, B): where each card elsewhere stands, board by board
        taken: list[tuple[np.ndarray, int]] = []
        if hands.dealer_missing == 1:
            taken.append((among, -1))
        else:
            holding = np.moveaxis(_pairs_holding(left)[among], -1, -2)  # (S, e, pairs, B)
            taken.append((holding.reshape(seats, -1, boards), -1))
            low, high = np.triu_indices(elsewhere.shape[1], k=1)
            a, b = np.minimum(among[:, low], among[:, high]), np.maximum(among[:, low], among[:, high])
            taken.append((a + b * (b - 1) // 2, +1))  # the colex row of the pair (a, b)
        for columns, sign in taken:
            for total, held in zip((n_win, n_loss, n_qualified), count(dealer[columns, np.arange(boards)])):
                total += sign * held
    counted = _expectations(player, n_win, n_loss, n_qualified, len(dealer) - impossible, pays)
    return [Outcomes(counted.base[s][possible[s]], counted.w[s][possible[s]]) for s in range(seats)]


_ELSEWHERE, _KNOWN = 1, 2  # what a view knows of a card the river leaves


def _river_counted(views: Sequence[View], board: tuple[Card, ...], pays: PayTable) -> list[Outcomes]:
    """On a complete board the dealer holds one of the pairs the board leaves: each is valued once
    for every view, and a view keeps those it leaves possible (holding every dealer card it knows
    and none of its cards elsewhere)."""
    hands = _dealer_hands(tuple(sorted(board)), ())
    dealer = hands.values[:, 0]
    pairs = _combos(len(hands.cards), 2)
    marks = np.zeros((len(views), len(hands.cards)), dtype=np.int8)
    for mark, cards_of in ((_ELSEWHERE, lambda view: view.elsewhere), (_KNOWN, lambda view: view.known_dealer)):
        at = [(i, card) for i, view in enumerate(views) for card in cards_of(view)]
        if at:
            seat, card = zip(*at)
            marks[list(seat), np.searchsorted(hands.cards, card)] = mark
    first, second = marks[:, pairs[:, 0]], marks[:, pairs[:, 1]]
    known = np.array([len(view.known_dealer) for view in views])[:, None]
    possible = (first != _ELSEWHERE) & (second != _ELSEWHERE) & (
        (first == _KNOWN).astype(np.int8) + (second == _KNOWN) == known
    )
    own = np.array([ha.key_of((*view.hole, *board)) for view in views], dtype=np.int64)
    player = ha.values(own[:, 0], own[:, 1])
    column = player[:, None]
    n_win = np.count_nonzero(possible & (dealer < column), axis=1)
    n_loss = np.count_nonzero(possible & (dealer > column), axis=1)
    n_qualified = np.count_nonzero(possible & (dealer >= pays.qualifier), axis=1)
    counted = _expectations(player, n_win, n_loss, n_qualified, np.count_nonzero(possible, axis=1), pays)
    return [Outcomes(counted.base[i:i + 1], counted.w[i:i + 1]) for i in range(len(views))]


def outcomes(
    hole: Sequence[Card],
    board: Sequence[Card],
    pays: PayTable,
    known_dealer: Sequence[Card] = (),
    dead: Sequence[Card] = (),
) -> Outcomes:
    """Per possible completion of the board, the expected ``base`` and ``w`` over the dealer's hands."""
    return _outcomes_of([View.of(hole, known_dealer, dead)], tuple(board), pays)[0]


# A seat's streets are valued when a simulated player decides them and again
# when they are scored: the second time is a lookup. The oldest goes first.
_VALUED: dict[tuple[View, tuple[Card, ...], PayTable], tuple[tuple[str, float], ...]] = {}
_VALUED_MAX = 8192


def forget_values() -> None:
    """Empty the memo of valued streets (a benchmark times the valuing itself)."""
    _VALUED.clear()


def _options(board: tuple[Card, ...], found: Outcomes) -> tuple[tuple[str, float], ...]:
    if len(board) == 5:
        return ((Decision.RIVER_1X.value, float(found.play(1)[0])), (Decision.FOLD.value, FOLD_VALUE))
    return (
        (Decision.FLOP_2X.value, float(found.play(2).mean())),
        (CHECK, float(found.river_best().mean())),
    )


def values_of(views: Sequence[View], board: Sequence[Card], pays: PayTable) -> list[dict[str, float]]:
    """Each view's options on a street, in Antes, exact: the flop's (``flop_2x``, ``check`` then
    the best river option) on three board cards, the river's (``river_1x``, ``fold``) on five.

    The views of a round share its board: the dealer's hands are valued once
    for all of them (once for each set of dealer cards they know, on the flop).
    """
    board = tuple(board)
    if len(board) not in (3, 5):
        raise ValueError("options are valued on the flop (three board cards) or the river (five)")
    wanted = [(view, board, pays) for view in views]
    cached = {key: _VALUED[key] for key in wanted if key in _VALUED}
    missing = [key for key in dict.fromkeys(wanted) if key not in cached]
    if missing:
        for key, found in zip(missing, _outcomes_of([key[0] for key in missing], board, pays)):
            cached[key] = _options(board, found)
            if len(_VALUED) >= _VALUED_MAX:
                _VALUED.pop(next(iter(_VALUED)), None)
            _VALUED[key] = cached[key]
    return [dict(cached[key]) for key in wanted]


def river_values(hole, board, pays: PayTable, known_dealer=(), dead=()) -> dict[str, float]:
    """The river's options, ``river_1x`` and ``fold``, in Antes: exact."""
    if len(board) != 5:
        raise ValueError("the river is decided on five board cards")
    return values_of([View.of(hole, known_dealer, dead)], board, pays)[0]


def flop_values(hole, board, pays: PayTable, known_dealer=(), dead=()) -> dict[str, float]:
    """The flop's options, ``flop_2x`` and ``check`` (then the best river option), in Antes: exact."""
    if len(board) != 3:
        raise ValueError("the flop is decided on three board cards")
    return values_of([View.of(hole, known_dealer, dead)], board, pays)[0]


@dataclass(frozen=True, slots=True)
class Unseen:
    """What each card a player could not see would have told him on the river.

    ``cards``: the cards he could not see (neither his nor on the board), in
    order; ``bet_with_dealer_card[i]``: whether ``river_1x`` is best (over
    ``fold``) had he known ``cards[i]`` to be a dealer card;
    ``bet_with_dead_pair[r]``: whether it is best had he known the pair of
    colex row ``r`` of ``cards`` to be elsewhere (a companion's hole cards).
    Each is valued exactly as ``river_values`` values that knowledge, so the
    actual card's entry is the informed best the scoring reports.
    """

    cards: tuple[Card, ...]
    bet_with_dealer_card: np.ndarray
    bet_with_dead_pair: np.ndarray

    def pair_row(self, pair: Sequence[Card]) -> int:
        return pair_row(self.cards, pair)

    def pairs(self) -> np.ndarray:
        """``(n, 2)``: the unseen pairs' cards, row ``r`` the pair of ``pair_row`` ``r``."""
        return np.asarray(self.cards, dtype=np.int64)[_combos(len(self.cards), 2)]


def river_unseen(hole: Sequence[Card], board: Sequence[Card], pays: PayTable) -> Unseen:
    """Every unseen card's and every unseen pair's informed best on the river (``Unseen``): the
    collusion test's shares and the hole-carding test's river read the same one."""
    return _river_unseen(tuple(hole), tuple(sorted(board)), pays)


@lru_cache(maxsize=16)
def _river_unseen(hole: tuple[Card, ...], board: tuple[Card, ...], pays: PayTable) -> Unseen:
    """Every unseen card's and every unseen pair's informed best on the river (``Unseen``).

    The dealer's hands of the board are those ``river_values`` counts (every
    pair the board leaves, valued once for a round); the player's unseen
    pairs are the ones without his cards. A dealer card ``c`` leaves the
    pairs holding it; a dead pair ``{a, b}`` leaves all but those holding
    ``a`` or ``b``: the pair's counts are the whole less each card's, with
    the pair ``{a, b}`` itself given back once.
    """
    if len(board) != 5:
        raise ValueError("the river is decided on five board cards")
    hands = _dealer_hands(board, ())
    every = hands.cards.tolist()
    kept = [i for i, card in enumerate(every) if card not in hole]
    positions = np.array(kept)
    pairs = _combos(len(kept), 2)
    full_a, full_b = positions[pairs[:, 0]], positions[pairs[:, 1]]
    dealer = hands.values[:, 0][full_a + full_b * (full_b - 1) // 2]  # the player's unseen pairs, his colex order
    key, mask = ha.key_of((*hole, *board))
    player = ha.values(np.array([key], dtype=np.int64), np.array([mask], dtype=np.int64))[0]
    counts = np.stack([dealer < player, dealer > player, dealer >= pays.qualifier]).astype(np.int64)  # (3, P)
    holding = _pairs_holding(len(kept))  # (cards, pairs holding each)
    by_card = counts[:, holding].sum(axis=2)  # (3, cards)
    with_card = _expectations(player, *by_card, holding.shape[1], pays)
    total = counts.sum(axis=1, keepdims=True)
    without = total - by_card[:, pairs[:, 0]] - by_card[:, pairs[:, 1]] + counts
    without_pair = _expectations(player, *without, len(dealer) - 2 * holding.shape[1] + 1, pays)
    return Unseen(
        tuple(every[i] for i in kept),
        with_card.play(1) >= FOLD_VALUE,
        without_pair.play(1) >= FOLD_VALUE,
    )
