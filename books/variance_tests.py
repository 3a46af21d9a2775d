"""The regulators' variance tests: a group's figures in, the groups that trip a test out.

Plain Python, no Django. Three tests, each on the sums the nightly report
keeps per table (and dealer) and currency:

- ``comar``, Maryland COMAR 36.05.03.25: the actual win outside the 95 %
  confidence interval of the theoretical win, theoretical ± z·sd with
  z = 1.959963984540054, for the day, the month to date and the year to date;
  tables and dealers.
- ``kansas``, Kansas 112-108-51: a table's hold for the month (win / handle,
  in percent) more than ``threshold`` percentage points from its base level:
  a fixed hold percentage, or the table's theoretical hold for the same
  period (theoretical win / handle × 100).
- ``ohio``, Ohio 3772-10-08: a table's payout percentage over the last 30
  days ((handle − win) / handle × 100) more than ``threshold`` points from its
  lifetime payout percentage.

The test codes, period names and scope names are defined here once; the
models' choices, the settings and the admin take them from here.

Money is the house's view (``win`` is what the house won). Percentages are
computed, compared and shown to 4 decimal places, so the figures a finding
shows are the figures that decided it; the interval's limits are shown to
the millionth (their inputs, the report's theoretical win and sd, are kept to the cent).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum

from books.figures import percent_of as percent
from books.statistics import Z_95, Band


class VarianceTest(StrEnum):
    COMAR = "comar"
    KANSAS = "kansas"
    OHIO = "ohio"


class Scope(StrEnum):
    TABLE = "table"
    DEALER = "dealer"


class Period(StrEnum):
    DAY = "day"
    MONTH_TO_DATE = "month_to_date"
    YEAR_TO_DATE = "year_to_date"
    MONTH = "month"
    ROLLING_30 = "rolling_30"  # the 30 gaming days ending on day_to
    LIFETIME = "lifetime"  # every gaming day up to day_to


PERIOD_LABELS: dict[Period, str] = {
    Period.DAY: "day",
    Period.MONTH_TO_DATE: "month to date",
    Period.YEAR_TO_DATE: "year to date",
    Period.MONTH: "month",
    Period.ROLLING_30: "last 30 days",
    Period.LIFETIME: "lifetime",
}
SCOPE_LABELS: dict[Scope, str] = {Scope.TABLE: "table", Scope.DEALER: "dealer"}
TITLES: dict[VarianceTest, str] = {
    VarianceTest.COMAR: "Maryland COMAR 36.05.03.25",
    VarianceTest.KANSAS: "Kansas 112-108-51",
    VarianceTest.OHIO: "Ohio 3772-10-08",
}
# The periods COMAR asks for; Kansas looks at a month (or the month to date),
# Ohio at the last 30 days against the lifetime.
COMAR_PERIODS = (Period.DAY, Period.MONTH_TO_DATE, Period.YEAR_TO_DATE)
KANSAS_PERIODS = (Period.MONTH, Period.MONTH_TO_DATE)

# Which numbers each test takes, and the settings a casino starts with
# (audit migration 0009 writes the same, as migrations never import this).
USES_THRESHOLD = frozenset({VarianceTest.KANSAS, VarianceTest.OHIO})
USES_BASE_HOLD = frozenset({VarianceTest.KANSAS})
PERCENT_PLACES = 4
PERCENT = Decimal(1).scaleb(-PERCENT_PLACES)  # 0.0001
FINE = Decimal("0.000001")  # how fine the interval's limits are shown


@dataclass(frozen=True, slots=True)
class VarianceSetting:
    """One test as a casino configured it. ``threshold`` is in percentage points."""

    code: VarianceTest
    enabled: bool
    threshold: Decimal | None = None
    base_hold: Decimal | None = None

    def as_json(self) -> dict:
        return {
            "enabled": self.enabled,
            "threshold": None if self.threshold is None else str(self.threshold),
            "base_hold": None if self.base_hold is None else str(self.base_hold),
        }


DEFAULTS: dict[VarianceTest, VarianceSetting] = {
    VarianceTest.COMAR: VarianceSetting(VarianceTest.COMAR, enabled=True),
    VarianceTest.KANSAS: VarianceSetting(VarianceTest.KANSAS, enabled=False, threshold=Decimal(3)),
    VarianceTest.OHIO: VarianceSetting(VarianceTest.OHIO, enabled=False, threshold=Decimal(4)),
}


@dataclass(frozen=True, slots=True)
class VarianceSettings:
    """The three tests' settings, as a report ran them (its inputs keep ``as_json()``)."""

    comar: VarianceSetting
    kansas: VarianceSetting
    ohio: VarianceSetting

    def of(self, code: str) -> VarianceSetting:
        return getattr(self, VarianceTest(code).value)

    def as_json(self) -> dict:
        return {test.value: self.of(test).as_json() for test in VarianceTest}


@dataclass(frozen=True, slots=True)
class PeriodFigures:
    """One group's sums over one period: a table's or a dealer's, in one currency."""

    scope: str
    key: str  # the table's code or the dealer's id
    currency: str
    period: str
    day_from: date
    day_to: date
    handle: Decimal
    win: Decimal  # the house's
    theoretical: Decimal
    sd: Decimal  # of the win

    def __post_init__(self) -> None:
        # An unknown name or a float is a caller's mistake, not a figure.
        Scope(self.scope)
        Period(self.period)
        for name in ("handle", "win", "theoretical", "sd"):
            if not isinstance(getattr(self, name), Decimal):
                raise TypeError(f"{name} must be a Decimal, not {type(getattr(self, name)).__name__}")


@dataclass(frozen=True, slots=True)
class Trip:
    """A group that tripped a test, with every number behind the verdict as text."""

    test: str
    scope: str
    key: str
    currency: str
    period: str
    day_from: date
    day_to: date
    figures: dict[str, str]
    detail: str


def hold_percent(group: PeriodFigures) -> Decimal:
    return percent(group.win, group.handle)


def theoretical_hold_percent(group: PeriodFigures) -> Decimal:
    return percent(group.theoretical, group.handle)


def payout_percent(group: PeriodFigures) -> Decimal:
    return percent(group.handle - group.win, group.handle)


def comar(groups: Iterable[PeriodFigures]) -> list[Trip]:
    """The groups whose win lies outside theoretical ± z·sd (z for 95 %); on a limit is inside.

    Tables and dealers, for the day, the month to date and the year to date
    (``COMAR_PERIODS``); groups of other periods are passed over. A group with
    zero handle never trips: nothing was wagered, so there is nothing to test.
    Nor does one without spread (sd zero), which the report cannot band either.
    """
    trips = []
    for group in groups:
        if group.period not in COMAR_PERIODS or not group.handle or group.sd <= 0:
            continue
        band = Band(group.theoretical, group.sd, Z_95)
        if band.holds(group.win):
            continue
        side = "above" if group.win > band.high else "below"
        z = ((group.win - group.theoretical) / group.sd).quantize(PERCENT, rounding=ROUND_HALF_UP)
        figures = _money(group) | {
            "z_95": str(Z_95),
            "low_95": str(band.low.quantize(FINE)),
            "high_95": str(band.high.quantize(FINE)),
            "z": str(z),
        }
        detail = (
            f"{_who(group)} won {group.win} {group.currency} {_when(group)}, {side} the 95 % interval "
            f"of its theoretical win {group.theoretical} {group.currency} "
            f"({figures['low_95']} to {figures['high_95']}; {z} standard deviations)."
        )
        trips.append(_trip(VarianceTest.COMAR, group, figures, detail))
    return trips


def kansas(
    months: Iterable[PeriodFigures], *, threshold: Decimal, base_hold: Decimal | None
) -> list[Trip]:
    """The tables whose hold moved more than ``threshold`` points from the base level.

    The base is ``base_hold`` (a hold percentage) when it is set, else each
    table's theoretical hold for the same period. A deviation of exactly
    ``threshold`` does not trip. Tables' months (``KANSAS_PERIODS``) only:
    dealers' groups and other periods are passed over. A table with zero
    handle never trips (it has no hold).
    """
    threshold = _points(threshold, "threshold")
    if base_hold is not None:
        base_hold = _points(base_hold, "base_hold", negative=True)
    trips = []
    for group in months:
        if group.scope != Scope.TABLE or group.period not in KANSAS_PERIODS or not group.handle:
            continue
        hold = hold_percent(group)
        base = base_hold if base_hold is not None else theoretical_hold_percent(group)
        base = base.quantize(PERCENT, rounding=ROUND_HALF_UP)
        deviation = hold - base
        if abs(deviation) <= threshold:
            continue
        figures = _money(group) | {
            "hold_percent": str(hold),
            "base_percent": str(base),
            "base": "fixed" if base_hold is not None else "theoretical",
            "deviation": str(deviation),
            "threshold": str(threshold),
        }
        source = "the fixed base" if base_hold is not None else "its theoretical hold"
        detail = (
            f"{_who(group)} held {hold} % of {group.handle} {group.currency} {_when(group)}, "
            f"{abs(deviation)} points {'above' if deviation > 0 else 'below'} {source} of {base} % "
            f"(threshold {threshold} points)."
        )
        trips.append(_trip(VarianceTest.KANSAS, group, figures, detail))
    return trips


def ohio(pairs: Iterable[tuple[PeriodFigures, PeriodFigures]], *, threshold: Decimal) -> list[Trip]:
    """The tables whose 30-day payout percentage is more than ``threshold`` points from the lifetime's.

    Each pair is a table's ``(rolling_30, lifetime)`` figures in one currency.
    A deviation of exactly ``threshold`` does not trip; a table with zero
    handle in either period never trips.
    """
    threshold = _points(threshold, "threshold")
    trips = []
    for recent, lifetime in pairs:
        if (recent.period, lifetime.period) != (Period.ROLLING_30, Period.LIFETIME):
            raise ValueError(
                f"a pair is (rolling_30, lifetime), not ({recent.period}, {lifetime.period})"
            )
        if _group_of(recent) != _group_of(lifetime):
            raise ValueError(
                f"a pair is one group's: {recent.scope} {recent.key} {recent.currency} "
                f"is not {lifetime.scope} {lifetime.key} {lifetime.currency}"
            )
        if recent.scope != Scope.TABLE:
            raise ValueError("Ohio's test is a table's")
        if not recent.handle or not lifetime.handle:
            continue
        payout, lifetime_payout = payout_percent(recent), payout_percent(lifetime)
        deviation = payout - lifetime_payout
        if abs(deviation) <= threshold:
            continue
        figures = _money(recent) | {
            "payout_percent": str(payout),
            "lifetime_handle": str(lifetime.handle),
            "lifetime_win": str(lifetime.win),
            "lifetime_day_from": lifetime.day_from.isoformat(),
            "lifetime_day_to": lifetime.day_to.isoformat(),
            "lifetime_payout_percent": str(lifetime_payout),
            "deviation": str(deviation),
            "threshold": str(threshold),
        }
        detail = (
            f"{_who(recent)} paid out {payout} % of {recent.handle} {recent.currency} {_when(recent)}, "
            f"{abs(deviation)} points {'above' if deviation > 0 else 'below'} its lifetime "
            f"{lifetime_payout} % since {lifetime.day_from} (threshold {threshold} points)."
        )
        trips.append(_trip(VarianceTest.OHIO, recent, figures, detail))
    return trips


def variance_trips(
    *, settings: VarianceSettings, groups: Iterable[PeriodFigures] = (),
    months: Iterable[PeriodFigures] = (), pairs: Iterable[tuple[PeriodFigures, PeriodFigures]] = (),
) -> list[Trip]:
    """Every enabled test on its figures.

    ``groups`` for COMAR, ``months`` for Kansas, ``pairs`` for Ohio; each test
    passes over what it does not judge, so one list may serve all three.
    """
    trips = []
    if settings.comar.enabled:
        trips += comar(groups)
    if settings.kansas.enabled:
        trips += kansas(
            months, threshold=_threshold_of(settings.kansas), base_hold=settings.kansas.base_hold
        )
    if settings.ohio.enabled:
        trips += ohio(pairs, threshold=_threshold_of(settings.ohio))
    return trips


# ---- the pieces -------------------------------------------------------------


def _threshold_of(setting: VarianceSetting) -> Decimal:
    return setting.threshold if setting.threshold is not None else DEFAULTS[setting.code].threshold


def _points(value: Decimal, name: str, *, negative: bool = False) -> Decimal:
    if not isinstance(value, Decimal) or not value.is_finite():
        raise TypeError(f"{name} must be a finite Decimal")
    if value < 0 and not negative:
        raise ValueError(f"{name} cannot be negative")
    return value


def _group_of(figures: PeriodFigures) -> tuple[str, str, str]:
    return figures.scope, figures.key, figures.currency


def _money(group: PeriodFigures) -> dict[str, str]:
    return {
        "handle": str(group.handle), "win": str(group.win),
        "theoretical": str(group.theoretical), "sd": str(group.sd),
    }


def _who(group: PeriodFigures) -> str:
    return f"{SCOPE_LABELS[Scope(group.scope)].capitalize()} {group.key}"


def _when(group: PeriodFigures) -> str:
    if group.period == Period.DAY and group.day_from == group.day_to:
        return f"on {group.day_to}"
    return f"in the {PERIOD_LABELS[Period(group.period)]} {group.day_from} to {group.day_to}"


def _trip(test: VarianceTest, group: PeriodFigures, figures: dict[str, str], detail: str) -> Trip:
    return Trip(
        test=test.value, scope=Scope(group.scope).value, key=group.key, currency=group.currency,
        period=Period(group.period).value,
        day_from=group.day_from, day_to=group.day_to, figures=figures, detail=detail,
    )
