"""The information-leak test: does a player choose as if he saw cards no one may see?

A choice is *informed* by a hidden card when it is the option the card, had
he known it, made best. Given everything the service conditions on, the
hidden card is a uniform draw from a set of cards it counts exactly, and an
honest player's choice is independent of which: so whether his choice is
informed is a coin whose chance ``q`` is the share of those cards that make
it so. That holds for every honest player, strong or weak, tight or loose,
one who always calls, one who plays at random or one who reads the other
seats' chips: the test models no player and no error rate.

- **Hole-carding** (one of the dealer's cards, ``seen``): the chance is
  counted over the cards no seat holds and the board does not show, so it
  holds for everything a player may legally see (his cards, the board, the
  lines of the seats that acted before him), as long as no one at the table
  sees the dealer's cards. Every street is tested: before the flop, on the
  flop, on the river, and the hand's every street at once; and either of
  the dealer's two cards, whatever order the record lists them in.
- **Collusion** (one companion's hole cards, on the flop and the river): the
  chance is counted over the pairs of cards no one else at the table held
  (``scoring.companion_shares``: given the others' cards, their lines say
  nothing more of his), each weighed by how likely the companion's own
  shown line is with it. The test of a pair has two parts a
  street: the player's choices about the companion's cards (``OWN``,
  ``OWN_FLOP``), and the hands the two shared read both ways at once
  (``PAIR``, ``PAIR_FLOP``: his steps about the companion's cards and the
  companion's about his, one product). Of the two sides at a hand, the one
  who decides later has seen the other's choice, and his chance counts it
  (the companion's shown line), so his step has expectation one given the
  other's: the product over a hand has expectation one given the hands
  before it, while neither sees the other's cards. It gathers both sides'
  evidence where one side's test reads one. The streets are parts apart: a
  hand's flop and river steps read the same cards, and one product of them
  would not keep that expectation.

A decision whose chance is 0 or 1 tells nothing and is left out; the others
are a test's *steps*. At each, a likelihood ratio ``r`` with expectation one
under honest play (``x/q`` for one card, where ``x`` is 1 when he chose the
informed option; the average of the two dealer cards' for hole-carding)
gives the factor ``1 − f + f·r`` of a player who uses what he sees on a
share ``f`` of his hands. The product of the factors over his steps is a
nonnegative martingale with mean 1, and so is any fixed mixture of such
products. A part's e-value is the mixture over ``f`` (``LeakSettings.shares``,
equal weights) and over the day the cheating may have begun (the ``k``-th
day of the part's steps weighted ``1/(k(k + 1))``; a product that has not
begun counts 1); the hole-carding test's e-value is the mean of its four
parts' (preflop, flop, river, the hand), a companion's the mean of its four.
By Ville's inequality an honest player's e-value ever reaches ``1/a`` with
chance at most ``a``, however often it is looked at and however long his
history: every night looks at the same martingale over his whole history,
and a regular of ten years spends no more of it than a newcomer. A test's
whole state after a step is small (``TestState``): a night goes on from
where the night before left it (``player_run``) and reads only its own day,
to the same last float.

Each player is tested several ways, and ``alpha`` (the chance that an honest
player is ever suspected at all, over his whole history) is divided among
them (``player_tests``): hole-carding over all his hands and per dealer he
played with, and each companion's cards. Dealers and companions are weighted
in the order the player first met them, ``1/(j(j + 1))``, those first met
in the same round sharing their place equally, so the weights sum to one
however many there will be and no verdict depends on how names sort. A
test's figure is the natural logarithm of its e-value; its threshold
``ln(1/(alpha·weight))``.

A round in which the player held two seats gives no steps: he saw both
hands, which the chances do not count.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .codes import ProtectionCode
from .scoring import SEEN_CARD, DecisionScore, SeatScore, companion_knowledge
from .seen import other_option
from .streets import STREETS, Street

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


# How ``alpha`` is divided: two thirds to hole-carding, half of that over all the player's
# hands and half over his dealers; a third to the companions.
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
    """One decision the test reads: the chance an honest player's choice is the informed one, and how far it was."""

    key: Hashable  # the caller's reference to the seat-round
    day: Hashable  # the gaming day it was dealt on
    decision: DecisionScore
    knowledge: str
    informed_option: str  # what the hidden card made best (for a dealer card, the one that agreed if either did)
    chose_informed: bool  # the choice was what the hidden card (for a dealer card, either of the two) made best
    share: float  # q: the chance, under honest play, that the choice is the informed one
    figure: float  # ln of the test's e-value after this step
    agreed: float = 0.0  # x: 1 informed, 0 not; for the dealer's cards the share of the two that agree
    part: str = ""  # the street, or HAND for a hand's every street at once


HAND = "hand"  # a hand's every street tested at once
PARTS: tuple[str, ...] = (*STREETS, HAND)  # the parts of the hole-carding test, each an e-value
# A companion's test, each street apart (two streets' steps share the companion's cards: their
# product would not be a martingale): the player's choices about the companion's cards, and the
# hands the two shared, each one's choices about the other's cards.
OWN = "own"  # on the river
PAIR = "pair"
OWN_FLOP = "own_flop"
PAIR_FLOP = "pair_flop"
COMPANION_PARTS: tuple[str, ...] = (OWN, PAIR, OWN_FLOP, PAIR_FLOP)
_COMPANION_PARTS_OF = {Street.RIVER.value: (OWN, PAIR), Street.FLOP.value: (OWN_FLOP, PAIR_FLOP)}


class EValue:
    """The test's e-value, step by step: a mixture over ``f`` and over the day the cheating began.

    Its whole state is ``spent``, ``started``, ``days`` and ``day``: a test that
    goes on from them tomorrow reads only tomorrow's steps (``TestState``).
    """

    def __init__(self, shares: Sequence[float], spent: Sequence[float] | None = None,
                 started: Sequence[float] | None = None, days: int = 0, day: Hashable = None):
        self.shares = tuple(shares)
        self.spent = list(spent) if spent is not None else [0.0] * len(self.shares)  # ln of each f's product
        # ln Σ_k w_k / (product before day k); -inf before the first day
        self.started = list(started) if started is not None else [-math.inf] * len(self.shares)
        if len(self.spent) != len(self.shares) or len(self.started) != len(self.shares):
            raise ValueError("an e-value's state has one entry for each share")
        self.days = days
        self.day: Hashable = day if days else object()

    def add(self, day: Hashable, ratio: float) -> None:
        """One step, ``ratio`` its likelihood ratio (expectation one under honest play)."""
        if day != self.day:
            self.day, self.days = day, self.days + 1
            weight = math.log(ordinal_weight(self.days))
            self.started = [_log_add(s, weight - p) for s, p in zip(self.started, self.spent)]
        for i, f in enumerate(self.shares):
            self.spent[i] += math.log(1 - f + f * ratio)

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


def mean_figure(parts: Iterable[EValue]) -> float:
    """ln of the mean of ``parts``' e-values: a test of several parts, each an e-value of its own."""
    figures = [e.figure for e in parts]
    return _log_add_all(figures) - math.log(len(figures))


def _log_add_all(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(x - top) for x in values))


@dataclass(frozen=True, slots=True)
class Crossing:
    """Where a test first reached its threshold."""

    # Which of the player's own steps it came after, counted from his first ever (1, 2, …): a
    # companion's test may cross on a hand where only the companion had a step.
    step: int
    key: Hashable  # the hand
    day: Hashable


@dataclass(slots=True)
class TestState:
    """A test as it stands after every step read so far: all that the next night's run goes on from.

    ``parts`` are its e-values (the hole-carding test's four, by ``PARTS``; a
    companion's two, by ``COMPANION_PARTS``). ``steps``, ``informed`` and
    ``expected`` count the player's own decisions; a companion's test also
    counts the companion's about the player's cards (``partner_*``). Going on
    from a state and reading one more day gives exactly what reading the
    whole history again would.
    """

    weight: float  # its part of ``alpha``, fixed when the test began
    parts: dict[str, EValue]
    counted: dict[str, int]  # steps each part read
    steps: int = 0
    informed: float = 0.0
    expected: float = 0.0
    figure: float = 0.0
    peak: float = -math.inf
    crossing: Crossing | None = None
    first_day: Hashable = None  # the day of its first step
    partner_steps: int = 0
    partner_informed: float = 0.0
    partner_expected: float = 0.0

    @classmethod
    def new(cls, test: LeakTest, settings: LeakSettings) -> TestState:
        names = PARTS if test.code == HOLE_CARDING else COMPANION_PARTS
        return cls(test.weight, {n: EValue(settings.shares) for n in names}, dict.fromkeys(names, 0))

    def step(self, day: Hashable, key: Hashable, figure: float, agreed: float, share: float, threshold: float):
        """One of the player's own decisions read (its part already counted)."""
        self.tally(agreed, share)
        self.moved(day, key, figure, threshold)

    def tally(self, agreed: float, share: float) -> None:
        self.steps += 1
        self.informed += agreed
        self.expected += share

    def moved(self, day: Hashable, key: Hashable, figure: float, threshold: float) -> None:
        """The figure after a step of any part (its part already counted)."""
        if self.first_day is None:
            self.first_day = day
        self.figure = figure
        self.peak = max(self.peak, figure)
        if self.crossing is None and figure >= threshold:
            self.crossing = Crossing(self.steps, key, day)


@dataclass(frozen=True, slots=True)
class Trace:
    """A test's run: the steps it read this time, and where it stands after them."""

    test: LeakTest
    threshold: float
    # This run's (the whole history's when it began from nothing): the player's own decisions; the
    # companion's, which a companion's test also reads, are only counted (``TestState.partner_*``).
    steps: tuple[Step, ...]
    state: TestState

    @property
    def figure(self) -> float:
        return self.state.figure

    @property
    def peak(self) -> float:
        return self.state.peak if self.state.steps else 0.0

    @property
    def crossed(self) -> bool:
        return self.state.crossing is not None

    @property
    def crossing(self) -> Crossing | None:
        return self.state.crossing

    @property
    def crossed_at(self) -> int | None:
        """The index among this run's steps where the figure first reached the threshold, if it was this run."""
        crossing = self.state.crossing
        index = None if crossing is None else crossing.step - (self.state.steps - len(self.steps)) - 1
        return index if index is not None and index >= 0 else None

    @property
    def step_count(self) -> int:
        """Every step the test has read, this run's and before."""
        return self.state.steps

    @property
    def first_day(self) -> Hashable:
        return self.state.first_day

    @property
    def parts(self) -> dict[str, tuple[int, float]]:
        """The steps and figure of each part."""
        return {p: (n, self.state.parts[p].figure if n else 0.0) for p, n in self.state.counted.items()}

    @property
    def informed(self) -> float:
        """How often he chose the informed option (a dealer card's step counts the share of the two that agree)."""
        return self.state.informed

    @property
    def expected(self) -> float:
        """How often an honest player would have: the sum of the steps' chances."""
        return self.state.expected


def companion_step(decision: DecisionScore, knowledge: str) -> tuple[str, bool, float] | None:
    """A decision as a step of the test of ``knowledge`` (a companion's cards): the option the cards
    made best, whether it was chosen, and the chance ``q`` an honest choice is it; None where the
    decision tells nothing of them."""
    informed = decision.informed.get(knowledge)
    if informed is None or informed.shares is None:
        return None
    share = informed.shares[decision.chosen]
    if not 0 < share < 1:
        return None
    return informed.best, decision.chosen == informed.best, share


# A companion's steps about a seat's cards: (chose informed, q, street).
PartnerSteps = tuple[tuple[bool, float, str], ...]


def partner_steps(
    scores: Mapping[int, SeatScore], players: Mapping[int, str],
) -> dict[int, dict[str, PartnerSteps]]:
    """For each seat of a round (``scores`` and ``players`` by seat), each companion's steps about its
    cards, as ``PlayedSeat.partners`` keeps them. A player on two seats gives none: he saw both hands,
    which his chances do not count."""
    seats_of: dict[str, int] = defaultdict(int)
    for name in players.values():
        seats_of[name] += 1
    found: dict[int, dict[str, PartnerSteps]] = {}
    for seat, player in players.items():
        if not player or seats_of[player] > 1 or seat not in scores:
            continue
        knowledge = companion_knowledge(player)
        for other, score in scores.items():
            name = players.get(other, "")
            if other == seat or not name or seats_of[name] > 1:
                continue
            steps = tuple((step[1], step[2], d.street) for d in score.decisions
                          if (step := companion_step(d, knowledge)) is not None)
            if steps:
                found.setdefault(seat, {})[name] = steps
    return found


def companion_test(
    seats: Iterable[PlayedSeat], test: LeakTest, settings: LeakSettings = LeakSettings(),
    state: TestState | None = None,
) -> Trace:
    """A companion's test over ``seats`` (in the order dealt): the mean of its parts' e-values, on
    the river and on the flop each, the player's own choices about the companion's cards and the
    pair's hands read both ways; going on from ``state`` when given."""
    threshold = test.threshold(settings)
    state = state or TestState.new(test, settings)
    companion = test.companion or ""
    steps: list[Step] = []

    for seat in seats:
        hand, read = [], set()
        for decision in seat.score.decisions:
            step = companion_step(decision, test.knowledge)
            if step is None:
                continue
            best, chose, share = step
            own, pair = _COMPANION_PARTS_OF[decision.street]
            state.parts[own].add(seat.day, chose / share)
            state.parts[pair].add(seat.day, chose / share)
            state.counted[own] += 1
            state.tally(float(chose), share)
            read.add(pair)
            hand.append((decision, best, chose, share))
        for chose, share, street in seat.partners.get(companion, ()):
            pair = _COMPANION_PARTS_OF[street][1]
            state.parts[pair].add(seat.day, chose / share)
            read.add(pair)
            state.partner_steps += 1
            state.partner_informed += chose
            state.partner_expected += share
        if not read:
            continue
        for pair in read:
            state.counted[pair] += 1
        # Looked at once the hand is read: the product of both sides' steps has expectation one given
        # the hands before it; one side's, read first, need not, given the other's (who may have
        # decided first: the order is not kept).
        state.moved(seat.day, seat.key, mean_figure(state.parts.values()), threshold)
        steps += [Step(seat.key, seat.day, decision, test.knowledge, best, chose, share, state.figure,
                       float(chose), decision.street) for decision, best, chose, share in hand]
    return Trace(test, threshold, tuple(steps), state)


def hole_carding_test(
    seats: Iterable[PlayedSeat], test: LeakTest, settings: LeakSettings = LeakSettings(),
    state: TestState | None = None,
) -> Trace:
    """The hole-carding test over ``seats`` (in the order dealt): the mean of its parts' e-values,
    each street's and the hand's, each step a dealer card's verdict (``seen``); going on from
    ``state`` when given."""
    threshold = test.threshold(settings)
    state = state or TestState.new(test, settings)
    parts = state.parts
    steps: list[Step] = []
    for seat in seats:
        verdicts = [(d.street, d, d.seen) for d in seat.score.decisions if d.seen is not None]
        if verdicts and seat.score.seen is not None:
            verdicts.append((HAND, verdicts[-1][1], seat.score.seen))
        for part, decision, seen in verdicts:
            if not seen.telling:
                continue
            parts[part].add(seat.day, seen.ratio())
            state.counted[part] += 1
            figure = mean_figure(parts.values())
            agreed = (seen.informed[0] + seen.informed[1]) / 2
            state.step(seat.day, seat.key, figure, agreed, seen.share, threshold)
            # A hand's step has no one option: a card that disagreed may have done so on any street.
            informed_option = decision.chosen if agreed else (
                "" if part == HAND else other_option(decision.street, decision.chosen))
            steps.append(Step(
                seat.key, seat.day, decision, test.knowledge, informed_option, bool(agreed),
                seen.share, figure, agreed, part,
            ))
    return Trace(test, threshold, tuple(steps), state)


@dataclass(frozen=True, slots=True)
class PlayedSeat:
    """A scored seat-round as the test reads it, in the order dealt."""

    key: Hashable
    player: str
    dealer: str | None
    companions: tuple[str, ...]  # the other players at the table that round
    score: SeatScore
    day: Hashable = None  # the gaming day
    partners: Mapping[str, PartnerSteps] = field(default_factory=dict)  # each companion's steps about his cards


TestId = tuple[str, str, str]  # (code, dealer, companion), "" where none: a test of one player


def key_of(test: LeakTest) -> TestId:
    return (test.code, test.dealer or "", test.companion or "")


@dataclass(slots=True)
class PlayerState:
    """Where a player's tests stand: those the next seats will read (``tests``, by ``key_of``) and
    how many rounds so far brought him a dealer, or companions, he had not met."""

    tests: dict[TestId, TestState] = field(default_factory=dict)
    dealers_met: int = 0
    companions_met: int = 0


def meeting_weights(
    groups: Iterable[Iterable[str]], known: Iterable[str] = (), met: int = 0,
) -> tuple[dict[str, float], int]:
    """Each new name's weight by when it was first met, and how many rounds have brought someone new:
    ``groups`` in the order dealt (a round's companions, or its dealer), the ``k``-th round that
    brought someone new weighted ``1/(k(k + 1))``, shared equally by the names it brought; ``known``
    and ``met`` what was met before. No weight depends on a name."""
    seen = set(known)
    weights: dict[str, float] = {}
    for group in groups:
        new = {name for name in group if name and name not in seen}
        if not new:
            continue
        met += 1
        seen |= new
        for name in new:
            weights[name] = ordinal_weight(met) / len(new)
    return weights, met


def player_tests(
    player: str, played: Sequence[PlayedSeat], before: PlayerState | None = None,
) -> tuple[list[tuple[LeakTest, list[PlayedSeat]]], PlayerState]:
    """Every test the player's seats (in the order dealt) read, with those seats, going on from
    ``before``; and the meetings after them (the tests' states are the runs')."""
    before = before or PlayerState()
    readable = [seat for seat in played if player not in seat.companions]  # two seats of his own: left out
    by_dealer: dict[str, list[PlayedSeat]] = defaultdict(list)
    by_companion: dict[str, list[PlayedSeat]] = defaultdict(list)
    for seat in readable:
        if seat.dealer:
            by_dealer[seat.dealer].append(seat)
        for companion in seat.companions:
            if companion:
                by_companion[companion].append(seat)
    known = {(code, dealer or companion) for code, dealer, companion in before.tests}
    dealers, dealers_met = meeting_weights(
        ([seat.dealer or ""] for seat in readable), {n for c, n in known if c == HOLE_CARDING},
        before.dealers_met,
    )
    companions, companions_met = meeting_weights(
        (seat.companions for seat in readable), {n for c, n in known if c == COLLUSION}, before.companions_met,
    )

    def weight(tid: TestId, new: float) -> float:
        stood = before.tests.get(tid)
        return stood.weight if stood is not None else new

    overall = HOLE_CARDING_BUDGET * OVERALL_SHARE
    tests: list[tuple[LeakTest, list[PlayedSeat]]] = [
        (LeakTest(HOLE_CARDING, player, SEEN_CARD, weight((HOLE_CARDING, "", ""), overall)), readable),
    ]
    for dealer, seats in by_dealer.items():
        new = HOLE_CARDING_BUDGET * (1 - OVERALL_SHARE) * dealers.get(dealer, 0.0)
        tests.append((LeakTest(HOLE_CARDING, player, SEEN_CARD, weight((HOLE_CARDING, dealer, ""), new),
                               dealer=dealer), seats))
    for companion, seats in by_companion.items():
        new = (1 - HOLE_CARDING_BUDGET) * companions.get(companion, 0.0)
        tests.append((
            LeakTest(COLLUSION, player, companion_knowledge(companion),
                     weight((COLLUSION, "", companion), new), companion=companion), seats,
        ))
    return tests, PlayerState({}, dealers_met, companions_met)


def trace_of(
    test: LeakTest, seats: Sequence[PlayedSeat], settings: LeakSettings = LeakSettings(),
    state: TestState | None = None,
) -> Trace:
    if test.code == HOLE_CARDING:
        return hole_carding_test(seats, test, settings, state)
    return companion_test(seats, test, settings, state)


def player_run(
    player: str, played: Sequence[PlayedSeat], settings: LeakSettings = LeakSettings(),
    before: PlayerState | None = None,
) -> tuple[list[Trace], PlayerState]:
    """Every test of one player over ``played`` (his seats in the order dealt), going on from
    ``before`` (his tests as the seats before these left them); and where they stand after.
    ``before`` is not changed."""
    before = before or PlayerState()
    tests, after = player_tests(player, played, before)
    traces = []
    for test, read in tests:
        stood = before.tests.get(key_of(test))
        trace = trace_of(test, read, settings, copy.deepcopy(stood))  # ``before`` stays as given
        traces.append(trace)
        after.tests[key_of(test)] = trace.state
    return traces, after


def leak_traces(
    seats: Iterable[PlayedSeat], settings: LeakSettings = LeakSettings(),
    before: dict[str, PlayerState] | None = None,
) -> dict[str, list[Trace]]:
    """Every test of every player among ``seats`` (in the order dealt), by player, each going on
    from where ``before`` says it stood (from nothing, without)."""
    by_player: dict[str, list[PlayedSeat]] = defaultdict(list)
    for seat in seats:
        by_player[seat.player].append(seat)
    before = before or {}
    return {
        player: player_run(player, played, settings, before.get(player))[0]
        for player, played in by_player.items()
    }


def leak_suspicions(seats: Iterable[PlayedSeat], settings: LeakSettings = LeakSettings()) -> list[Trace]:
    """The tests that crossed their threshold."""
    return [trace for traces in leak_traces(seats, settings).values() for trace in traces if trace.crossed]
