"""Reads for the staff pages' charts: report bands and dealers' mismatches by week."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db.models import Count, DateField, F, Q
from django.db.models.functions import TruncWeek

from game.findings import PAYOUT_MISMATCH
from rounds.models import Finding
from rounds.selectors import OVERPAID, UNDERPAID

from .models import ReconciliationReport, ReportBand


# ---- series for the staff pages' charts ------------------------------------------------------
# Each reads what a chart needs in one bounded query (or three, for a meter), never a day's rounds.

BAND_PERIODS = ("day", "month_to_date", "year_to_date")


@dataclass(frozen=True, slots=True)
class BandSeries:
    """Groups' total bands over days, from the days' current single-day reports.

    ``bands[(period, key, currency)][day]`` is the band the report of ``day``
    stored for the group: of the day itself, or of its month or year to that
    day (``BAND_PERIODS``); a day without a current report has none.
    """

    days: list[date]
    reports: dict[date, int]
    bands: dict[tuple[str, str, str], dict[date, dict]]


def report_band_series(
    *, scope: str, groups: Sequence[tuple[str, str]], day_to: date, days: int = 30,
) -> BandSeries:
    """The day's, month-to-date's and year-to-date's total band of each ``(key, currency)`` of
    ``scope`` ("tables" or "dealers"), for the ``days`` days up to ``day_to`` and from the 1st of
    ``day_to``'s month at least: two reads by index, the days' current reports and their bands
    (``ReportBand``), never the reports' figures."""
    first = min(day_to - timedelta(days=days - 1), day_to.replace(day=1))
    current = {"report__status": ReconciliationReport.Status.COMPLETE, "day__gte": first, "day__lte": day_to}
    by_day = dict(
        ReconciliationReport.objects.filter(
            status=ReconciliationReport.Status.COMPLETE, day_from=F("day_to"),
            day_from__gte=first, day_from__lte=day_to,
        ).order_by("day_from").values_list("day_from", "pk")
    )
    found: dict[tuple[str, str, str], dict[date, dict]] = {
        (period, key, currency): {} for key, currency in groups for period in BAND_PERIODS}
    if groups:
        wanted = Q()
        for key, currency in groups:
            wanted |= Q(key=key, currency=currency)
        rows = ReportBand.objects.filter(wanted, scope=scope, **current).values_list(
            "period", "key", "currency", "day", "band")
        for period, key, currency, day, band in rows:
            if (period, key, currency) in found:
                found[period, key, currency][day] = band
    every_day = [first + timedelta(days=i) for i in range((day_to - first).days + 1)]
    return BandSeries(days=every_day, reports=by_day, bands=found)


@dataclass(frozen=True, slots=True)
class DealerWeek:
    dealer: str
    week: date  # the Monday its ISO week starts on
    mismatches: int
    overpaid: int  # of them, claimed more than due
    underpaid: int


# A finding is written when its round is stored, which is no earlier than the round was dealt
# less a table clock's lead: a day's slack lets the (code, created_at) index bound the read.
FINDING_LEAD = timedelta(days=2)


def dealer_mismatches_by_week(*, day_to: date, weeks: int = 8) -> list[DealerWeek]:
    """Payout mismatches (never the informational findings) per dealer per ISO week, for the
    ``weeks`` weeks that end with ``day_to``'s, by the rounds' gaming days: one grouped query."""
    first = day_to - timedelta(days=day_to.weekday()) - timedelta(weeks=weeks - 1)
    rows = (
        Finding.objects.filter(
            code=PAYOUT_MISMATCH, informational=False,
            created_at__gte=datetime.combine(first, datetime.min.time(), tzinfo=UTC) - FINDING_LEAD,
            round__gaming_day__gte=first, round__gaming_day__lte=day_to,
        )
        .annotate(week=TruncWeek("round__gaming_day", output_field=DateField()))
        .values("round__dealer", "week").order_by()
        .annotate(
            n=Count("id"),
            over=Count("id", filter=OVERPAID),
            under=Count("id", filter=UNDERPAID),
        )
    )
    return sorted(
        (DealerWeek(dealer=row["round__dealer"] or "(none)", week=_as_date(row["week"]),
                    mismatches=row["n"], overpaid=row["over"], underpaid=row["under"]) for row in rows),
        key=lambda w: (w.dealer, w.week),
    )


def _as_date(value) -> date:
    return value.date() if isinstance(value, datetime) else value
