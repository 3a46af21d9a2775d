"""Every row lock the service asks for, in the one order that cannot deadlock.

Two transactions deadlock when each holds a row the other waits for. They
cannot if every transaction takes its locks in one global order, so every
write asks this module for its locks, and this module refuses a lock that
breaks the order (``LockOrderError``, raised before the database is asked):

1. table configurations, then a configuration version request (its approval
   writes the configuration's next version: the configuration first, as every
   new version), then tables (registration, a new configuration version; a
   table ``no_key``, so that its rounds go on being stored);
2. progressive pools, in primary-key order, then a meter adjustment request
   (its approval moves the pool's meter: the pool first, as every meter move)
   or a pool version request (its approval writes the pool's next version:
   the pool first, as every new version);
3. rounds, in primary-key order (a new round's key row, inserted by
   ``rounds.services.ingest``, ranks here too: it is inserted after the pools'
   locks and before the audit head's);
4. findings, in primary-key order;
5. reconciliation reports and variance-test settings;
6. the audit chain's head: every writer of the service queues for it;
7. the days' totals (``rounds.DayTotal``) and the findings still to work (``rounds.WorkTally``),
   after the head: only a holder of the head writes one (``rounds.services.day_totals``,
   ``rounds.services.work_tally``), so their locks never wait, and a transaction that stores
   many rounds takes a new one after the head without breaking the order.

A write that needs several rows of one rank takes them in one call (they are
locked in primary-key order); a later call in the same transaction may take
rows of a higher rank, or of the same rank with higher (model, key), never a
lower one (rows the transaction holds already may be asked for again at any
time: that waits for no one). Models are named by label, so this module sits
below the apps that own them.

What this module sees is the locks a write asks for (``SELECT … FOR
UPDATE``); no other module asks for one (``tests/test_lock_order.py`` reads
the source for it). The rows a write then updates are rows it locked here,
and the rows it inserts wait only on their parents' key locks (``FOR KEY
SHARE``, taken by foreign-key checks), which conflict with no lock taken here
on a parent whose children others insert (``no_key``). The interleavings
that deadlocked before this order are run in that test.

``one_at_a_time`` is not a row lock: it lets one run of a job (the notices)
go on across processes without a transaction held open while it works.
``one_after_another`` is its waiting kind (the leak tests' kept state: a
night's run waits for another day's to end). Either is taken before any
transaction opens and before any row lock, so no row's waiter can hold it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import QuerySet

from infra import sql

RANKS: tuple[tuple[str, ...], ...] = (
    ("rounds.TableConfig",),
    ("rounds.ConfigVersionRequest",),
    ("rounds.Table",),
    ("progressive.Pool",),
    ("progressive.MeterAdjustmentRequest", "progressive.PoolVersionRequest"),
    ("rounds.Round",),
    ("rounds.Finding", "audit.VarianceFinding", "audit.ProtectionFinding"),
    ("audit.ReconciliationReport", "audit.VarianceTestSetting"),
    ("trail.ChainHead",),
    ("rounds.DayTotal", "rounds.WorkTally"),
)
_RANK_OF = {label: rank for rank, labels in enumerate(RANKS) for label in labels}


class LockOrderError(RuntimeError):
    """A lock asked for after one that ranks above it, in the same transaction."""


def rows_locked(queryset: QuerySet, pks: Iterable[int] | None = None, *, no_key: bool = False) -> QuerySet:
    """``queryset``'s rows, locked (``SELECT … FOR UPDATE``) in primary-key order.

    ``pks``: the keys the caller is about to lock, when it knows them (the
    order check then compares them with what the transaction holds).
    ``no_key``: ``FOR NO KEY UPDATE``, for a row whose children other writers
    insert meanwhile (a table: its rounds' keys); their foreign-key checks
    (``FOR KEY SHARE``) then never wait for it.
    """
    _check(queryset.model._meta.label, pks, queryset.db)
    return queryset.select_for_update(no_key=no_key).order_by("pk")


@contextmanager
def one_at_a_time(name: str) -> Iterator[bool]:
    """Whether this process may run the job ``name`` now: a PostgreSQL session advisory lock, tried and
    never waited for, let go at the end. It locks no row, so no writer waits on it, and it holds no
    transaction open; on SQLite (one process serves) every run may."""
    if connection.vendor != "postgresql":
        yield True
        return
    key = _advisory_key(name)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
        (held,) = cursor.fetchone()
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def _advisory_key(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@contextmanager
def one_after_another(name: str) -> Iterator[None]:
    """Run the job ``name`` when no other process runs it: a PostgreSQL session advisory lock, waited
    for, let go at the end. Taken outside any transaction (``RuntimeError`` inside one), so the
    run it waits for holds no row this one has; on SQLite (one process serves) it waits for nothing."""
    if connection.vendor != "postgresql":
        yield
        return
    if _transaction_block(connection) is not None:
        raise RuntimeError(f"{name}: one_after_another is taken before a transaction opens")
    key = _advisory_key(name)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def rows_free(queryset: QuerySet) -> set[int]:
    """The keys of ``queryset``'s rows that no transaction holds a lock on now.

    A probe, in a transaction of its own: each free row is locked for a moment
    and let go, and a held one is skipped (``SKIP LOCKED``), never waited for,
    so it can close no cycle of waits whatever the order. (SQLite has no row
    locks: every row is free.)
    """
    with transaction.atomic(using=queryset.db):
        return set(queryset.select_for_update(skip_locked=True).order_by("pk").values_list("pk", flat=True))


def rows_locked_statement(queryset: QuerySet, pks: Iterable[int] | None = None) -> sql.Statement:
    """``rows_locked`` as a statement, for a caller that sends several in one round trip."""
    return sql.select(rows_locked(queryset, pks))


def raw_lock_statement(label: str, statement: sql.Statement, pks: Iterable[int] | None = None,
                       using: str = DEFAULT_DB_ALIAS) -> sql.Statement:
    """A locking statement written by hand (prepared once per connection) for rows of ``label``."""
    _check(label, pks, using)
    return statement


@dataclass(slots=True)
class _Held:
    block: object  # the atomic block that opened the transaction (never a test case's)
    keys: dict[int, set[tuple[str, int]]]  # by rank, the rows (model, key) locked so far
    top: int = -1  # the highest rank locked so far


def _check(label: str, pks: Iterable[int] | None, using: str) -> None:
    rank = _RANK_OF.get(label)
    if rank is None:
        raise LockOrderError(f"{label} has no place in the lock order (infra.locks.RANKS)")
    connection = connections[using]
    block = _transaction_block(connection)
    if block is None:
        return  # autocommit: the lock ends with its statement
    held: _Held | None = getattr(connection, "_table_audit_locks", None)
    if held is None or held.block is not block:
        held = connection._table_audit_locks = _Held(block, {})
    taken = held.keys.setdefault(rank, set())
    keys = {(label, pk) for pk in pks} if pks is not None else None
    if keys is not None and keys <= taken:
        return  # held already: taking them again waits for no one
    if rank < held.top:
        raise LockOrderError(
            f"{label} is locked after {', '.join(RANKS[held.top])} in one transaction; "
            "the order is infra.locks.RANKS"
        )
    new = (keys or set()) - taken
    if rank == held.top and new and taken and min(new) < max(taken):
        (first, first_pk), (last, last_pk) = min(new), max(taken)
        raise LockOrderError(
            f"{first} {first_pk} is locked after {last} {last_pk}; rows of one rank go in "
            "(model, primary key) order"
        )
    taken |= new
    held.top = rank


def _transaction_block(connection):
    """The atomic block that opened the current transaction; a test case's own blocks
    (which stand for no transaction of the service) are passed over."""
    for block in connection.atomic_blocks:
        if not getattr(block, "_from_testcase", False):
            return block
    return None
