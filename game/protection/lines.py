"""What a companion's shown line says of his cards: the collusion test's null for a player who reads the table.

At the river a player has seen every companion's choices before the flop
and on the flop, and the river choice of each who acted before him. Those
lines speak of the companions' cards (a 4x before the flop is seldom
rags), so a player who reads them legally chooses as a companion's cards
say more often than a uniform draw of those cards would have him. Given
every line he saw, though, his choice no longer depends on which cards the
companion holds: the collusion test's chance ``q`` is counted over the
companion's possible pairs each weighted by how likely his shown line is
with it, ``P(line | pair)``.

That likelihood is estimated from the table's play: how often each
option was chosen, street by street, with hands of each kind (``buckets``):
the starting hand's class before the flop, and on the flop and the river
the hand's category and whether the hole cards make it (a pair on the
board is not a pair in the hand). The counts of every seat of the day, and
of the table's days before it (``LineModel.pooled``: ``PROTECTION_LINE_DAYS``
in all), make the table's frequencies, shrunk (``TABLE_PRIOR``) toward the street's, and
before the flop toward those of the class's group of like strength; the
companion's own seats make his, shrunk toward the table's
(``PLAYER_PRIOR``). The round being scored is left out of both
(``LineModel.without``), so the weights never read the cards they weigh.

This is an estimate, not a count: a companion whose play the counts
describe badly leaves some of the table-watcher's edge in the null. The
bench measures what is left (docs/PROTECTION.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache

import numpy as np

from game import hand_arrays as ha
from game.cards import Card
from game.evaluator import CATEGORIES, HIGH_CARD, PAIR, THREE_OF_A_KIND

from .preflop import shipped_table, starting_hand, starting_hands
from .streets import BOARD_SEEN, CHECK, OPTIONS, Street

TABLE_PRIOR = 8.0  # pseudo-counts of the coarser frequencies in each bucket of the table's
PLAYER_PRIOR = 8.0  # pseudo-counts of the table's frequencies in each bucket of a player's
FEW_PAIRS = 64  # fewer pairs than this are valued as they are, not from the board's table
STRENGTH_GROUPS = 13  # the starting hands in groups of like strength, thirteen classes each
BUCKETS = {Street.PREFLOP.value: 169, Street.FLOP.value: 2 * len(CATEGORIES), Street.RIVER.value: 2 * len(CATEGORIES)}
_OPTION_AT = {street: {o: i for i, o in enumerate(options)} for street, options in OPTIONS.items()}

Plan = Sequence[tuple[str, str]]  # a seat's (street, option) choices in order, as ``streets.choices`` gives them


@cache
def _group_of() -> np.ndarray:
    """``(169,)``: each starting-hand class's group of like strength (0 the strongest), by how much
    4x beats checking in the shipped preflop table: a class seldom seen borrows its group's frequencies."""
    values = shipped_table().classes
    gaps = [values[name].values["preflop_4x"] - values[name].values[CHECK] for name in starting_hands()]
    order = np.argsort(-np.asarray(gaps), kind="stable")
    groups = np.empty(len(gaps), dtype=np.int64)
    groups[order] = np.arange(len(gaps)) * STRENGTH_GROUPS // len(gaps)
    return groups


@cache
def _class_of() -> np.ndarray:
    """``(52, 52)``: the starting-hand class index of every two cards."""
    index = {name: i for i, name in enumerate(starting_hands())}
    table = np.zeros((52, 52), dtype=np.int64)
    for a in range(52):
        for b in range(52):
            if a != b:
                table[a, b] = index[starting_hand((a, b))]
    return table


def _board_category(board: Sequence[Card]) -> int:
    """The category the board alone makes (three cards: a pair or three of a kind at most)."""
    if len(board) >= 5:
        return int(ha.values_of(np.asarray([board]))[0] >> 20)
    ranks = sorted(card >> 2 for card in board)
    most = max(ranks.count(r) for r in ranks)
    return {1: HIGH_CARD, 2: PAIR, 3: THREE_OF_A_KIND}[most]


def buckets(pairs: np.ndarray, board: Sequence[Card]) -> dict[str, np.ndarray]:
    """Each pair's bucket on each street the board has reached: ``pairs`` an ``(n, 2)`` array of cards,
    none of them on the board (many pairs read the board's table of every pair, a few are valued as
    they are)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if len(pairs) < FEW_PAIRS:
        return _valued(pairs, tuple(board))
    return {street: table[pairs[:, 0], pairs[:, 1]] for street, table in _board_buckets(tuple(board)).items()}


def _valued(pairs: np.ndarray, board: tuple[Card, ...]) -> dict[str, np.ndarray]:
    found = {Street.PREFLOP.value: _class_of()[pairs[:, 0], pairs[:, 1]]}
    for street in (Street.FLOP.value, Street.RIVER.value):
        seen = board[: BOARD_SEEN[street]]
        if len(seen) < BOARD_SEEN[street]:
            break
        hands = np.concatenate([pairs, np.broadcast_to(np.asarray(seen, dtype=np.int64), (len(pairs), len(seen)))],
                               axis=1)
        category = ha.values_of(hands) >> 20
        found[street] = 2 * category + (category > _board_category(seen))
    return found


@lru_cache(maxsize=8)
def _board_buckets(board: tuple[Card, ...]) -> dict[str, np.ndarray]:
    """``(52, 52)`` per street: the bucket of every two cards with this board (a round's seats and
    every river decision in it share one board, so it is valued once)."""
    a, b = np.triu_indices(52, 1)
    free = ~np.isin(np.stack([a, b], axis=1), board).any(axis=1)  # a pair holding a board card has no hand
    found = {Street.PREFLOP.value: _class_of()}
    for street, table in _valued(np.stack([a[free], b[free]], axis=1), board).items():
        if street != Street.PREFLOP.value:
            found[street] = np.zeros((52, 52), dtype=np.int64)
            found[street][a[free], b[free]] = found[street][b[free], a[free]] = table
    return found


def _counts() -> dict[str, np.ndarray]:
    return {street: np.zeros((BUCKETS[street], len(OPTIONS[street])), dtype=np.float64) for street in OPTIONS}


@dataclass(frozen=True, slots=True)
class ShownSeat:
    """A seat as the line model counts it: who, his cards, the board, and what he chose."""

    player: str
    hole: tuple[Card, Card]
    board: tuple[Card, ...]
    plan: tuple[tuple[str, str], ...]


@dataclass(slots=True)
class LineModel:
    """The day's counts of each option by street and bucket: every seat's, and each player's."""

    table: dict[str, np.ndarray] = field(default_factory=_counts)
    players: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    _chances: dict[tuple[str, str], np.ndarray] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, seats: Iterable[ShownSeat]) -> LineModel:
        model = cls()
        model._add(seats, 1.0)
        return model

    def _add(self, seats: Iterable[ShownSeat], sign: float) -> None:
        """Count ``seats`` (``sign`` -1: take them out), the seats of a board bucketed together."""
        self._chances.clear()
        by_board: dict[tuple[Card, ...], list[ShownSeat]] = {}
        for seat in seats:
            by_board.setdefault(seat.board, []).append(seat)
        for board, sharing in by_board.items():
            found = buckets(np.asarray([seat.hole for seat in sharing]), board)
            for i, seat in enumerate(sharing):
                mine = self.players.setdefault(seat.player, _counts())
                for street, option in seat.plan:
                    at = (int(found[street][i]), _OPTION_AT[street][option])
                    self.table[street][at] += sign
                    mine[street][at] += sign

    def pooled(self, earlier: Iterable[LineModel]) -> LineModel:
        """A model of this one's counts and ``earlier``'s (the table's days before): more of each
        bucket seen, so a table that deals few rounds a day is described by its play, not its prior."""
        pooled = LineModel({s: a.copy() for s, a in self.table.items()},
                           {p: {s: a.copy() for s, a in c.items()} for p, c in self.players.items()})
        for other in earlier:
            for street, counts in other.table.items():
                pooled.table[street] += counts
            for player, theirs in other.players.items():
                mine = pooled.players.setdefault(player, _counts())
                for street, counts in theirs.items():
                    mine[street] += counts
        return pooled

    def counts_json(self) -> dict:
        """The counts, sparse (``[bucket, option, count]`` each), as ``from_counts_json`` reads them."""
        def sparse(counts: dict[str, np.ndarray]) -> dict[str, list]:
            return {street: [[int(b), int(o), float(a[b, o])] for b, o in zip(*np.nonzero(a))]
                    for street, a in counts.items()}
        return {"table": sparse(self.table), "players": {p: sparse(c) for p, c in sorted(self.players.items())}}

    @classmethod
    def from_counts_json(cls, data: Mapping) -> LineModel:
        def dense(sparse: Mapping[str, list]) -> dict[str, np.ndarray]:
            counts = _counts()
            for street, cells in sparse.items():
                for bucket, option, count in cells:
                    counts[street][bucket, option] = count
            return counts
        return cls(dense(data["table"]), {p: dense(c) for p, c in data["players"].items()})

    def without(self, seats: Iterable[ShownSeat]) -> LineModel:
        """The model with ``seats`` (a round's) left out: the counts its own weights may read."""
        seats = list(seats)
        theirs = {seat.player for seat in seats}
        copy = LineModel(
            {s: a.copy() for s, a in self.table.items()},
            {p: ({s: a.copy() for s, a in c.items()} if p in theirs else c) for p, c in self.players.items()},
        )
        copy._add(seats, -1.0)
        return copy

    def chances(self, player: str, street: str) -> np.ndarray:
        """``(buckets, options)``: the chance of each option with a hand of each bucket, for ``player``
        (worked out once for a model: counts are added only while it is made)."""
        known = self._chances.get((player, street))
        if known is None:
            known = self._chances[player, street] = self._chances_now(player, street)
        return known

    def _chances_now(self, player: str, street: str) -> np.ndarray:
        table_chance = self._table_chances(street)
        own = self.players.get(player)
        if own is None:
            return table_chance
        mine = own[street]
        return (mine + PLAYER_PRIOR * table_chance) / (mine.sum(axis=1, keepdims=True) + PLAYER_PRIOR)

    def _table_chances(self, street: str) -> np.ndarray:
        """The table's chances, every player's shrinkage target (kept with the players' under ``""``:
        no seat's name is empty, ``scoring`` names a seat without a player by its number)."""
        known = self._chances.get(("", street))
        if known is not None:
            return known
        table = self.table[street]
        coarse = (table.sum(axis=0) + 1.0) / (table.sum() + table.shape[1])  # the street's
        if street == Street.PREFLOP.value:
            groups = np.zeros((STRENGTH_GROUPS, table.shape[1]))
            np.add.at(groups, _group_of(), table)
            coarse = ((groups + TABLE_PRIOR * coarse) / (groups.sum(axis=1, keepdims=True) + TABLE_PRIOR))[_group_of()]
        known = self._chances["", street] = (
            (table + TABLE_PRIOR * coarse) / (table.sum(axis=1, keepdims=True) + TABLE_PRIOR))
        return known

    def weights(self, player: str, found: Mapping[str, np.ndarray], shown: Plan) -> np.ndarray:
        """How likely ``player``'s shown line is with each pair (``found``: the pairs' ``buckets``)."""
        weight = np.ones(len(found[Street.PREFLOP.value]))
        for street, option in shown:
            weight = weight * self.chances(player, street)[found[street], _OPTION_AT[street][option]]
        return weight
