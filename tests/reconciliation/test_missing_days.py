"""Every ended gaming day gets its report, whatever the nights missed (issue 32, first step):
the hourly job starts the report of each day left without a current one, oldest first, a few a run."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django_celery_beat.models import PeriodicTask

from audit.models import ReconciliationReport
from audit.reconciliation.services import day_to_reconcile, days_to_reconcile
from audit.tasks import reconcile_missing
from rounds.window import window_opens

pytestmark = pytest.mark.django_db


def test_days_left_without_their_report_are_reconciled_oldest_first_a_few_a_run(settings):
    settings.ROUND_WINDOW_OPENS = day_to_reconcile() - timedelta(days=40)
    opens, ended = window_opens(), day_to_reconcile()
    missing = days_to_reconcile(books_open=opens)
    assert missing[0] == opens and missing[-1] == ended and len(missing) == (ended - opens).days + 1

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
