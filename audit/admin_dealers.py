"""A dealer's page in the admin (``/admin/audit/reconciliationreport/dealers/<dealer>/``).

What he dealt week by week in each currency (rounds, hands and hands an hour,
handle, the house's win by the rules and as he paid), his payout mismatches
over and under per 1,000 hands and the money at stake, charted by ISO week,
his days against their bands, and game protection's findings that name him.
Read live from the rounds (``audit.selectors.dealer_weeks``) and the days'
reports (``report_band_series``); for whoever may read reports.
"""

from __future__ import annotations

from datetime import date, timedelta

from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.safestring import mark_safe

from infra import charts
from infra.admin_links import changelist_url
from infra.gaming_day import gaming_day_of
from rounds.models import Round

from . import selectors
from .models import ProtectionFinding

WEEKS = 8
BAND_DAYS = 30
READ = ("audit.view_reconciliationreport",)


def dealer_url(dealer: str) -> str:
    return reverse("admin:audit_reconciliationreport_dealer", args=[dealer])


class DealerPages:
    """A ModelAdmin's part that serves the dealers' pages."""

    def get_urls(self):
        return [
            path("dealers/<str:dealer>/", self.admin_site.admin_view(self.dealer_view),
                 name="audit_reconciliationreport_dealer"),
            *super().get_urls(),
        ]

    def dealer_view(self, request, dealer: str):
        if not request.user.has_perms(READ):
            raise PermissionDenied
        last_day = gaming_day_of(timezone.now())
        weeks = selectors.dealer_weeks(dealer=dealer, day_to=last_day, weeks=WEEKS)
        mondays = [last_day - timedelta(days=last_day.weekday()) - timedelta(weeks=n) for n in range(WEEKS - 1, -1, -1)]
        findings = list(selectors.dealer_protection_findings(dealer=dealer))
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": f"Dealer {dealer}",
            "dealer": dealer, "weeks": weeks, "findings": findings, "last_day": last_day,
            "rounds_url": changelist_url(Round, dealer=dealer),
            "findings_url": changelist_url(ProtectionFinding, state="all", q=dealer),
            "charts": _charts(dealer, weeks, mondays, last_day),
        }
        return TemplateResponse(request, "admin/audit/reconciliationreport/dealer.html", context)


def _charts(dealer: str, weeks, mondays: list[date], last_day: date):
    """His mismatches by week, and his days against their bands in each currency he dealt."""
    counts = [charts.WeekCount(w.week, w.mismatches, w.overpaid, w.underpaid) for w in weeks if w.mismatches]
    parts = []
    if counts:
        parts.append(charts.mismatch_chart(
            title=f"{dealer}: payout mismatches by ISO week, {charts.iso_week(mondays[0])} to "
                  f"{charts.iso_week(mondays[-1])}", weeks=mondays, dealers={dealer: counts}))
    currencies = sorted({w.currency for w in weeks})
    series = selectors.report_band_series(scope="dealers", groups=[(dealer, c) for c in currencies],
                                          day_to=last_day, days=BAND_DAYS)
    window = series.days[-BAND_DAYS:]
    for currency in currencies:
        bands = series.bands["day", dealer, currency]
        if any(bands.get(day) for day in window):
            parts.append(charts.band_chart(
                title=f"{dealer}, {currency}: house win by day against its band", currency=currency,
                days=[charts.BandDay(day=day, band=bands.get(day)) for day in window], narrow=True))
    return mark_safe(charts.chart_row(parts)) if parts else ""
