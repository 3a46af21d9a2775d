"""Every gaming day gets its report, whatever fails in the night: each fault on a real worker, on
Redis and on RabbitMQ, with PostgreSQL (``workers``).

The test plays beat: it sends the schedule's entries itself, the watch every
two seconds where the schedule sends it every minute, with leases of three
seconds where production's are a minute. Figures are held to the examples'
own sums (``days.post_day``): a report healed after a fault must equal an
undisturbed one.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from datetime import date, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from audit.models import ReconciliationPart, ReconciliationReport
from audit.reconciliation.healing import last_day_to_heal
from audit.reconciliation.selectors import report_current
from tests.insider import as_owner

from tests import examples

from .days import DAY, client_for, moved, post_day
from .workers import (  # noqa: F401 — fixtures
    WAIT, BrokerLine, Status, assert_figures, broker_queue, complete, queue_on, send_nightly, send_scheduled,
    shipped, shipped_after, wait_for, worker,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# Production's timing, for a measurement: FAULT_TESTS_LEASE=60 FAULT_TESTS_WATCH_EVERY=60.
FAST = {"RECONCILIATION_LEASE_SECONDS": os.environ.get("FAULT_TESTS_LEASE", "3"),
        "RECONCILIATION_RETRY_FIRST_SECONDS": "2"}
WATCH_EVERY = float(os.environ.get("FAULT_TESTS_WATCH_EVERY", "2"))
WATCH = "Reconciliation watch"
HEAL = "Reconciliation of the days without their report"
# How soon after the worker's return the report must be complete, at production's lease and
# watch (a minute each); the tests' are shorter, so they must do much better.
BACK_WITHIN = 120


def _watching(queue):
    return lambda: send_scheduled(queue, WATCH)


def _healed_within(back: float, what: str) -> None:
    took = time.monotonic() - back
    print(f"\n{what}: complete {took:.1f} s after the worker's return")  # noqa: T201 — the figure docs/RELIABILITY.md quotes
    assert took < BACK_WITHIN


def _killed(process) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def test_a_worker_killed_while_the_parts_run_is_made_good_when_a_worker_returns(broker_queue, tmp_path):
    expected = post_day(per_table=15)
    log = tmp_path / "worker.log"
    with worker(broker_queue, env=FAST | {"RECONCILE_HOLD_TABLE": "S02"}, log=log) as doomed:
        send_nightly(broker_queue)
        wait_for(lambda: ReconciliationPart.objects.filter(key="S02", status="running").exists(),
                 what="table S02's part to start", process=doomed, log=log)
        _killed(doomed)
    report = ReconciliationReport.objects.get(day_from=DAY)
    assert report.status == Status.RUNNING and report_current(day_from=DAY) is None

    back = time.monotonic()
    with worker(broker_queue, env=FAST, log=log) as process:
        current = wait_for(complete, what="the report after the worker's return", process=process, log=log,
                           timeout=BACK_WITHIN, beat=_watching(broker_queue), every=WATCH_EVERY)
    _healed_within(back, f"parts, {broker_queue.broker}")
    assert ReconciliationReport.objects.filter(day_from=DAY).count() == 1 and current.pk == report.pk
    assert ReconciliationPart.objects.get(report=current, key="S02").attempts == 2  # taken over once
    assert_figures(current, expected)


def test_a_worker_killed_during_the_merge_is_made_good_when_a_worker_returns(broker_queue, tmp_path):
    expected = post_day(per_table=15)
    log, mark = tmp_path / "worker.log", tmp_path / "merging"
    hold = {"RECONCILE_HOLD_MERGE": "1", "RECONCILE_HOLD_MARK": str(mark)}
    with worker(broker_queue, env=FAST | hold, log=log) as doomed:
        send_nightly(broker_queue)
        wait_for(mark.exists, what="the merge to begin", process=doomed, log=log)
        _killed(doomed)
    report = ReconciliationReport.objects.get(day_from=DAY)
    assert report.status == Status.RUNNING and report_current(day_from=DAY) is None
    assert not ReconciliationPart.objects.filter(report=report).exclude(status="complete").exists()

    back = time.monotonic()
    with worker(broker_queue, env=FAST, log=log) as process:
        current = wait_for(complete, what="the merge after the worker's return", process=process, log=log,
                           timeout=BACK_WITHIN, beat=_watching(broker_queue), every=WATCH_EVERY)
    _healed_within(back, f"merge, {broker_queue.broker}")
    assert current.pk == report.pk and ReconciliationReport.objects.filter(day_from=DAY).count() == 1
    assert_figures(current, expected)


def _other_days_reported(*, missing: list[date], books_open: date) -> None:
    """Every settled day of the books but ``missing`` has its report, as a casino's long history would."""
    last = last_day_to_heal(now=timezone.now())
    day = books_open
    while day <= last:
        if day not in missing:
            ReconciliationReport.objects.create(day_from=day, day_to=day, version=1, status="complete",
                                                engine_version="earlier", figures={})
        day += timedelta(days=1)


def test_the_broker_down_across_three_nights_every_day_is_reconciled_when_it_returns(broker_queue, tmp_path):
    expected = post_day(per_table=15)
    nights = [DAY - timedelta(days=2), DAY - timedelta(days=1), DAY]
    # A day with rounds needs its report (one nothing was dealt on needs none): a round on each of
    # the two nights before.
    earlier = client_for("S09", "se-50kr")
    for n, night in enumerate(nights[:2]):
        record = dict(moved(examples.load("se-50kr.jsonl")[n]["record"], hours=24 * (night - DAY).days,
                            prefix=f"night-{n}-"), table="S09")
        assert earlier.post("/api/v1/rounds/", record, format="json").status_code == 201
    _other_days_reported(missing=nights, books_open=DAY.replace(day=1))
    line = BrokerLine(broker_queue.url)
    broker_queue.use(line.url)
    log = tmp_path / "worker.log"
    env = FAST | {"ROUND_WINDOW_OPENS": str(DAY.replace(day=1))}
    with worker(broker_queue, env=env, log=log) as process:
        wait_for(lambda: "ready" in log.read_text(), what="the worker", process=process, log=log)
        line.cut()  # the nights pass with no broker: beat sends nothing, the worker waits
        time.sleep(10)
        assert process.poll() is None, "the worker gave up on the broker:\n" + log.read_text()[-2000:]
        line.mend()
        broker_queue.use(line.url)
        send_scheduled(broker_queue, HEAL)  # the first hourly run once the broker is back
        wait_for(lambda: all(report_current(day_from=night) for night in nights),
                 what="all three nights' reports", process=process, log=log, beat=_watching(broker_queue))
    line.cut()
    assert "Connection to broker lost" in log.read_text() or "Cannot connect" in log.read_text()
    assert_figures(report_current(day_from=DAY), expected)
    assert [report_current(day_from=night).rounds for night in nights[:2]] == [1, 1]


def test_a_worker_back_before_the_broker_dropped_its_old_connection_keeps_working(tmp_path):
    """RabbitMQ drops a lost client's connection, and with it that connection's exclusive queues,
    a moment after the line comes back; a worker that reconnects first and declares an exclusive
    queue of its own again is refused (405 RESOURCE_LOCKED) and exits. Here another connection holds
    the worker's remote-control queue, declared as the worker declares it, for the worker's whole life.
    While it is held the worker is handed its messages in clumps about ten seconds apart (its logs:
    not found why), so the night takes minutes here, not seconds: a broker drops a lost connection
    within its heartbeat's timeout, after which the worker runs at its usual pace. The test asks
    that it keeps working, not how fast."""
    from kombu import Connection

    from casino.celery import app

    with queue_on("rabbitmq") as queue:
        expected = post_day(per_table=15)
        node = f"{queue.name}-held@{socket.gethostname()}"
        log = tmp_path / "worker.log"
        with Connection(queue.url) as old:
            app.control.mailbox.get_queue(node)(old.channel()).declare()
            with worker(queue, env=FAST, log=log, hostname=node) as process:
                send_nightly(queue)
                current = wait_for(complete, what="the report", process=process, log=log,
                                   beat=_watching(queue), timeout=4 * WAIT)
    assert_figures(current, expected)


def _terminate_the_workers_connections() -> int:
    # As the database's owner would: the application's role may not end other roles' sessions.
    with as_owner(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'")
        return cursor.fetchone()[0]


@pytest.mark.parametrize("retry_seconds", ["900", "0"], ids=["retried", "failed-then-retried"])
def test_a_parts_connection_terminated_the_report_completes_or_fails_with_its_reason_then_completes(
        broker_queue, tmp_path, retry_seconds):
    expected = post_day(per_table=15)
    log, mark = tmp_path / "worker.log", tmp_path / "holding"
    hold = {"RECONCILE_HOLD_TABLE": "S02", "RECONCILE_HOLD_SECONDS": "3", "RECONCILE_HOLD_ONCE": "1",
            "RECONCILE_HOLD_MARK": str(mark), "RECONCILIATION_RETRY_SECONDS": retry_seconds}
    with worker(broker_queue, env=FAST | hold, log=log) as process:
        send_nightly(broker_queue)
        wait_for(mark.exists, what="table S02's part to hold", process=process, log=log)
        assert _terminate_the_workers_connections() >= 1  # the database restarted, as the worker sees it
        current = wait_for(complete, what="the report", process=process, log=log, beat=_watching(broker_queue),
                           timeout=2 * WAIT)
    assert_figures(current, expected)
    assert ReconciliationReport.objects.filter(day_from=DAY).count() == 1
    s02 = ReconciliationPart.objects.get(report=current, key="S02")
    assert s02.attempts == 2
    if retry_seconds == "0":
        # It failed, with the reason, and was tried again by the watch.
        assert current.failures == 1 and "terminating connection" in current.error, current.error
    else:
        assert current.failures == 0
    assert "terminating connection" in log.read_text()
