"""The nightly job on a real Celery worker, a real broker (Redis) and PostgreSQL (``workers``)."""

from __future__ import annotations

import re
import time

import pytest

from audit.models import ReconciliationPart, ReconciliationReport

from .days import DAY, post_day
from .workers import Status, assert_figures, complete, queue, send_nightly, shipped, shipped_after, wait_for, worker  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_the_nightly_job_on_a_real_worker_adds_up(queue, tmp_path):
    expected = post_day(per_table=15)
    log = tmp_path / "worker.log"
    with worker(queue, pool="prefork", concurrency=2, log=log) as process:
        send_nightly(queue)
        report = wait_for(complete, what="the report", process=process, log=log)
    assert report.status == Status.COMPLETE and report.requested_by == "beat"
    assert_figures(report, expected)
    parts = ReconciliationPart.objects.filter(report=report)
    assert {(p.kind, p.key) for p in parts if p.kind != "chain"} == {
        ("pool", "us-progressive"), ("players", "players"),
        ("table", "S01"), ("table", "S02"), ("table", "U01"),
    }
    assert report.figures["chain"]["ok"] and report.figures["chain"]["segments"] >= 1
    assert all(p.status == "complete" for p in parts)
    # The worker stored the tasks' results where the admin shows them.
    from django_celery_results.models import TaskResult

    names = set(TaskResult.objects.values_list("task_name", flat=True))
    assert {"audit.reconcile_day", "audit.reconcile_part", "audit.reconcile_finish"} <= names


def test_two_runs_of_one_day_on_two_workers_compute_each_part_once(queue, tmp_path):
    expected = post_day(per_table=15)
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with worker(queue, pool="prefork", concurrency=2, log=logs[0]) as first, \
            worker(queue, pool="prefork", concurrency=2, log=logs[1]):
        send_nightly(queue)
        send_nightly(queue)  # the same day sent twice: an operator's rerun beside the nightly run
        report = wait_for(complete, what="the report", process=first, log=logs[0])
        # Both runs' tasks have ended before anything is counted.
        wait_for(lambda: not ReconciliationPart.objects.exclude(status="complete").exists(),
                  what="every part", process=first, log=logs[0])
        time.sleep(2)  # a part held by the other run ends at once: nothing is left in flight
    assert ReconciliationReport.objects.filter(day_from=DAY).count() == 1
    parts = list(ReconciliationPart.objects.filter(report=report))
    assert parts and {p.attempts for p in parts} == {1}, [(p.kind, p.key, p.attempts) for p in parts]
    assert_figures(report, expected)
    worked = "".join(log.read_text() for log in logs)
    sent = set(re.findall(r"audit\.reconcile_part\[([0-9a-f-]+)\] received", worked))
    assert len(sent) > len(parts)  # the second run sent tasks too, and they computed nothing
