"""The information-leak test: does a player choose as if he saw cards no one may see?

An honest player's choice depends only on what he saw: his hole cards and
the board. The card he could not see (one of the dealer's, or a companion's
two) is then, given all he saw and what he chose, a uniform draw from the
cards unseen to him. So whether his choice turns out to be the *informed*
one (the best with that card known) is a coin whose chance the service
counts exactly: the share of the unseen cards that would have made his
choice best (``Informed.shares``, ``values.river_unseen``). That holds for
every honest player, strong or weak, tight or loose, one who always calls
or one who plays at random: the test models no player and no error rate.

A decision where every unseen card makes his choice best (or none does)
tells nothing and is left out; the others are the test's *steps*. At each
step the chance ``q`` and the outcome ``x`` (1: he chose the informed
option) give the factor of a likelihood ratio against a player who uses
what he sees on a share ``f`` of his hands (he then chooses the informed
option, else chooses as an honest player would):

    x = 1:  (q + f·(1 − q)) / q          x = 0:  1 − f

whose expectation under honest play is exactly 1 whatever his strategy. The
product of the factors over his steps is therefore a nonnegative martingale
with mean 1, and so is any fixed mixture of such products. The test's
e-value is the mixture over ``f`` (``LeakSettings.shares``, equal weights)
and over the day the cheating may have begun (the ``k``-th day of the
subject's steps weighted ``1/(k(k + 1))``; a product that has not begun
counts 1). By Ville's inequality an honest player's e-value ever reaches
``1/a`` with chance at most ``a``, however often it is looked at: every
night's rerun over his whole history looks at the same martingale.

Each player is tested several ways, and ``alpha`` (the chance that an honest
player is ever suspected at all, over his whole history) is divided among
them (``budget``): each dealer card over all his hands and per dealer he
played with, and each companion's cards. Dealers and companions are
weighted in the order the player first met them, ``1/(j(j + 1))``, so the
weights sum to one however many there will be. A test's figure is the
natural logarithm of its e-value; its threshold ``ln(1/(alpha·weight))``.

Only river decisions carry shares today (``scoring``): a flop's would value
each unseen card's flop. A round in which the player held two seats gives
no steps: he saw both hands, which the shares do not count.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from .codes import ProtectionCode
from .scoring import DEALER_CARD, DecisionScore, SeatScore, companion_knowledge

HOLE_CARDING = ProtectionCode.SUSPECTED_HOLE_CARDING.value
COLLUSION = ProtectionCode.SUSPECTED_COLLUSION.value


@dataclass(frozen=True, slots=True)
class LeakSettings:
    alpha: float = 0.001  # the chance an honest player is ever suspected, over his whole history, by every test
    shares: tuple[float, ...] = (0.1, 0.25, 0.5, 0.9)  # how often a cheat may use what he sees (mixed equally)
    enough: int = 30  # steps before a test's silence says anything: fewer are "not enough decisions to judge"

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError("alpha must be between 0 and 1")
        if not self.shares or not all(0 < f < 1 for f in self.shares):
            raise ValueError("every share must be between 0 and 1")


# How ``alpha`` is divided: the two dealer cards and the companions a third each; a
# dealer card's third half over all the player's hands and half over his dealers.
HOLE_CARDING_BUDGET = 2 / 3
OVERALL_SHARE = 1 / 2


def ordinal_weight(j: int) -> float:
    """The weight of the ``j``-th of an open-ended list (1, 2, …): ``1/(j(j + 1))``, summing to one."""
    return 1.0 / (j * (j + 1))


@dataclass(frozen=True, slots=True)
class LeakTest:
    """One way a player is tested: a knowledge, over all his hands or one dealer's, and its budget."""

    code: str
    player: str
    knowledge: str
    weight: float  # its part of ``alpha``
    dealer: str | None = None
    companion: str | None = None

    def threshold(self, settings: LeakSettings) -> float:
        return math.log(1.0 / (settings.alpha * self.weight))


@dataclass(frozen=True, slots=True)
class Step:
    """One decision the test reads: the chance an honest player's choice is the informed one, and whether it was."""

    key: Hashable  # the caller's reference to the seat-round
    day: Hashable  # the gaming day it was dealt on
    decision: DecisionScore
    knowledge: str
    informed_option: str
    chose_informed: bool
    share: float  # q: the chance, under honest play, that the choice is the informed one
    figure: float  # ln of the test's e-value after this step


class EValue:
    """The test's e-value, step by step: a mixture over ``f`` and over the day the cheating began."""

    def __init__(self, shares: Sequence[float]):
        self.shares = tuple(shares)
        self.spent = [0.0] * len(self.shares)  # ln of each f's product since the first step
        self.started = [-math.inf] * len(self.shares)  # ln Σ_k w_k / (product before day k)
        self.days = 0
        self.day: Hashable = object()

    def add(self, day: Hashable, share: float, chose_informed: bool) -> None:
        if day != self.day:
            self.day, self.days = day, self.days + 1
            weight = math.log(ordinal_weight(self.days))
            self.started = [_log_add(s, weight - p) for s, p in zip(self.started, self.spent)]
        for i, f in enumerate(self.shares):
            self.spent[i] += math.log((share + f * (1 - share)) / share) if chose_informed else math.log(1 - f)

    @property
    def figure(self) -> float:
        """ln of the e-value: products begun, plus the weight ``1/(K + 1)`` of those not begun."""
        waiting = -math.log(self.days + 1)
        each = [_log_add(s + p, waiting) for s, p in zip(self.started, self.spent)]
        return _log_add_all(each) - math.log(len(each))


def _log_add(a: float, b: float) -> float:
    if a < b:
        a, b = b, a
    return a if b == -math.inf else a + math.log1p(math.exp(b - a))


def _log_add_all(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(x - top) for x in values))


@dataclass(frozen=True, slots=True)
class Trace:
    test: LeakTest
    threshold: float
    steps: tuple[Step, ...]
    crossed_at: int | None  # index of the step where the figure first reached the threshold

    @property
    def figure(self) -> float:
        return self.steps[-1].figure if self.steps else 0.0

    @property
    def peak(self) -> float:
        return max((s.figure for s in self.steps), default=0.0)

    @property
    def crossed(self) -> bool:
        return self.crossed_at is not None

    @property
    def informed(self) -> int:
        """The steps at which he chose the informed option."""
        return sum(1 for s in self.steps if s.chose_informed)

    @property
    def expected(self) -> float:
        """How many of them an honest player would have: the sum of the steps' chances."""
        return sum(s.share for s in self.steps)


def run_test(
    decisions: Iterable[tuple[Hashable, Hashable, DecisionScore]],
    test: LeakTest,
    settings: LeakSettings = LeakSettings(),
) -> Trace:
    """The test's e-value over ``decisions`` (key, gaming day, decision), in the order dealt."""
    threshold = test.threshold(settings)
    evalue, steps, crossed = EValue(settings.shares), [], None
    for key, day, decision in decisions:
        informed = decision.informed.get(test.knowledge)
        if informed is None or informed.shares is None:
            continue
        share = informed.shares[decision.chosen]
        if not 0 < share < 1:
            continue
        chose = decision.chosen == informed.best
        evalue.add(day, share, chose)
        steps.append(Step(key, day, decision, test.knowledge, informed.best, chose, share, evalue.figure))
        if crossed is None and steps[-1].figure >= threshold:
            crossed = len(steps) - 1
    return Trace(test, threshold, tuple(steps), crossed)


@dataclass(frozen=True, slots=True)
class PlayedSeat:
    """A scored seat-round as the test reads it, in the order dealt."""

    key: Hashable
    player: str
    dealer: str | None
    companions: tuple[str, ...]  # the other players at the table that round
    score: SeatScore
    day: Hashable = None  # the gaming day


def player_tests(player: str, played: Sequence[PlayedSeat]) -> list[tuple[LeakTest, list[PlayedSeat]]]:
    """Every test of one player's seats (in the order dealt) and the seats each reads."""
    readable = [seat for seat in played if player not in seat.companions]  # two seats of his own: left out
    by_dealer: dict[str, list[PlayedSeat]] = defaultdict(list)
    by_companion: dict[str, list[PlayedSeat]] = defaultdict(list)
    for seat in readable:
        if seat.dealer:
            by_dealer[seat.dealer].append(seat)
        for companion in sorted(seat.companions):
            if companion:
                by_companion[companion].append(seat)
    card_weight = HOLE_CARDING_BUDGET / len(DEALER_CARD)
    tests: list[tuple[LeakTest, list[PlayedSeat]]] = []
    for knowledge in DEALER_CARD:
        tests.append((LeakTest(HOLE_CARDING, player, knowledge, card_weight * OVERALL_SHARE), readable))
        for j, (dealer, seats) in enumerate(by_dealer.items(), start=1):
            weight = card_weight * (1 - OVERALL_SHARE) * ordinal_weight(j)
            tests.append((LeakTest(HOLE_CARDING, player, knowledge, weight, dealer=dealer), seats))
    for j, (companion, seats) in enumerate(by_companion.items(), start=1):
        weight = (1 - HOLE_CARDING_BUDGET) * ordinal_weight(j)
        tests.append((
            LeakTest(COLLUSION, player, companion_knowledge(companion), weight, companion=companion), seats,
        ))
    return tests


def _decisions(seats: Iterable[PlayedSeat]):
    for seat in seats:
        for decision in seat.score.decisions:
            yield seat.key, seat.day, decision


def leak_traces(seats: Iterable[PlayedSeat], settings: LeakSettings = LeakSettings()) -> dict[str, list[Trace]]:
    """Every test of every player among ``seats`` (in the order dealt), by player."""
    by_player: dict[str, list[PlayedSeat]] = defaultdict(list)
    for seat in seats:
        by_player[seat.player].append(seat)
    return {
        player: [run_test(_decisions(read), test, settings) for test, read in player_tests(player, played)]
        for player, played in by_player.items()
    }


def leak_suspicions(seats: Iterable[PlayedSeat], settings: LeakSettings = LeakSettings()) -> list[Trace]:
    """The tests that crossed their threshold."""
    return [trace for traces in leak_traces(seats, settings).values() for trace in traces if trace.crossed]
