"""The nightly job on a real Celery worker, a real broker (Redis) and PostgreSQL.

Each test starts ``celery worker`` as a subprocess against this test database
(the rows it reads are committed: ``transaction=True``) on a queue of its own,
sends the task beat would send, and waits for the report. A worker is always
stopped, whatever the test's outcome.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from audit.models import ReconciliationPart, ReconciliationReport
from audit.reconciliation.selectors import report_current
from audit.tasks import CLAIMED_ELSEWHERE_RETRY_SECONDS
from casino.celery import app
from django_celery_beat.models import PeriodicTask

from .days import DAY, post_day
from .test_report import assert_groups

ROOT = Path(__file__).resolve().parents[2]
BROKER = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
WAIT = 90  # seconds for a report of ~50 rounds; it takes a few
Status = ReconciliationReport.Status

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
# The data migrations whose rows the service needs. A transactional test's
# database is emptied after it (TRUNCATE), and the append-only triggers forbid
# Django's serialized rollback, so the rows are put back by the migrations'
# own (idempotent) code: before each test, and after the last for later tests.
SHIPPED = (
    ("progressive.migrations.0003_shipped_pool", "ship_pool"),
    ("rounds.migrations.0002_shipped_configs", "ship_configs"),
    ("rounds.migrations.0006_roles", "create_groups"),
    ("audit.migrations.0005_nightly_reconciliation_schedule", "schedule"),
)


def _ship() -> None:
    from importlib import import_module

    from django.apps import apps
    from django.db import transaction

    for module, function in SHIPPED:
        try:
            ship = getattr(import_module(module), function)
        except (ImportError, AttributeError):
            continue
        with transaction.atomic():  # as a migration runs: a pool commits with its opening event
            ship(apps, None)


@pytest.fixture(scope="module", autouse=True)
def shipped_after(django_db_setup, django_db_blocker) -> Iterator[None]:
    yield
    with django_db_blocker.unblock():
        _ship()


@pytest.fixture(autouse=True)
def shipped(transactional_db) -> None:
    _ship()


def _broker_up() -> bool:
    import redis

    try:
        return redis.Redis.from_url(BROKER, socket_connect_timeout=2).ping()
    except redis.RedisError:
        return False


@pytest.fixture
def queue(settings) -> Iterator[str]:
    """A queue of this test's own; this process sends to the broker instead of running inline."""
    if not _broker_up():
        pytest.skip(f"no broker at {BROKER} (scripts/test starts Redis)")
    name = f"test-reconcile-{uuid.uuid4().hex[:10]}"
    saved = {key: app.conf[key] for key in ("broker_url", "task_always_eager", "task_default_queue")}
    app.conf.update(broker_url=BROKER, task_always_eager=False, task_default_queue=name)
    _forget_connections()
    try:
        yield name
    finally:
        app.conf.update(saved)
        _forget_connections()
        _forget_queue(name)


def _forget_queue(name: str) -> None:
    """Remove the test queue's keys, and the unacknowledged message a killed worker left."""
    import redis

    broker = redis.Redis.from_url(BROKER)
    for key in broker.scan_iter(match=f"*{name}*"):
        broker.delete(key)
    for tag, message in broker.hgetall("unacked").items():
        if name.encode() in message:
            broker.hdel("unacked", tag)
            broker.zrem("unacked_index", tag)


def _forget_connections() -> None:
    """Drop the app's cached broker pools so the next send connects with the current settings.

    Only dropped, not closed: kombu shares pools per broker URL, and a closed
    one would be handed to the next test.
    """
    app._pool = None
    app.amqp._producer_pool = None


def _database_url() -> str:
    s = connection.settings_dict
    auth = quote(s["USER"] or "")
    if s.get("PASSWORD"):
        auth += ":" + quote(s["PASSWORD"])
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@contextmanager
def worker(queue: str, *, pool: str = "solo", concurrency: int = 1, env: dict | None = None, log: Path):
    """A ``celery worker`` on ``queue`` against this test database; always stopped on exit."""
    environment = os.environ | {
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": BROKER,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "DJANGO_SETTINGS_MODULE": "casino.settings",
        "PYTHONPATH": str(ROOT),
    } | (env or {})
    command = [
        str(Path(sys.executable).with_name("celery")), "-A", "casino", "worker",
        "--pool", pool, "--concurrency", str(concurrency), "--queues", queue,
        "--hostname", f"{queue}-{uuid.uuid4().hex[:6]}@%h", "--loglevel", "INFO",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        "--include", "tests.reconciliation.worker_hold",
    ]
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: prefork children die with it
        )
    try:
        yield process
    finally:
        _stop(process)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=10)


def _wait_for(condition, *, what: str, process: subprocess.Popen, log: Path, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if process.poll() is not None:
            pytest.fail(f"the worker exited ({process.returncode}) before {what}:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout}s waiting for {what}; worker log:\n{log.read_text()[-3000:]}")


def _send_nightly(queue: str) -> None:
    """What beat sends from the schedule's row, for the day the test posted."""
    nightly = PeriodicTask.objects.get(name="Nightly reconciliation")
    import json

    kwargs = json.loads(nightly.kwargs) | {"day": str(DAY)}
    app.send_task(nightly.task, kwargs=kwargs, queue=queue)


def _complete():
    return report_current(day_from=DAY)


def _assert_figures(report: ReconciliationReport, expected) -> None:
    figures = report.figures
    assert_groups({"casino": figures["casino"]}, {"casino": expected.casino}, "casino")
    for scope in ("tables", "dealers", "shifts"):
        assert_groups(figures[scope], getattr(expected, scope), scope)
    pool = figures["pools"]["us-progressive"]
    assert Decimal(pool["contributions"]) == expected.lit_wagers * Decimal("1.00")
    assert pool["balanced"] is True
    assert report.drift == 0 and report.chain_ok is True
    assert figures["reverification"]["rounds"] == sum(g.rounds for g in expected.casino.values())


def test_the_nightly_job_on_a_real_worker_adds_up(queue, tmp_path):
    expected = post_day(per_table=15)
    log = tmp_path / "worker.log"
    with worker(queue, pool="prefork", concurrency=2, log=log) as process:
        _send_nightly(queue)
        report = _wait_for(_complete, what="the report", process=process, log=log)
    assert report.status == Status.COMPLETE and report.requested_by == "beat"
    _assert_figures(report, expected)
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


def test_a_worker_killed_mid_report_leaves_no_report_and_the_rerun_makes_exactly_one(queue, tmp_path):
    expected = post_day(per_table=15)
    log = tmp_path / "worker.log"
    with worker(queue, env={"RECONCILE_HOLD_TABLE": "S02"}, log=log) as doomed:
        _send_nightly(queue)
        held = _wait_for(
            lambda: ReconciliationPart.objects.filter(key="S02", status="running").first(),
            what="table S02's part to start", process=doomed, log=log,
        )
        assert ReconciliationPart.objects.get(report=held.report, key="S01").status == "complete"
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=10)

    report = ReconciliationReport.objects.get(day_from=DAY)
    assert report.status == Status.RUNNING
    assert report_current(day_from=DAY) is None  # nothing half-done is shown

    # The dead worker's claim on S02 is taken over once it is older than this.
    with worker(queue, env={"RECONCILIATION_CLAIM_SECONDS": "3"}, log=log) as process:
        _send_nightly(queue)  # the next night's run, or an operator's rerun
        current = _wait_for(_complete, what="the rerun's report", process=process, log=log)

    assert ReconciliationReport.objects.filter(day_from=DAY).count() == 1
    assert current.pk == report.pk and current.version == 1  # resumed, not duplicated
    assert ReconciliationPart.objects.get(report=current, key="S02").attempts == 2
    _assert_figures(current, expected)


def test_two_runs_of_one_day_on_two_workers_compute_each_part_once(queue, tmp_path):
    expected = post_day(per_table=15)
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with worker(queue, pool="prefork", concurrency=2, log=logs[0]) as first, \
            worker(queue, pool="prefork", concurrency=2, log=logs[1]):
        _send_nightly(queue)
        _send_nightly(queue)  # the same day sent twice: an operator's rerun beside the nightly run
        report = _wait_for(_complete, what="the report", process=first, log=logs[0])
        # Both runs' tasks have ended before anything is counted.
        _wait_for(lambda: not ReconciliationPart.objects.exclude(status="complete").exists(),
                  what="every part", process=first, log=logs[0])
        time.sleep(CLAIMED_ELSEWHERE_RETRY_SECONDS + 1)
    assert ReconciliationReport.objects.filter(day_from=DAY).count() == 1
    parts = list(ReconciliationPart.objects.filter(report=report))
    assert parts and {p.attempts for p in parts} == {1}, [(p.kind, p.key, p.attempts) for p in parts]
    _assert_figures(report, expected)
    worked = "".join(log.read_text() for log in logs)
    sent = set(re.findall(r"audit\.reconcile_part\[([0-9a-f-]+)\] received", worked))
    assert len(sent) > len(parts)  # the second run sent tasks too, and they computed nothing
