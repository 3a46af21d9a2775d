"""Simulated players for the game-protection tests and benchmarks: honest, weak and informed.

- ``OptimalPlayer`` takes the best option at every street (``values``, ``preflop``);
- ``WeakPlayer`` plays what many players play: 4x only with big pairs and
  big aces, 2x on the flop only with a made pair of his own, calls the river
  with any pair, folds the rest; choices that depend on his own cards alone;
- ``HoleCarder`` plays best, but on a share of hands sees one of the
  dealer's hole cards and then plays best knowing it (flop and river);
- ``Colluder`` plays best, and on the river knows the other seats' cards.

``deal_table`` seats them at one table, deals seeded rounds, lets each decide
street by street and scores every seat (``scoring.score_seats``), which is
what the service does with a posted round. ``dealer_averaged_result`` is a
seat's result averaged over every dealer hand the final board leaves:
the simulation's estimate of a line's worth with the dealer's luck taken out.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from rounds.engine.cards import Card
from rounds.engine.evaluator import PAIR, category_of, evaluate
from rounds.engine.rules import DECISION_MULTIPLES
from rounds.engine.vocabulary import Decision

from . import values as v
from .leak import PlayedSeat
from .preflop import PreflopTable
from .scoring import best_of, score_seats
from .streets import CHECK


class OptimalPlayer:
    def __init__(self, name: str, pays: v.PayTable, preflop: PreflopTable):
        self.name, self.pays, self.preflop = name, pays, preflop

    def preflop_choice(self, hole, dealer, rng) -> str:
        return best_of(self.preflop.values(hole, self.pays))

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        return best_of(v.flop_values(hole, flop, self.pays))

    def river_choice(self, hole, board, dealer, rng, others=()) -> str:
        return best_of(v.river_values(hole, board, self.pays))


class WeakPlayer(OptimalPlayer):
    def preflop_choice(self, hole, dealer, rng) -> str:
        high, low = sorted((c >> 2 for c in hole), reverse=True)
        if (high == low and high >= 7) or (high == 12 and low >= 10):  # 99+, AQ+
            return Decision.PREFLOP_4X.value
        return CHECK

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        ranks = [c >> 2 for c in flop]
        paired = hole[0] >> 2 == hole[1] >> 2 or any(c >> 2 in ranks for c in hole)
        return Decision.FLOP_2X.value if paired else CHECK

    def river_choice(self, hole, board, dealer, rng, others=()) -> str:
        made = category_of(evaluate([*hole, *board])) >= PAIR
        return Decision.RIVER_1X.value if made else Decision.FOLD.value


class HoleCarder(OptimalPlayer):
    def __init__(self, name, pays, preflop, share: float, position: int = 0):
        super().__init__(name, pays, preflop)
        self.share, self.position = share, position
        self.seen: Card | None = None

    def preflop_choice(self, hole, dealer, rng) -> str:
        self.seen = dealer[self.position] if rng.random() < self.share else None
        return super().preflop_choice(hole, dealer, rng)

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        if self.seen is None:
            return super().flop_choice(hole, flop, dealer, rng)
        return best_of(v.flop_values(hole, flop, self.pays, known_dealer=(self.seen,)))

    def river_choice(self, hole, board, dealer, rng, others=()) -> str:
        if self.seen is None:
            return super().river_choice(hole, board, dealer, rng)
        return best_of(v.river_values(hole, board, self.pays, known_dealer=(self.seen,)))


class Colluder(OptimalPlayer):
    def river_choice(self, hole, board, dealer, rng, others=()) -> str:
        return best_of(v.river_values(hole, board, self.pays, dead=tuple(others)))


def play_hand(player, hole, board, dealer, rng, others=()) -> str:
    """The player's decision code for the round, street by street (``others``: the other seats' cards)."""
    choice = player.preflop_choice(hole, dealer, rng)
    if choice != CHECK:
        return choice
    choice = player.flop_choice(hole, board[:3], dealer, rng)
    if choice != CHECK:
        return choice
    return player.river_choice(hole, board, dealer, rng, others)


def dealer_averaged_result(hole, board, decision: str, pays: v.PayTable) -> float:
    """The seat's result in Antes on this board, averaged over the dealer's possible hands."""
    if decision == Decision.FOLD.value:
        return v.FOLD_VALUE
    return float(v.outcomes(hole, board, pays).play(DECISION_MULTIPLES[decision])[0])


@dataclass(frozen=True, slots=True)
class DealtSeat:
    player: str
    hole: tuple[Card, Card]
    decision: str


@dataclass(frozen=True, slots=True)
class DealtRound:
    number: int
    board: tuple[Card, ...]
    dealer: tuple[Card, Card]
    seats: tuple[DealtSeat, ...]


def deal_rounds(players: Sequence[OptimalPlayer], rounds: int, seed: int) -> list[DealtRound]:
    rng = random.Random(seed)
    dealt = []
    for number in range(rounds):
        deck = list(range(52))
        rng.shuffle(deck)
        board, dealer = tuple(deck[:5]), (deck[5], deck[6])
        holes = [(deck[7 + 2 * i], deck[8 + 2 * i]) for i in range(len(players))]
        seats = []
        for player, hole in zip(players, holes):
            others = [c for h in holes if h is not hole for c in h]
            seats.append(DealtSeat(player.name, hole, play_hand(player, hole, board, dealer, rng, others)))
        dealt.append(DealtRound(number, board, dealer, tuple(seats)))
    return dealt


def scored_seats(
    dealt: Sequence[DealtRound], pays: v.PayTable, preflop: PreflopTable, dealer_name: str = "D-1",
    collusion: bool = True,
) -> list[PlayedSeat]:
    """Every seat of ``dealt`` scored as the service scores a posted round."""
    played = []
    for round_ in dealt:
        others = [[c for s in round_.seats if s is not seat for c in s.hole] for seat in round_.seats]
        scores = score_seats(
            [s.hole for s in round_.seats], [s.decision for s in round_.seats], round_.board, round_.dealer,
            pays, preflop, others if collusion else None,
        )
        for seat, score in zip(round_.seats, scores):
            companions = tuple(s.player for s in round_.seats if s is not seat)
            played.append(PlayedSeat((round_.number, seat.player), seat.player, dealer_name, companions, score))
    return played


def simulated_house_edge(player: OptimalPlayer, hands: int, seed: int) -> tuple[float, float]:
    """The player's mean result in Antes over seeded deals, and its standard error.

    Each deal's result is averaged over every turn, river and dealer hand the
    flop leaves, given the player's choices (4x before the flop, or the
    better flop option): the flop's luck is kept, the rest averaged out, so
    the estimate needs thousands of deals where dealt results need millions.
    """
    rng = random.Random(seed)
    results = []
    for _ in range(hands):
        deck = rng.sample(range(52), 5)
        hole, flop = (deck[0], deck[1]), tuple(deck[2:5])
        choice = player.preflop_choice(hole, (), rng)
        if choice == CHECK:
            options = v.flop_values(hole, flop, player.pays)
            results.append(max(options.values()))
        else:
            results.append(float(v.outcomes(hole, flop, player.pays).play(DECISION_MULTIPLES[choice]).mean()))
    mean = sum(results) / hands
    variance = sum((r - mean) ** 2 for r in results) / (hands - 1)
    return mean, (variance / hands) ** 0.5
