"""Every ended gaming day gets its report, whatever the nights missed (issue 32, first step):
the hourly job starts the report of each day left without a current one, oldest first, a few a run."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django_celery_beat.models import PeriodicTask

from audit.models import ReconciliationReport
from audit.reconciliation.services import day_to_reconcile, days_to_reconcile
from audit.tasks import reconcile_missing
from infra.gaming_day import gaming_day_of
from tests import examples
from tests.reconciliation.days import client_for, moved
from rounds.window import window_opens

pytestmark = pytest.mark.django_db


def _dealt_on(*days, table: str = "S01") -> None:
    """One round of ``table`` on each of ``days``, posted through the API."""
    client = client_for(table, "se-50kr")
    example = examples.load("se-50kr.jsonl")[0]["record"]
    dealt = datetime.fromisoformat(example["dealt_at"])
    for n, day in enumerate(days):
        record = dict(moved(example, hours=24 * (day - gaming_day_of(dealt)).days, prefix=f"d{n}-"), table=table)
        assert client.post("/api/v1/rounds/", record, format="json").status_code == 201


def test_days_left_without_their_report_are_reconciled_oldest_first_a_few_a_run(settings):
    settings.ROUND_WINDOW_OPENS = day_to_reconcile() - timedelta(days=40)
    opens, ended = window_opens(), day_to_reconcile()
    dealt = [opens, opens + timedelta(days=1), opens + timedelta(days=7), ended]
    _dealt_on(*dealt)
    # A day nothing was dealt on needs no report: only the days that had rounds are missing.
    missing = days_to_reconcile(books_open=opens)
    assert missing == dealt

    first = reconcile_missing(most=2)

    assert first == [opens.isoformat(), (opens + timedelta(days=1)).isoformat()]
    for day in missing[:2]:
        assert ReconciliationReport.objects.get(day_from=day, day_to=day).status == "complete"
    assert days_to_reconcile(books_open=opens) == missing[2:]
    # A failed report is no report: its day is started again, a new version beside the failed one.
    ReconciliationReport.objects.filter(day_from=opens).update(status="failed", error="worker lost")
    assert days_to_reconcile(books_open=opens)[0] == opens
    assert reconcile_missing(most=1) == [opens.isoformat()]
    assert ReconciliationReport.objects.filter(day_from=opens, status="complete").count() == 1


def test_with_nothing_missing_a_run_starts_nothing(settings):
    settings.ROUND_WINDOW_OPENS = day_to_reconcile()
    opens = window_opens()
    for day in days_to_reconcile(books_open=opens):
        ReconciliationReport.objects.create(day_from=day, day_to=day, version=1, status="complete",
                                            engine_version="test")
    assert reconcile_missing() == []


def test_the_job_is_in_the_schedule_every_hour():
    entry = PeriodicTask.objects.get(task="audit.reconcile_missing")
    assert entry.enabled and entry.crontab.hour == "*" and entry.crontab.minute == "15"


def test_the_watch_is_in_the_schedule_every_minute():
    entry = PeriodicTask.objects.get(task="audit.reconcile_watch")
    assert entry.enabled and entry.interval.every == 1 and entry.interval.period == "minutes"


def test_the_pages_say_what_makes_a_missing_report_and_count_only_days_dealt(settings, admin_client):
    """On the embedded default no scheduler runs: the tonight page and the reports' list say a person
    must make it, not that an hourly job will. Days nothing was dealt on are not counted."""
    settings.ROUND_WINDOW_OPENS = day_to_reconcile() - timedelta(days=20)
    _dealt_on(day_to_reconcile())
    settings.CELERY_TASK_ALWAYS_EAGER = True
    tonight = admin_client.get("/admin/").content.decode()
    assert "1 ended day with rounds and without a current report" in tonight
    assert "no scheduler runs without a broker (the embedded default)" in tonight
    assert "healing job" not in tonight
    listed = admin_client.get("/admin/audit/reconciliationreport/").content.decode()
    assert "1 ended gaming day(s) have no current report" in listed and "manage.py reconcile --day" in listed
    settings.CELERY_TASK_ALWAYS_EAGER = False
    assert "the hourly healing job makes it" in admin_client.get("/admin/").content.decode()


def test_books_open_for_years_cost_a_few_reads_not_one_a_day(settings):
    """Books opened four years before the first round: which days had rounds is one read for the
    run of days without a report, not one for each of its 1,400 days."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from audit.reconciliation.selectors import reports_kept

    ended = day_to_reconcile()
    settings.ROUND_WINDOW_OPENS = ended - timedelta(days=4 * 365)
    _dealt_on(ended)
    with CaptureQueriesContext(connection) as queries:
        kept = reports_kept(books_open=window_opens(), last_ended=ended)
    assert (kept.days_missing, kept.oldest_missing) == (1, ended)
    assert len(queries) <= 8, [q["sql"][:100] for q in queries]
