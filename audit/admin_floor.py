"""A dealer's page and a table's page in the admin, under the reports'
(``/admin/audit/reconciliationreport/dealers/<dealer>/`` and ``tables/<code>/``).

What the dealer or the table dealt week by week in each currency (rounds,
hands and hands an hour, handle, the house's win by the rules and as paid),
the payout mismatches over and under per 1,000 hands and the money at stake,
charted by ISO week, the days against their bands, and game protection's
findings that name them; a table's page adds the configurations it was
given over time, its configuration's versions and its silences of the last week. Read from the
days' totals and the rounds' moments (``audit.selectors.weeks_dealt``) and the days' reports
(``report_band_series``); for whoever may read reports.
"""

from __future__ import annotations

from datetime import date, timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.safestring import mark_safe

from infra import charts
from infra.admin_links import changelist_url
from infra.gaming_day import gaming_day_of
from rounds.models import Round, Table

from . import selectors
from .models import ProtectionFinding
from .tonight import silences_of

WEEKS = 8
BAND_DAYS = 30
SILENT_DAYS = 7
STINT_DAYS = 7
READ = ("audit.view_reconciliationreport",)


def dealer_url(dealer: str) -> str:
    return reverse("admin:audit_reconciliationreport_dealer", args=[dealer])


def table_url(code: str) -> str:
    return reverse("admin:audit_reconciliationreport_table", args=[code])


class FloorPages:
    """A ModelAdmin's part that serves the dealers' and the tables' pages."""

    def get_urls(self):
        return [
            path("dealers/<str:dealer>/", self.admin_site.admin_view(self.dealer_view),
                 name="audit_reconciliationreport_dealer"),
            path("tables/<str:code>/", self.admin_site.admin_view(self.table_view),
                 name="audit_reconciliationreport_table"),
            *super().get_urls(),
        ]

    def dealer_view(self, request, dealer: str):
        last_day = self._last_day(request)
        weeks = selectors.dealer_weeks(dealer=dealer, day_to=last_day, weeks=WEEKS)
        since = timezone.now() - timedelta(days=STINT_DAYS)
        return self._floor_page(request, f"Dealer {dealer}", who=dealer, scope="dealers", weeks=weeks,
                                last_day=last_day, whose={"dealer": dealer},
                                findings=selectors.protection_findings_about(dealer=dealer),
                                stints=selectors.dealer_stints(dealer=dealer, since=since), stint_days=STINT_DAYS,
                                stint_break=settings.STINT_BREAK)

    def table_view(self, request, code: str):
        last_day = self._last_day(request)
        table = get_object_or_404(Table.objects.select_related("config"), code=code)
        weeks = selectors.table_weeks(table_id=table.pk, day_to=last_day, weeks=WEEKS)
        days = [last_day - timedelta(days=n) for n in range(SILENT_DAYS)]
        return self._floor_page(
            request, f"Table {code}", who=code, scope="tables", weeks=weeks, last_day=last_day,
            whose={"table__id__exact": table.pk},
            findings=selectors.protection_findings_about(table=code),
            table=table, versions=table.config.versions.order_by("-version"),
            silences=[s for day in days for s in silences_of(day, table_id=table.pk)],
            assignments=selectors.table_configs(table=table),
        )

    def _last_day(self, request) -> date:
        if not request.user.has_perms(READ):
            raise PermissionDenied
        return gaming_day_of(timezone.now())

    def _floor_page(self, request, title: str, *, who: str, scope: str, weeks, last_day: date, whose: dict,
                    findings, **context) -> TemplateResponse:
        mondays = [last_day - timedelta(days=last_day.weekday()) - timedelta(weeks=n)
                   for n in range(WEEKS - 1, -1, -1)]
        return TemplateResponse(request, "admin/audit/reconciliationreport/floor.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": title,
            "who": who, "weeks": weeks, "week_rows": [(w, _week_rounds_url(whose, w, last_day)) for w in weeks],
            "last_day": last_day, "rounds_url": changelist_url(Round, **whose),
            "findings": findings,
            "findings_url": changelist_url(ProtectionFinding, state="all", q=who),
            "charts": _charts(who, scope, weeks, mondays, last_day), **context,
        })


def _week_rounds_url(whose: dict, week, last_day: date) -> str:
    """The rounds a week's row counts: ``whose`` (the rounds list's filter of the dealer or table)
    on the week's days up to ``last_day``, in its currency, none held."""
    last = min(week.week + timedelta(days=6), last_day)
    return changelist_url(Round, **whose, gaming_day__gte=week.week, gaming_day__lt=last + timedelta(days=1),
                          currency=week.currency, held__exact=0)


def _charts(who: str, scope: str, weeks, mondays: list[date], last_day: date):
    """The mismatches by week, and the days against their bands in each currency dealt."""
    # A week dealt in two currencies is one bar: its mismatches in both.
    by_week: dict[date, list[int]] = {}
    for w in weeks:
        if w.mismatches:
            week = by_week.setdefault(w.week, [0, 0, 0])
            week[0], week[1], week[2] = week[0] + w.mismatches, week[1] + w.overpaid, week[2] + w.underpaid
    counts = [charts.WeekCount(week, *figures) for week, figures in sorted(by_week.items())]
    parts = []
    if counts:
        parts.append(charts.mismatch_chart(
            title=f"{who}: payout mismatches by ISO week, {charts.iso_week(mondays[0])} to "
                  f"{charts.iso_week(mondays[-1])}", weeks=mondays, dealers={who: counts}))
    currencies = sorted({w.currency for w in weeks})
    series = selectors.report_band_series(scope=scope, groups=[(who, c) for c in currencies],
                                          day_to=last_day, days=BAND_DAYS)
    window = series.days[-BAND_DAYS:]
    for currency in currencies:
        bands = series.bands["day", who, currency]
        if any(bands.get(day) for day in window):
            parts.append(charts.band_chart(
                title=f"{who}, {currency}: {charts.BANDED}, by day against its band", currency=currency,
                days=[charts.BandDay(day=day, band=bands.get(day)) for day in window], narrow=True))
    return mark_safe(charts.chart_row(parts)) if parts else ""
