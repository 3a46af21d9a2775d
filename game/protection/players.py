"""Simulated players for the game-protection tests and benchmarks: honest ones of many styles, and cheats.

Honest players choose from their own cards, the board and their own dice
only, never from a card they could not see:

- ``OptimalPlayer`` takes the best option at every street (``values``,
  ``preflop``; the flop from the shipped table of flops when given one);
- ``NoisyPlayer`` takes the best option of values blurred by his own noise;
- ``RulePlayer`` plays rules handed in as functions: the published basic
  strategy (``game.strategy``, written from its rules, not from this
  project's values) is one;
- ``WeakPlayer`` plays what many players play: 4x only with big pairs and
  big aces, 2x on the flop only with a made pair of his own, calls the river
  with any pair, folds the rest;
- ``TightPlayer``, ``LoosePlayer``, ``CallingStation`` (checks to the river
  and always calls) and ``RandomPlayer`` (any option, at random).

Honest players who read the table as the rules let them (each sees the
chips of the seats that acted before him on the street, and every seat's
earlier streets: ``lines``), both on the published basic strategy:

- ``ChipWatcher`` folds a basic call on the river when two companions
  folded, and calls a basic fold when two made a Play bet before it;
- ``CardRemovalWatcher`` weighs the companions' cards by their lines: on
  the river he draws hands for them that the basic strategy would have
  played as they did, and takes the better option averaged over them.

Cheats:

- ``HoleCarder`` plays best, but on a share of hands sees one of the
  dealer's hole cards and then plays best knowing it (flop and river);
- ``CardReader`` plays the basic strategy, but on a share of hands sees one
  of the dealer's cards (the first, the second, or either at random) and
  uses it on the streets he is given: before the flop he raises 4x when,
  knowing the card, raising beats checking and playing on by the basic
  strategy (his own count over seeded deals, apart from the scoring code);
  on the flop and the river he plays best knowing it;
- ``Colluder`` plays best, and on the river knows his partner's cards;
  ``FlopColluder`` plays the basic strategy and knows them on the flop.

``deal_rounds`` seats them at one table, deals seeded rounds and lets them
decide street by street, seat by seat; ``scored_seats`` scores every seat
(``scoring.score_seats``), which is what the service does with a posted
round. ``dealer_averaged_result`` is a seat's result averaged over every
dealer hand the final board leaves: the simulation's estimate of a line's
worth with the dealer's luck taken out.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from game import hand_arrays as ha
from game import strategy
from game.cards import Card
from game.evaluator import PAIR, TWO_PAIR, category_of, evaluate
from game.rules import DECISION_MULTIPLES
from game.vocabulary import Decision

from . import values as v
from .flop_table import FlopTable
from .leak import PlayedSeat, partner_steps
from .lines import LineModel, ShownSeat
from .preflop import PreflopTable
from .scoring import best_of, score_seats
from .seen_table import canonical
from .streets import CHECK, OPTIONS, STREETS, Street, choices

P4, FLOP_2X, RIVER_1X, FOLD = (
    Decision.PREFLOP_4X.value, Decision.FLOP_2X.value, Decision.RIVER_1X.value, Decision.FOLD.value,
)
Others = Mapping[str, Sequence[Card]]  # the other seats' hole cards, by player
Lines = Mapping[str, tuple[str, ...]]  # what each other seat has shown so far, street by street


class OptimalPlayer:
    def __init__(self, name: str, pays: v.PayTable, preflop: PreflopTable, flops: FlopTable | None = None):
        self.name, self.pays, self.preflop, self.flops = name, pays, preflop, flops
        self.lines: Lines = {}  # set by the dealer before each decision
        self.others: Others = {}  # the other seats' cards, likewise: only a cheat looks

    def preflop_values(self, hole) -> dict[str, float]:
        return self.preflop.values(hole, self.pays)

    def flop_values(self, hole, flop) -> dict[str, float]:
        found = self.flops.values(hole, flop, self.pays) if self.flops is not None else None
        return found or v.flop_values(hole, flop, self.pays)

    def preflop_choice(self, hole, dealer, rng) -> str:
        return best_of(self.preflop_values(hole))

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        return best_of(self.flop_values(hole, flop))

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        return best_of(v.river_values(hole, board, self.pays))


class NoisyPlayer(OptimalPlayer):
    """The best option of the values as he sees them: each blurred by a normal error of ``noise`` Antes."""

    def __init__(self, name, pays, preflop, flops=None, noise: float = 0.1):
        super().__init__(name, pays, preflop, flops)
        self.noise = noise

    def _blurred(self, options: dict[str, float], rng) -> str:
        return best_of({o: x + rng.gauss(0.0, self.noise) for o, x in options.items()})

    def preflop_choice(self, hole, dealer, rng) -> str:
        return self._blurred(self.preflop_values(hole), rng)

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        return self._blurred(self.flop_values(hole, flop), rng)

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        return self._blurred(v.river_values(hole, board, self.pays), rng)


def _ranks(cards) -> list[int]:
    return [c >> 2 for c in cards]


def _hidden_pair(hole, board) -> bool:
    """A pair (or better) his hole cards make: a pocket pair, or a hole card pairing the board."""
    ranks = _ranks(board)
    return hole[0] >> 2 == hole[1] >> 2 or any(c >> 2 in ranks for c in hole)


class RulePlayer(OptimalPlayer):
    """Decides by rules of his own cards and the board, given as three functions (each True to
    bet): ``raises(hole)``, ``bets_flop(hole, flop)``, ``calls(hole, board)``. The published basic
    strategy is ``game.strategy``'s ``preflop_4x``, ``flop_2x`` and ``river_1x``, written from its
    rules and tested apart from this project's values."""

    def __init__(self, name, pays, preflop, flops=None, *, raises, bets_flop, calls):
        super().__init__(name, pays, preflop, flops)
        self.raises, self.bets_flop, self.calls = raises, bets_flop, calls

    def preflop_choice(self, hole, dealer, rng) -> str:
        return P4 if self.raises(hole) else CHECK

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        return FLOP_2X if self.bets_flop(hole, flop) else CHECK

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        return RIVER_1X if self.calls(hole, board) else FOLD


class WeakPlayer(OptimalPlayer):
    def preflop_choice(self, hole, dealer, rng) -> str:
        high, low = sorted(_ranks(hole), reverse=True)
        if (high == low and high >= 7) or (high == 12 and low >= 10):  # 99+, AQ+
            return P4
        return CHECK

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        return FLOP_2X if _hidden_pair(hole, flop) else CHECK

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        made = category_of(evaluate([*hole, *board])) >= PAIR
        return RIVER_1X if made else FOLD


class TightPlayer(OptimalPlayer):
    """Raises only the best starting hands, bets the flop only with two pair, calls only a hidden pair."""

    def preflop_choice(self, hole, dealer, rng) -> str:
        high, low = sorted(_ranks(hole), reverse=True)
        return P4 if (high == low and high >= 10) or (high == 12 and low == 11) else CHECK

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        return FLOP_2X if category_of(evaluate([*hole, *flop])) >= TWO_PAIR else CHECK

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        return RIVER_1X if _hidden_pair(hole, board) else FOLD


class LoosePlayer(OptimalPlayer):
    """Raises any pair, ace or king, bets the flop with any pair, calls the river unless it is all board."""

    def preflop_choice(self, hole, dealer, rng) -> str:
        high, low = sorted(_ranks(hole), reverse=True)
        return P4 if high == low or high >= 11 else CHECK

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        return FLOP_2X if category_of(evaluate([*hole, *flop])) >= PAIR else CHECK

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        return RIVER_1X if max(_ranks(hole)) >= 8 or _hidden_pair(hole, board) else FOLD


class CallingStation(OptimalPlayer):
    """Checks to the river and always calls."""

    def preflop_choice(self, hole, dealer, rng) -> str:
        return CHECK

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        return CHECK

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        return RIVER_1X


class RandomPlayer(OptimalPlayer):
    """Any option of the street, each as likely."""

    def preflop_choice(self, hole, dealer, rng) -> str:
        return rng.choice(OPTIONS[Street.PREFLOP.value])

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        return rng.choice(OPTIONS[Street.FLOP.value])

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        return rng.choice(OPTIONS[Street.RIVER.value])


class HoleCarder(OptimalPlayer):
    def __init__(self, name, pays, preflop, share: float, position: int = 0, flops=None):
        super().__init__(name, pays, preflop, flops)
        self.share, self.position = share, position
        self.seen: Card | None = None

    def preflop_choice(self, hole, dealer, rng) -> str:
        self.seen = dealer[self.position] if rng.random() < self.share else None
        return super().preflop_choice(hole, dealer, rng)

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        if self.seen is None:
            return super().flop_choice(hole, flop, dealer, rng)
        return best_of(v.flop_values(hole, flop, self.pays, known_dealer=(self.seen,)))

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        if self.seen is None:
            return super().river_choice(hole, board, dealer, rng)
        return best_of(v.river_values(hole, board, self.pays, known_dealer=(self.seen,)))


BASIC = {"raises": strategy.preflop_4x, "bets_flop": strategy.flop_2x, "calls": strategy.river_1x}


class ChipWatcher(RulePlayer):
    """The basic strategy, and on the river two companions' chips outweigh it: two folds before him
    make him fold a call, two Play bets made before the river make him call a fold."""

    def __init__(self, name, pays, preflop, flops=None):
        super().__init__(name, pays, preflop, flops, **BASIC)

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        basic = super().river_choice(hole, board, dealer, rng, others)
        shown = [line[-1] for line in self.lines.values() if line]
        if basic == RIVER_1X and sum(1 for x in shown if x == FOLD) >= 2:
            return FOLD
        if basic == FOLD and sum(1 for x in shown if x in (P4, Decision.PREFLOP_3X.value, FLOP_2X)) >= 2:
            return RIVER_1X
        return basic


def _plays_as_shown(hole, board, line: tuple[str, ...]) -> bool:
    """Whether the basic strategy, holding ``hole``, shows ``line`` (its options street by street)."""
    raised = strategy.preflop_4x(hole)
    if line[0] != CHECK:
        return raised
    if raised:
        return False
    if len(line) > 1:
        bet = strategy.flop_2x(hole, board[:3])
        if (line[1] == FLOP_2X) != bet:
            return False
        if len(line) > 2 and (line[2] == RIVER_1X) != strategy.river_1x(hole, board):
            return False
    return True


class CardRemovalWatcher(RulePlayer):
    """The basic strategy until the river; there, the better option averaged over ``samples`` deals
    of the companions' cards that the basic strategy would have played as each companion did."""

    def __init__(self, name, pays, preflop, flops=None, samples: int = 6):
        super().__init__(name, pays, preflop, flops, **BASIC)
        self.samples = samples

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        unseen = [c for c in range(52) if c not in (*hole, *board)]
        total = {RIVER_1X: 0.0, FOLD: 0.0}
        for _ in range(self.samples):
            pool, dead = list(unseen), []
            for line in self.lines.values():
                if not line:
                    continue
                drawn = rng.sample(pool, 2)
                for _attempt in range(100):
                    if _plays_as_shown(drawn, board, line):
                        break
                    drawn = rng.sample(pool, 2)
                dead += drawn
                pool = [c for c in pool if c not in drawn]
            for option, value in v.river_values(hole, board, self.pays, dead=tuple(dead)).items():
                total[option] += value
        return best_of(total)


@cache
def _raise_knowing(h1: Card, h2: Card, card: Card, pays: v.PayTable, deals: int = 2000) -> bool:
    """Whether 4x beats checking and playing on by the basic strategy, knowing the dealer holds
    ``card``: both counted over the same seeded whole deals, each settled in Antes."""
    deck = np.array([c for c in range(52) if c not in (h1, h2, card)], dtype=np.int64)
    rng = np.random.default_rng([77, h1, h2, card])
    drawn = deck[np.argsort(rng.random((deals, len(deck))), axis=1)[:, :6]]
    board, second = drawn[:, :5], drawn[:, 5]
    hole = np.broadcast_to(np.array([h1, h2], dtype=np.int64), (deals, 2))
    player = ha.values_of(np.concatenate([hole, board], axis=1))
    dealer = ha.values_of(np.concatenate([np.full((deals, 1), card), second[:, None], board], axis=1))
    w = np.sign(player - dealer)
    qualifies = (dealer >= pays.qualifier).astype(float)
    blind = np.asarray(pays.blind)[player >> 20]
    base = np.where(w > 0, qualifies + blind, np.where(w < 0, -1 - qualifies, 0.0))
    bets_flop = strategy.flop_2x_bulk(hole, board[:, :3])
    calls = strategy.hidden_pair_or_better_bulk(hole, board, player, ha.values_of(board)) | (
        strategy.dealer_outs_bulk(ha.values_with_each_card(board), hole, player) < strategy.OUTS_TO_FOLD
    )
    checked = np.where(bets_flop, base + 2 * w, np.where(calls, base + w, v.FOLD_VALUE))
    return float((base + 4 * w).mean()) > float(checked.mean())


class CardReader(RulePlayer):
    """The basic strategy, but on a share of hands he sees one of the dealer's cards (``position``
    0 or 1, or None: either, at random) and uses it on ``streets``."""

    def __init__(self, name, pays, preflop, flops=None, *, share: float = 1.0,
                 streets: Sequence[str] = STREETS, position: int | None = None):
        super().__init__(name, pays, preflop, flops, **BASIC)
        self.share, self.streets, self.position = share, tuple(streets), position
        self.seen: Card | None = None

    def preflop_choice(self, hole, dealer, rng) -> str:
        self.seen = None
        if rng.random() < self.share:
            self.seen = dealer[self.position if self.position is not None else rng.randrange(2)]
        if self.seen is None or Street.PREFLOP.value not in self.streets:
            return super().preflop_choice(hole, dealer, rng)
        cls = canonical(hole[0], hole[1], self.seen)
        return P4 if _raise_knowing(*cls, self.pays) else CHECK

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        if self.seen is None or Street.FLOP.value not in self.streets:
            return super().flop_choice(hole, flop, dealer, rng)
        return best_of(v.flop_values(hole, flop, self.pays, known_dealer=(self.seen,)))

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        if self.seen is None or Street.RIVER.value not in self.streets:
            return super().river_choice(hole, board, dealer, rng, others)
        return best_of(v.river_values(hole, board, self.pays, known_dealer=(self.seen,)))


class Colluder(OptimalPlayer):
    """Plays best, and on the river knows ``partner``'s hole cards when the partner sits at the table."""

    def __init__(self, name, pays, preflop, partner: str, flops=None):
        super().__init__(name, pays, preflop, flops)
        self.partner = partner

    def river_choice(self, hole, board, dealer, rng, others: Others = {}) -> str:
        seen = others.get(self.partner, ())
        return best_of(v.river_values(hole, board, self.pays, dead=tuple(seen)))


class FlopColluder(RulePlayer):
    """The basic strategy, but on the flop he knows ``partner``'s hole cards and plays best knowing them."""

    def __init__(self, name, pays, preflop, partner: str, flops=None):
        super().__init__(name, pays, preflop, flops, **BASIC)
        self.partner = partner

    def flop_choice(self, hole, flop, dealer, rng) -> str:
        seen = tuple(self.others.get(self.partner, ()))
        if not seen:
            return super().flop_choice(hole, flop, dealer, rng)
        return best_of(v.flop_values(hole, flop, self.pays, dead=seen))


def play_round(players, holes, board, dealer, rng) -> list[str]:
    """Every seat's decision code, street by street and seat by seat: each player sees (``lines``)
    what every other seat showed on the streets before and what the seats before him showed on this one."""
    shown: list[list[str]] = [[] for _ in players]
    final: list[str | None] = [None] * len(players)
    for street in STREETS:
        for i, player in enumerate(players):
            if final[i] is not None:
                continue
            player.lines = {p.name: tuple(shown[j]) for j, p in enumerate(players) if j != i}
            player.others = {p.name: h for p, h in zip(players, holes) if h is not holes[i]}
            if street == Street.PREFLOP.value:
                choice = player.preflop_choice(holes[i], dealer, rng)
            elif street == Street.FLOP.value:
                choice = player.flop_choice(holes[i], board[:3], dealer, rng)
            else:
                choice = player.river_choice(holes[i], board, dealer, rng, player.others)
            shown[i].append(choice)
            if choice != CHECK:
                final[i] = choice
    return final  # type: ignore[return-value]


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
        decisions = play_round(players, holes, board, dealer, rng)
        seats = tuple(DealtSeat(p.name, hole, d) for p, hole, d in zip(players, holes, decisions))
        dealt.append(DealtRound(number, board, dealer, seats))
    return dealt


def _shown(round_: DealtRound) -> list[ShownSeat]:
    return [ShownSeat(s.player, s.hole, round_.board, choices(s.decision)) for s in round_.seats]


def day_lines(dealt: Sequence[DealtRound]) -> LineModel:
    """The line model of ``dealt``'s seats alone: a day's, for ``scored_seats``' ``earlier``."""
    return LineModel.of(seat for round_ in dealt for seat in _shown(round_))


def scored_seats(
    dealt: Sequence[DealtRound], pays: v.PayTable, preflop: PreflopTable, dealer_name: str = "D-1",
    collusion: bool = True, flops: FlopTable | None = None, rounds_a_day: int = 100,
    watching: bool = True, line_days: int = 1, earlier: Sequence[LineModel] = (),
) -> list[PlayedSeat]:
    """Every seat of ``dealt`` scored as the service scores a posted round; ``rounds_a_day``
    rounds make a gaming day, whose lines weigh the companions' pairs (``lines``) unless
    ``watching`` is off, pooled with the ``line_days - 1`` days before it, as the service pools
    a table's (``earlier``: days before ``dealt``'s first, oldest first, as ``day_lines`` makes them)."""
    days: dict[int, list[ShownSeat]] = {}
    for round_ in dealt:
        days.setdefault(round_.number // rounds_a_day, []).extend(_shown(round_))
    models = {}
    if watching and collusion:
        history = list(earlier)  # each day's own model, oldest first
        for day in sorted(days):
            own = LineModel.of(days[day])
            models[day] = own.pooled(history[max(0, len(history) - line_days + 1):])
            history.append(own)
    played = []
    for round_ in dealt:
        others = [{s.player: s.hole for s in round_.seats if s is not seat} for seat in round_.seats]
        model = models.get(round_.number // rounds_a_day)
        scores = score_seats(
            [s.hole for s in round_.seats], [s.decision for s in round_.seats], round_.board, round_.dealer,
            pays, preflop, others if collusion else None, flops,
            lines=model.without(_shown(round_)) if model is not None else None,
            names=[s.player for s in round_.seats] if model is not None else None,
        )
        partners = partner_steps(dict(enumerate(scores)), {n: s.player for n, s in enumerate(round_.seats)})
        for n, (seat, score) in enumerate(zip(round_.seats, scores)):
            companions = tuple(s.player for s in round_.seats if s is not seat)
            played.append(PlayedSeat(
                (round_.number, seat.player), seat.player, dealer_name, companions, score,
                round_.number // rounds_a_day, partners.get(n, {}),
            ))
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
