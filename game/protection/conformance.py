"""Pay-table conformance: the Blind and Trips pay table a table really pays.

Every winning Blind and Trips a dealer pays shows the multiple he paid it at,
up to the rounding: a win is the wager times the line's multiple, rounded down
to the minor unit, so a multiple m fits an observation exactly when
``floor(wager * m) == claimed``. A flush Blind at 3:2 on 5 kr with whole-krona
rounding pays 7, which 1.4 fits as well as 1.5; one observation cannot tell
them apart, many wagers can.

For each (table, bet, hand category) the candidates are the configured
multiple and, for each observation, the simplest decimal that fits it (the
fewest decimal places in ``[claimed / wager, (claimed + minor unit) / wager)``).
The multiple the table pays is the candidate that fits the most observations
(the configured one first on a tie, then the simplest). ``pay_table_mismatch``
is raised when that multiple is not the configured one, it fits more than the
configured share of the observations (a majority by default), and at least the
configured minimum of them fit it but not the configured multiple: a table
paying 9:1 on the Trips full house against 8:1 configured. A dealer's one-off
error never reaches a majority; it is a ``payout_mismatch`` already.

Only winning lines are evidence (a Blind the player won with a hand on the
Blind pay table, a Trips on a hand on the Trips pay table), and only rounds
whose wins the aggregate limit did not scale, nor whose cards are in doubt.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from math import ceil

from game.evaluator import category_of
from game.record import RoundRecord
from game.rules import FOLD, TableRules
from game.settlement import floor_to
from game.verdict import Verdict
from game.vocabulary import Bet, FindingCode

from .codes import ProtectionCode

PAY_TABLE_MISMATCH = ProtectionCode.PAY_TABLE_MISMATCH.value
ZERO = Decimal(0)
_MOST_PLACES = 40  # far beyond any pay: the interval always holds a decimal of fewer places
_EXAMPLES = 3


@dataclass(frozen=True, slots=True)
class PayObservation:
    """One winning Blind or Trips as the dealer paid it."""

    table: str
    bet: str  # "blind" or "trips"
    category: int
    wager: Decimal
    claimed: Decimal
    configured: Decimal  # the configured multiple of that category's line
    minor_unit: Decimal
    currency: str
    seat: int = 0  # the seat it was paid to


@dataclass(frozen=True, slots=True)
class ConformanceSettings:
    min_observations: int = 3  # observations that fit the other multiple and not the configured
    majority: float = 0.5  # the share of observations the other multiple must fit, strictly more


@dataclass(frozen=True, slots=True)
class PayLineEvidence:
    table: str
    bet: str
    category: int
    currency: str
    configured: Decimal
    observed: Decimal  # the multiple that fits the most observations
    observations: int
    fit_observed: int
    fit_configured: int
    fit_observed_only: int  # fit the observed multiple but not the configured one
    examples: tuple[tuple[Decimal, Decimal], ...]  # (wager, claimed) the observed multiple explains

    @property
    def share(self) -> float:
        return self.fit_observed / self.observations

    def differs(self, settings: ConformanceSettings) -> bool:
        return (
            self.observed != self.configured
            and self.fit_observed_only >= settings.min_observations
            and self.share > settings.majority
        )


def fits(multiple: Decimal, wager: Decimal, claimed: Decimal, minor_unit: Decimal) -> bool:
    """Whether a line paying ``multiple`` pays ``claimed`` on ``wager``."""
    return floor_to(wager * multiple, minor_unit) == claimed


def simplest_multiple(wager: Decimal, claimed: Decimal, minor_unit: Decimal) -> Decimal | None:
    """The decimal with the fewest places that pays ``claimed`` on ``wager``; None for no win."""
    if wager <= 0 or claimed < 0:
        return None
    # Exact: m pays `claimed` exactly when claimed <= wager * m < claimed + minor unit.
    low = Fraction(claimed) / Fraction(wager)
    high = (Fraction(claimed) + Fraction(minor_unit)) / Fraction(wager)
    for places in range(_MOST_PLACES):
        scale = 10**places
        steps = ceil(low * scale)
        if Fraction(steps, scale) < high:
            return Decimal(steps).scaleb(-places)
    return None


def pay_observations(
    table: str, record: RoundRecord, verdict: Verdict, rules: TableRules
) -> list[PayObservation]:
    """The winning Blind and Trips lines of a judged round that can say what the table pays."""
    codes = {finding.code for finding in verdict.findings}
    if record.void or codes & {FindingCode.AGGREGATE_LIMIT_APPLIED, FindingCode.DUPLICATE_CARD}:
        return []
    dealer = verdict.dealer_hand
    hands = {seat.seat: seat.hand for seat in verdict.seats}
    found = []
    for seat in record.seats:
        hand = hands[seat.seat]
        if seat.paid is None or hand is None or dealer is None:
            continue
        category = category_of(hand)
        won = seat.decision != FOLD and hand > dealer
        lines = (
            (Bet.BLIND.value, seat.blind if won else ZERO, rules.blind_pays),
            (Bet.TRIPS.value, seat.trips, rules.trips_pays),
        )
        for bet, wager, pays in lines:
            if wager and category in pays:
                found.append(PayObservation(
                    table, bet, category, wager, seat.paid.get(bet, ZERO), pays[category],
                    rules.minor_unit, rules.currency, seat.seat,
                ))
    return found


def pay_lines(observations: Iterable[PayObservation]) -> list[PayLineEvidence]:
    """What each (table, bet, category) is seen to pay, against what it is configured to pay."""
    groups: dict[tuple, list[PayObservation]] = defaultdict(list)
    for o in observations:
        groups[o.table, o.bet, o.category, o.currency, o.configured].append(o)
    return [_evidence(key, found) for key, found in sorted(groups.items(), key=_group_order)]


def pay_table_mismatches(
    observations: Iterable[PayObservation], settings: ConformanceSettings = ConformanceSettings()
) -> list[PayLineEvidence]:
    """The pay lines a table pays otherwise than configured (``pay_table_mismatch``)."""
    return [line for line in pay_lines(observations) if line.differs(settings)]


def explained(observation: PayObservation, mismatches: Iterable[PayLineEvidence]) -> bool:
    """Whether a payout is what a line the table pays otherwise than configured pays: the table's
    pay table, not the dealer's favour (a payout mismatch it explains is no sweetheart evidence)."""
    return any(
        (line.table, line.bet, line.category, line.currency, line.configured)
        == (observation.table, observation.bet, observation.category, observation.currency, observation.configured)
        and fits(line.observed, observation.wager, observation.claimed, observation.minor_unit)
        for line in mismatches
    )


def _group_order(item: tuple) -> tuple:
    (table, bet, category, currency, configured), _ = item
    return table, bet, category, currency, configured


def _evidence(key: tuple, found: list[PayObservation]) -> PayLineEvidence:
    table, bet, category, currency, configured = key
    candidates = [configured]
    for o in found:
        simplest = simplest_multiple(o.wager, o.claimed, o.minor_unit)
        if simplest is not None and simplest not in candidates:
            candidates.append(simplest)
    fitting = {
        m: [o for o in found if fits(m, o.wager, o.claimed, o.minor_unit)] for m in candidates
    }
    # Most observations first; on a tie the configured line, then the simplest multiple.
    observed = min(
        candidates,
        key=lambda m: (-len(fitting[m]), m != configured, -m.as_tuple().exponent, m),
    )
    configured_fits = set(map(id, fitting[configured]))
    only = [o for o in fitting[observed] if id(o) not in configured_fits]
    shown = only or fitting[observed]
    return PayLineEvidence(
        table, bet, category, currency, configured, observed,
        observations=len(found),
        fit_observed=len(fitting[observed]),
        fit_configured=len(fitting[configured]),
        fit_observed_only=len(only),
        examples=tuple((o.wager, o.claimed) for o in shown[:_EXAMPLES]),
    )
