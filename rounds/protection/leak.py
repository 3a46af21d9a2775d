"""The information-leak test: does a player play as if seeing cards no one may see?

At a *telling* decision (``scoring``: a dealer card, or the other seats'
cards, would make another option best than the player's own cards do) an
honest player chooses the informed option only by mistake, and his mistakes
cannot depend on cards he did not see. An informed player chooses it
whenever he saw the card.

The test is a CUSUM of log-likelihood ratios over a player's telling
decisions, in the order they were dealt, between

- H0, honest: the informed option with probability ``e``, the player's own
  error rate at decisions like this one (the same street, the same best
  option, as close, with a hand of the same kind: no pair, a pair, more),
  measured where no knowledge would have changed anything (so a cheat's
  informed plays do not inflate it); a Beta prior keeps a short history near
  a population rate. Alike must mean all of that: a player who plays by rules
  of his own (fold every river without a pair) errs at some kinds of decision
  every time and at others never, and the decisions a seen card changes are
  more often of some kinds than others;
- H1, informed on a share ``f`` of his hands: ``p1 = f·(1 − e) + (1 − f)·e``.

Each telling decision adds ``ln(p1/e)`` if he chose the informed option,
``ln((1 − p1)/(1 − e))`` if not; the figure never goes below 0 and a
suspicion is raised when it reaches ``threshold``. Under H0 the figure
drifts down, under H1 up; how many hands a cheat takes to cross it and how
often an honest player ever does are measured by ``bench/leak_test.py``.

The same test runs per player, per player and dealer, and (with the other
seats' cards as the knowledge) per pair of players who sat together.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from .codes import ProtectionCode
from .scoring import DEALER_CARD, DecisionScore, Knowledge, SeatScore

# Margins (Antes between the best and the next option) that make decisions alike.
MARGIN_EDGES: tuple[float, ...] = (0.05, 0.2, 0.5, 1.0)


@dataclass(frozen=True, slots=True)
class LeakSettings:
    threshold: float = math.log(1000)  # the CUSUM's figure at which a suspicion is raised
    share: float = 0.5  # H1: the share of hands the informed player sees the card
    prior_rate: float = 0.1  # an honest player's error rate before his own history says more
    prior_weight: float = 10.0  # how many decisions the prior counts for
    lowest_rate: float = 0.01
    highest_rate: float = 0.45  # above it a player's choices are too random to tell anything
    min_telling: int = 5  # telling decisions before a suspicion can be raised


def alike(decision: DecisionScore) -> tuple[str, str, int, int]:
    """What makes two decisions alike for a player's error rate (see the module)."""
    ranked = sorted(decision.values.values(), reverse=True)
    margin = ranked[0] - ranked[1]
    return (
        decision.street, decision.best, min(decision.hand, 2),
        sum(1 for edge in MARGIN_EDGES if margin >= edge),
    )


@dataclass
class ErrorModel:
    """A player's own error rate at alike decisions (``alike``), from his decisions that tell nothing.

    The closest decisions are nearly all telling (almost any extra card
    changes a choice worth a few hundredths of an Ante), so the rate at a
    kind of decision is drawn towards the rate at every margin of that kind
    (the same street, best option and hand), and that towards the prior.
    """

    settings: LeakSettings = field(default_factory=LeakSettings)
    errors: dict[tuple, int] = field(default_factory=lambda: defaultdict(int))
    counted: dict[tuple, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, decision: DecisionScore) -> None:
        if any(decision.telling(k) for k in decision.informed):
            return
        fine = alike(decision)
        for bucket in (fine, fine[:3]):
            self.counted[bucket] += 1
            self.errors[bucket] += decision.chosen != decision.best

    def rate(self, decision: DecisionScore) -> float:
        s = self.settings
        fine = alike(decision)
        rate = s.prior_rate
        for bucket in (fine[:3], fine):
            rate = (self.errors[bucket] + rate * s.prior_weight) / (self.counted[bucket] + s.prior_weight)
        return min(max(rate, s.lowest_rate), s.highest_rate)


@dataclass(frozen=True, slots=True)
class Step:
    """One telling decision in the test: its evidence and the figure after it."""

    key: Hashable  # the caller's reference to the seat-round (its round id and seat)
    decision: DecisionScore
    knowledge: str
    informed_option: str
    chose_informed: bool
    error_rate: float
    llr: float
    figure: float


@dataclass(frozen=True, slots=True)
class Trace:
    steps: tuple[Step, ...]
    crossed_at: int | None  # index of the step where the figure first reached the threshold

    @property
    def figure(self) -> float:
        return self.steps[-1].figure if self.steps else 0.0

    @property
    def peak(self) -> float:
        return max((s.figure for s in self.steps), default=0.0)


def run_test(
    decisions: Iterable[tuple[Hashable, DecisionScore]],
    knowledge: str,
    model: ErrorModel,
    settings: LeakSettings = LeakSettings(),
) -> Trace:
    """The CUSUM over the telling decisions among ``decisions`` (in the order dealt)."""
    figure, steps, crossed = 0.0, [], None
    telling = 0
    for key, decision in decisions:
        if not decision.telling(knowledge):
            continue
        telling += 1
        informed = decision.informed[knowledge].best
        chose = decision.chosen == informed
        e = model.rate(decision)
        p1 = settings.share * (1 - e) + (1 - settings.share) * e
        llr = math.log(p1 / e) if chose else math.log((1 - p1) / (1 - e))
        figure = max(0.0, figure + llr)
        steps.append(Step(key, decision, knowledge, informed, chose, e, llr, figure))
        if crossed is None and figure >= settings.threshold and telling >= settings.min_telling:
            crossed = len(steps) - 1
    return Trace(tuple(steps), crossed)


@dataclass(frozen=True, slots=True)
class PlayedSeat:
    """A scored seat-round as the test reads it, in the order dealt."""

    key: Hashable
    player: str
    dealer: str | None
    companions: tuple[str, ...]  # the other players at the table that round
    score: SeatScore


@dataclass(frozen=True, slots=True)
class LeakSuspicion:
    code: str
    player: str
    knowledge: str
    trace: Trace
    dealer: str | None = None
    companion: str | None = None


def _decisions(seats: Sequence[PlayedSeat]):
    for seat in seats:
        for decision in seat.score.decisions:
            yield seat.key, decision


def leak_suspicions(seats: Iterable[PlayedSeat], settings: LeakSettings = LeakSettings()) -> list[LeakSuspicion]:
    """Every player, player and dealer, and pair of players whose test crossed the threshold."""
    by_player: dict[str, list[PlayedSeat]] = defaultdict(list)
    for seat in seats:
        by_player[seat.player].append(seat)
    found = []
    for player, played in by_player.items():
        model = ErrorModel(settings)
        for _, decision in _decisions(played):
            model.add(decision)
        by_dealer: dict[str, list[PlayedSeat]] = defaultdict(list)
        by_companion: dict[str, list[PlayedSeat]] = defaultdict(list)
        for seat in played:
            if seat.dealer:
                by_dealer[seat.dealer].append(seat)
            for companion in seat.companions:
                by_companion[companion].append(seat)
        for knowledge in DEALER_CARD:
            trace = run_test(_decisions(played), knowledge, model, settings)
            if trace.crossed_at is not None:
                found.append(LeakSuspicion(ProtectionCode.SUSPECTED_HOLE_CARDING.value, player, knowledge, trace))
            for dealer, with_dealer in by_dealer.items():
                trace = run_test(_decisions(with_dealer), knowledge, model, settings)
                if trace.crossed_at is not None:
                    found.append(LeakSuspicion(
                        ProtectionCode.SUSPECTED_HOLE_CARDING.value, player, knowledge, trace, dealer=dealer,
                    ))
        others = Knowledge.OTHER_SEATS.value
        for companion, together in by_companion.items():
            trace = run_test(_decisions(together), others, model, settings)
            if trace.crossed_at is not None:
                found.append(LeakSuspicion(
                    ProtectionCode.SUSPECTED_COLLUSION.value, player, others, trace, companion=companion,
                ))
    return found
