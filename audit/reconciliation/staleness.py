"""Which reports undercount: rounds of their days they did not count.

A table offline for an evening sends its rounds once it is back, after the
day's report was made. Ingest writes a ``rounds.LateRound`` beside each round
stored after its gaming day ended; a report that did not count such a round
is *stale*: it stays current (its figures are what they were) and says so,
and the healing job makes a new version that supersedes it, after which the
month-to-date figures, read from the current reports, follow.

Two steps, so that neither a commit's timing nor a busy day's size can make
it say what is not so. A late round of the report's days received after the
report opened, or within ``COMMIT_MARGIN`` before (it may have committed after
the report read its inputs), makes the report a *candidate*: one indexed look
at the few late rounds. A candidate is stale only where its tables now hold
more rounds of its days than it counted: a late round it did count (the demo
reconciles within a minute of posting) is no alarm.
"""

from __future__ import annotations

from datetime import date, timedelta

from django.db.models import Count, Exists, F, OuterRef

from audit.models import ReconciliationReport
from infra.json_columns import KeysOf
from rounds.models import LateRound
from rounds.selectors import rounds_in_range

from books.report_figures import stored_name
from books.report_reader import read_groups

COMMIT_MARGIN = timedelta(seconds=60)


def _late_after_report():
    return Exists(LateRound.objects.filter(
        gaming_day__gte=OuterRef("day_from"), gaming_day__lte=OuterRef("day_to"),
        received_at__gt=OuterRef("created_at") - COMMIT_MARGIN,
    ))


def late_rounds_of(report: ReconciliationReport, figures=None) -> dict[str, int]:
    """The rounds of the report's days it did not count, by table code (empty: not stale);
    ``figures``: the report's, already read."""
    late = LateRound.objects.filter(
        gaming_day__gte=report.day_from, gaming_day__lte=report.day_to,
        received_at__gt=report.created_at - COMMIT_MARGIN,
    ).values("table_id")
    # One query: the rounds now stored of the tables a late round came to (none: nothing read).
    stored = list(rounds_in_range(day_from=report.day_from, day_to=report.day_to).filter(table_id__in=late)
                  .values("table__code").annotate(n=Count("id")).order_by("table__code"))
    if not stored:
        return {}
    counted = _counted_by_table(report) if figures is None else {
        code: sum(sums.rounds for sums in by_currency.values())
        for code, by_currency in (figures.tables.items() if figures else ())}
    return {row["table__code"]: row["n"] - counted.get(row["table__code"], 0) for row in stored
            if row["n"] > counted.get(row["table__code"], 0)}


def _counted_by_table(report: ReconciliationReport) -> dict[str, int]:
    """The rounds the report counted at each table, read out of its summary's tables alone (the
    whole figures are megabytes on a busy day); none from figures this version cannot read."""
    parts = ReconciliationReport.objects.filter(pk=report.pk).values_list(
        KeysOf("summary", [stored_name("currencies"), stored_name("tables")]), flat=True).get() or {}
    if parts.get("currencies") is None:
        return {}
    return {code: sum(sums.rounds for sums in by_currency.values())
            for code, by_currency in read_groups(parts["tables"]).items()}


def reports_stale(reports) -> list[ReconciliationReport]:
    """Those of ``reports`` (a queryset) that did not count a late round of their days."""
    candidates = reports.filter(_late_after_report()).defer("figures", "summary", "inputs")
    return [report for report in candidates if late_rounds_of(report)]


def stale_marked(reports):
    """``reports`` with ``may_be_stale`` on each, in the list's own query: a candidate, which
    ``late_rounds_of`` then settles for the rows shown."""
    return reports.annotate(may_be_stale=_late_after_report())


def stale_days_reports(*, books_open: date, last_ended: date) -> list[ReconciliationReport]:
    """The current reports of one ended gaming day each that are stale, oldest first: what the
    pages count as stale days, and the list their count opens."""
    current = ReconciliationReport.objects.filter(
        status=ReconciliationReport.Status.COMPLETE, day_from=F("day_to"),
        day_from__gte=books_open, day_to__lte=last_ended,
    )
    return sorted(reports_stale(current), key=lambda report: report.day_from)


def days_stale(*, books_open: date, last_ended: date) -> list[date]:
    """The ended gaming days whose current report of their own is stale, oldest first."""
    return [report.day_from for report in stale_days_reports(books_open=books_open, last_ended=last_ended)]
