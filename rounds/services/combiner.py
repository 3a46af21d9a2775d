"""Single posts that reach one web worker at the same moment, stored in one transaction.

Every new round holds its pool's lock, then the audit chain's, for a few
round trips; tables that post at the same moment would queue for them one by
one. Instead each web worker process has one round writer: request threads
hand it their records, and it stores whatever is waiting together
(``ingest``'s store: each record still answered on its own and exactly as if
alone), so that under load one pass of the locks and one wait for the disk
serve several tables. docs/SCALING.md ("Rounds that arrive together share a
transaction") has the measurements that made this worth its threads.

A round passes three threads: the request's, the writer's (the transaction)
and the flusher's (the wait for the disk, shared by every group committed
meanwhile), then wakes its request.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import OperationalError, connection

from .write_plan import make_durable

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Waiter:
    entry: object  # ingest's entry
    done: threading.Event = field(default_factory=threading.Event)
    result: object = None
    error: BaseException | None = None


class Combiner:
    """A writer thread per process: single posts that arrive while it writes go together.

    If the shared transaction fails, each record is stored again alone, so a
    bad one fails alone (``ingest.ingest_each``, the store it is given).

    The writer does not wait for the disk: it hands each committed group to a
    second thread, which waits until the disk holds everything committed so
    far (one wait covers every group committed meanwhile) and only then
    wakes the group's requests. Idle, a record waits for nothing; under load
    one pass of the locks and one disk flush serve several tables.
    """

    MOST = 32  # records one transaction takes at most
    PATIENCE = 55.0  # seconds a request waits for its answer (gunicorn's timeout is 60)

    def __init__(self, store: Callable[..., list]):
        self._store = store  # ingest's own: entries in, one result (or its error) each
        self._guard = threading.Lock()
        self._pid: int | None = None
        self._waiting: queue.SimpleQueue | None = None
        self._flushing: queue.SimpleQueue | None = None
        self._threads: list[threading.Thread] = []
        self.largest = 0  # the most records one transaction has carried (for tests and benchmarks)

    @staticmethod
    def serves(connection) -> bool:
        # Inside a caller's transaction (a test, a script writing several things
        # atomically) the round must be written in it, on the caller's connection.
        return (
            settings.INGEST_COMBINE and connection.vendor == "postgresql"
            and not connection.in_atomic_block
        )

    def ingest(self, entry):
        waiter = _Waiter(entry)
        self._queues()[0].put(waiter)
        if not waiter.done.wait(self.PATIENCE):
            raise OperationalError("the round writer did not answer in time; the round may be stored")
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    def stop(self) -> None:
        """End this process's writer and flusher, their connections closed (a test's end;
        a worker's exit). The next post starts them again."""
        with self._guard:
            if self._pid == os.getpid():
                self._waiting.put(_STOP)
                self._flushing.put(_STOP)
                for thread in self._threads:
                    thread.join(10)
            self._pid = None

    def _queues(self) -> tuple[queue.SimpleQueue, queue.SimpleQueue]:
        with self._guard:
            if self._pid != os.getpid() or not all(t.is_alive() for t in self._threads):
                # First use in this process (a forked web worker starts its own
                # threads), or a thread died: records already waiting time out.
                if self._pid == os.getpid():
                    logger.error("the round writer or flusher died; starting them again")
                self._pid = os.getpid()
                self._waiting, self._flushing = queue.SimpleQueue(), queue.SimpleQueue()
                self._threads = [
                    threading.Thread(target=target, args=(work,), name=name, daemon=True)
                    for name, target, work in (("round-writer", self._write, self._waiting),
                                               ("round-flusher", self._flush, self._flushing))
                ]
                for thread in self._threads:
                    thread.start()
            return self._waiting, self._flushing

    def _write(self, waiting: queue.SimpleQueue) -> None:
        while True:
            group = _drain(waiting, self.MOST)
            if group[-1] is _STOP:
                group.pop()
                if not group:
                    connection.close()
                    return
                waiting.put(_STOP)  # after this last group
            self.largest = max(self.largest, len(group))
            durable = not settings.INGEST_ASYNC_COMMIT  # a synchronous commit waited already
            try:
                _connection_check()
                results = self._store([w.entry for w in group], durable=durable)
            except BaseException as error:  # noqa: BLE001 - the group's requests hear of it, not this thread
                results = [error] * len(group)
                durable = True  # nothing of the group committed: nothing to wait for
            for waiter, result in zip(group, results, strict=True):
                if isinstance(result, BaseException):
                    waiter.error = result
                else:
                    waiter.result = result
            if durable:
                _wake(group)
            else:
                self._flushing.put(group)
            _connection_rest(waiting)

    def _flush(self, flushing: queue.SimpleQueue) -> None:
        while True:
            groups = _drain(flushing, 1000)
            stopping = groups[-1] is _STOP
            if stopping:
                groups.pop()
            waiters = [w for group in groups for w in group]
            try:
                _connection_check()
                make_durable()
            except BaseException as error:  # noqa: BLE001 - the waiting requests hear of it
                # Their rounds are committed; only the disk's word on them failed: a 503
                # to send them again, which answers each as the resubmission it then is.
                retry = OperationalError(f"the round may be stored, but its durability is unconfirmed: {error}")
                for waiter in waiters:
                    waiter.result, waiter.error = None, retry
            _wake(waiters)
            if stopping:
                connection.close()
                return
            _connection_rest(flushing)


_STOP = object()


def _connection_check() -> None:
    """A connection of the writer or the flusher that has failed is replaced."""
    if connection.errors_occurred:
        connection.close()


def _connection_rest(work: queue.SimpleQueue) -> None:
    """With nothing waiting, the connection is kept or closed as a request's would be
    (``CONN_MAX_AGE``; with ``DB_POOL`` it goes back to the pool)."""
    if work.empty():
        try:
            connection.close_if_unusable_or_obsolete()
        except Exception:  # the thread must live on: the next group opens a new connection
            logger.exception("closing the round writer's connection failed")
            connection.connection = None


def _drain(work: queue.SimpleQueue, most: int) -> list:
    """The next item (waiting for it), and whatever else is waiting, up to ``most``."""
    taken = [work.get()]
    while len(taken) < most:
        try:
            taken.append(work.get_nowait())
        except queue.Empty:
            break
    return taken


def _wake(waiters) -> None:
    for waiter in waiters:
        waiter.done.set()

