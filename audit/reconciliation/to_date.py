"""A day's report beside the periods that end with it: the month and year to date, and the
regulators' variance tests on them.

Everything here is read from the days' stored current reports (``selectors.report_rollup``),
never recomputed from rounds.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal

from books.figures import SCOPE_OF
from books.report_figures import Groups, ReportFigures, ToDate
from books.variance_tests import Period, PeriodFigures, Scope, VarianceSettings, variance_trips
from game.bets import BANDED_BETS

from . import selectors

# Ohio 3772-10-08 compares the last 30 gaming days with the table's lifetime.
OHIO_DAYS = 30
PERIOD_SCOPES = ("tables", "dealers")


def periods_to_date(day: date) -> dict[str, ToDate]:
    """The month and the year up to ``day``, by table and dealer and currency, from the days' reports:
    what the report of the day before kept of them plus the day, where that still holds."""
    kept = selectors.periods_kept(day=day - timedelta(days=1))
    return {
        "month_to_date": selectors.month_to_date(day=day, scopes=PERIOD_SCOPES, kept=kept.get("month_to_date")),
        "year_to_date": selectors.year_to_date(day=day, scopes=PERIOD_SCOPES, kept=kept.get("year_to_date")),
    }


def variance_trips_of_day(day: date, figures: ReportFigures, tests: VarianceSettings) -> list:
    """The regulators' tests on the day's figures and those of the periods that end with it."""
    groups = []
    for period, source in ((Period.DAY, figures), (Period.MONTH_TO_DATE, figures.month_to_date),
                           (Period.YEAR_TO_DATE, figures.year_to_date)):
        first = day if period == Period.DAY else source.day_from
        for scope in PERIOD_SCOPES:
            groups += period_figures(source.groups(scope), scope=SCOPE_OF[scope], period=period,
                                     day_from=first, day_to=day)
    # Kansas judges a month's hold: on the month's last day, not on every day of it.
    month_ends = (day + timedelta(days=1)).day == 1
    months = [
        replace(g, period=Period.MONTH)
        for g in groups if month_ends and g.period == Period.MONTH_TO_DATE and g.scope == Scope.TABLE
    ]
    pairs = []
    if tests.ohio.enabled:
        start = day - timedelta(days=OHIO_DAYS - 1)
        first = selectors.first_reported_day() or day
        recent = period_figures(selectors.report_rollup(day_from=start, day_to=day, scopes=("tables",)).tables,
                                scope=Scope.TABLE, period=Period.ROLLING_30, day_from=start, day_to=day)
        lifetime = {
            (g.key, g.currency): g for g in period_figures(
                selectors.report_rollup(day_from=first, day_to=day, scopes=("tables",)).tables,
                scope=Scope.TABLE, period=Period.LIFETIME, day_from=first, day_to=day)
        }
        pairs = [(g, lifetime[g.key, g.currency]) for g in recent if (g.key, g.currency) in lifetime]
    return variance_trips(settings=tests, groups=groups, months=months, pairs=pairs)


def period_figures(
    derived: Groups, *, scope: str, period: str, day_from: date, day_to: date
) -> list[PeriodFigures]:
    """A scope's ``{key: {currency: figures}}`` as the variance tests read them.

    The tests judge the bets that have a theoretical win (Ante, Blind, Play,
    Trips: the total band); the Progressive, paid from its meter, is left out
    of handle and win alike. Their theoretical win is the game's, at optimal
    play (``bands_optimal``), whatever the report's own bands judged by: it is
    what the regulations and the game's published house edge define, where
    the one at actual play rests on the casino's own scoring of decisions
    (docs/VARIANCE.md, "Two theoretical wins").
    """
    found = []
    for key, by_currency in derived.items():
        for currency, g in by_currency.items():
            band = g.bands_optimal.total
            found.append(PeriodFigures(
                scope=scope, key=key, currency=currency, period=period, day_from=day_from, day_to=day_to,
                handle=sum((g.handle.get(bet, Decimal(0)) for bet in BANDED_BETS), Decimal(0)),
                win=band.actual, theoretical=band.expected, sd=band.sd,
            ))
    return found
