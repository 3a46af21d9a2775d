"""A real Celery worker, a real broker and this test database, for the tests of the nightly job.

Each test starts ``celery worker`` as a subprocess against this test database
(the rows it reads are committed: ``transaction=True``) on a queue of its own,
sends the task beat would send, and waits for the report. A worker is always
stopped, whatever the test's outcome. ``queue`` is parametrized by broker where
a test asks for both (``BROKERS``): RabbitMQ, as ``deploy/systemd/env.example``
shows, and Redis, which it names as the alternative.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from django.db import connection
from django_celery_beat.models import PeriodicTask

from audit.models import ReconciliationReport
from audit.reconciliation.selectors import report_current
from casino.celery import app

from .days import DAY
from .test_report import assert_groups

ROOT = Path(__file__).resolve().parents[2]
BROKERS = {
    "redis": os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15"),
    "rabbitmq": os.environ.get("CELERY_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//"),
}
BROKER = BROKERS["redis"]
WAIT = 90  # seconds for a report of ~50 rounds; it takes a few
Status = ReconciliationReport.Status

# The data migrations whose rows the service needs. A transactional test's
# database is emptied after it (TRUNCATE), and the append-only triggers forbid
# Django's serialized rollback, so the rows are put back by the migrations'
# own (idempotent) code: before each test, and after the last for later tests.
SHIPPED = (
    ("progressive.migrations.0003_shipped_pool", "ship_pool"),
    ("rounds.migrations.0002_shipped_configs", "ship_configs"),
    ("rounds.migrations.0006_roles", "create_groups"),
    ("audit.migrations.0005_nightly_reconciliation_schedule", "schedule"),
    ("audit.migrations.0015_missing_days_every_hour", "schedule"),
    ("audit.migrations.0016_reports_heal_themselves", "schedule"),
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


def broker_up(url: str) -> bool:
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1)
        return True
    except Exception:  # noqa: BLE001 — any failure to connect means no broker to test on
        return False


@dataclass
class Queue:
    """A queue of one test's own, on one broker; ``url`` is the broker the worker and this process use."""

    name: str
    broker: str
    url: str

    def use(self, url: str) -> None:
        """Send through ``url`` from now on (a proxy in front of the broker)."""
        self.url = url
        app.conf.update(broker_url=url)
        forget_connections()


@contextmanager
def queue_on(broker: str) -> Iterator[Queue]:
    """This process sends to ``broker``'s queue of the test's own instead of running tasks inline."""
    url = BROKERS[broker]
    if not broker_up(url):
        pytest.skip(f"no broker at {url} (scripts/test starts Redis and RabbitMQ)")
    name = f"test-reconcile-{uuid.uuid4().hex[:10]}"
    saved = {key: app.conf[key] for key in ("broker_url", "task_always_eager", "task_default_queue")}
    app.conf.update(broker_url=url, task_always_eager=False, task_default_queue=name)
    forget_connections()
    try:
        yield Queue(name, broker, url)
    finally:
        app.conf.update(saved)
        forget_connections()
        forget_queue(broker, name)


@pytest.fixture
def queue(settings) -> Iterator[str]:
    """A queue of the test's own on Redis."""
    with queue_on("redis") as made:
        yield made.name


@pytest.fixture(params=sorted(BROKERS))
def broker_queue(request, settings) -> Iterator[Queue]:
    """A queue of the test's own, once on each broker."""
    with queue_on(request.param) as made:
        yield made


def forget_queue(broker: str, name: str) -> None:
    """Remove the test queue, and the unacknowledged messages a killed worker left."""
    if broker == "rabbitmq":
        from kombu import Connection

        with Connection(BROKERS[broker]) as conn:
            try:
                conn.default_channel.queue_delete(name)
            except Exception:  # noqa: BLE001 — never declared: nothing to remove
                pass
        return
    import redis

    store = redis.Redis.from_url(BROKERS[broker])
    for key in store.scan_iter(match=f"*{name}*"):
        store.delete(key)
    for tag, message in store.hgetall("unacked").items():
        if name.encode() in message:
            store.hdel("unacked", tag)
            store.zrem("unacked_index", tag)


def forget_connections() -> None:
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
def worker(queue: str | Queue, *, pool: str = "solo", concurrency: int = 1, env: dict | None = None, log: Path,
           hostname: str | None = None):
    """A ``celery worker`` on ``queue`` against this test database; always stopped on exit."""
    url = queue.url if isinstance(queue, Queue) else BROKER
    queue = queue.name if isinstance(queue, Queue) else queue
    environment = os.environ | {
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": url,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "DJANGO_SETTINGS_MODULE": "casino.settings",
        "PYTHONPATH": str(ROOT),
    } | (env or {})
    command = [
        str(Path(sys.executable).with_name("celery")), "-A", "casino", "worker",
        "--pool", pool, "--concurrency", str(concurrency), "--queues", queue,
        "--hostname", hostname or f"{queue}-{uuid.uuid4().hex[:6]}@%h", "--loglevel", "INFO",
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
        stop(process)


def stop(process: subprocess.Popen) -> None:
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


def wait_for(condition, *, what: str, process: subprocess.Popen, log: Path, timeout: float = WAIT,
             beat=None, every: float = 2.0):
    """Wait for ``condition``; with ``beat``, call it every ``every`` seconds as the schedule would."""
    deadline = time.monotonic() + timeout
    beaten = 0.0
    while time.monotonic() < deadline:
        if beat is not None and time.monotonic() - beaten >= every:
            beat()
            beaten = time.monotonic()
        value = condition()
        if value:
            return value
        if process.poll() is not None:
            pytest.fail(f"the worker exited ({process.returncode}) before {what}:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout}s waiting for {what}; worker log:\n{log.read_text()[-3000:]}")


def send_nightly(queue: str | Queue) -> None:
    """What beat sends from the schedule's row, for the day the test posted."""
    queue = queue.name if isinstance(queue, Queue) else queue
    nightly = PeriodicTask.objects.get(name="Nightly reconciliation")
    kwargs = json.loads(nightly.kwargs) | {"day": str(DAY)}
    app.send_task(nightly.task, kwargs=kwargs, queue=queue)


def send_scheduled(queue: Queue, name: str, **kwargs) -> None:
    """What beat sends from the schedule's row named ``name``."""
    entry = PeriodicTask.objects.get(name=name)
    app.send_task(entry.task, kwargs=json.loads(entry.kwargs) | kwargs, queue=queue.name)


def complete():
    return report_current(day_from=DAY)


def assert_figures(report: ReconciliationReport, expected) -> None:
    figures = report.figures
    assert_groups({"casino": figures["casino"]}, {"casino": expected.casino}, "casino")
    for scope in ("tables", "dealers", "shifts"):
        assert_groups(figures[scope], getattr(expected, scope), scope)
    pool = figures["pools"]["us-progressive"]
    assert Decimal(pool["contributions"]) == expected.lit_wagers * Decimal("1.00")
    assert pool["balanced"] is True
    assert report.drift == 0 and report.chain_ok is True
    assert figures["reverification"]["rounds"] == sum(g.rounds for g in expected.casino.values())




class BrokerLine:
    """A TCP line to the broker that a test can cut and mend: the broker down, as its clients see it.

    Listens on a port of its own and forwards every connection to ``target``;
    ``cut()`` closes the listener and every open connection, ``mend()`` listens again
    on the same port.
    """

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self._target = (parts.hostname, parts.port or (5672 if parts.scheme.startswith("amqp") else 6379))
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        netloc = parts.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{self.port}"
        self.url = urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host))
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self._lock = threading.Lock()
        self.mend()

    def mend(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        with self._lock:
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Every connection closed and none let through until ``mend``: the broker gone, as its
        clients see it (one connection left standing would be a blip, not an outage)."""
        with self._lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # cut while this one was being accepted
                    client.close()
                    upstream.close()
                    return
                self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.close()
                except OSError:
                    pass
