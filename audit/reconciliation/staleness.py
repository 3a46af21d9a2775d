"""Which reports undercount: rounds of their days stored after they were opened.

A table offline for an evening sends its rounds once it is back, after the
day's report was made. Ingest writes a ``rounds.LateRound`` beside each round
stored after its gaming day ended; a report opened before such a round
arrived is *stale*: it stays current (its figures are what they were) and says
so, and the healing job makes a new version that supersedes it, after which
the month-to-date figures, read from the current reports, follow.
"""

from __future__ import annotations

from datetime import date, timedelta

from django.db.models import Count, Exists, F, OuterRef

from audit.models import ReconciliationReport
from rounds.models import LateRound

# A round received shortly before a report opened may have been committed after the report
# read its inputs: such a round counts as late for it (at worst one version too many).
COMMIT_MARGIN = timedelta(seconds=60)


def _late_for(report_day_from, report_day_to, opened):
    return LateRound.objects.filter(gaming_day__gte=report_day_from, gaming_day__lte=report_day_to,
                                    received_at__gt=opened - COMMIT_MARGIN)


def late_rounds_of(report: ReconciliationReport) -> dict[str, int]:
    """The rounds of the report's days stored after it opened, by table code (empty: not stale)."""
    rows = (_late_for(report.day_from, report.day_to, report.created_at)
            .values("table__code").annotate(rounds=Count("id")).order_by("table__code"))
    return {row["table__code"]: row["rounds"] for row in rows}


def _late_after_report():
    return Exists(LateRound.objects.filter(
        gaming_day__gte=OuterRef("day_from"), gaming_day__lte=OuterRef("day_to"),
        received_at__gt=OuterRef("created_at") - COMMIT_MARGIN,
    ))


def reports_stale(reports):
    """``reports`` (a queryset) narrowed to those a late round has made stale: one query."""
    return reports.filter(_late_after_report())


def stale_marked(reports):
    """``reports`` with ``is_stale`` on each (a list page's column, in the list's own query)."""
    return reports.annotate(is_stale=_late_after_report())


def days_stale(*, books_open: date, last_ended: date) -> list[date]:
    """The ended gaming days whose current report of their own is stale, oldest first."""
    current = ReconciliationReport.objects.filter(
        status=ReconciliationReport.Status.COMPLETE, day_from=F("day_to"),
        day_from__gte=books_open, day_to__lte=last_ended,
    )
    return sorted(reports_stale(current).values_list("day_from", flat=True))
