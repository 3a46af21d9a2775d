"""The database round trips of storing rounds: what ``ingest`` sends, and when.

A new round travels in a fixed number of round trips, however many seats,
findings and meter events it has, and a batch of rounds in the same number
(on PostgreSQL):

1. ``look``: which round ids are stored already, the configurations'
   versions and primary keys for the new rounds;
2. ``lock``: the pools' rows (and their versions as they stand once the locks
   are ours), the stored rounds a resubmission touches, then the new rounds'
   key rows, in the order ``infra.locks`` sets;
3. ``write``: the rounds, seats, findings, meter events, the pools moved to
   their last events (``progressive.ledger``) and the kept bodies, then the
   audit chain's head locked and what the rounds add to their days' totals
   (``day_totals``), in one string of statements;
4. the audit events and the head's new tip (``trail.services``);
5. the commit, which does not wait for the disk, so the pools' and the head's
   locks go free at once; then ``durable`` waits until the disk holds it. A
   round is never answered before it is durable.

Statements that run for every round are written here once, from the models'
own column names, and prepared once per connection (``infra.sql``).
SQLite has no sequences and no row locks: its branches draw keys from the
inserts and rely on the database's one writer (immediate transactions,
``casino.settings``). docs/SCALING.md has the measurements behind each step
("What the first round changed" onwards) and behind this layout ("The write
path as the round's story").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.db import connection, transaction

from infra import locks, sql
from infra.rows import new_row
from progressive.ledger import TRIGGERS, ledger_statements
from progressive.models import MeterEvent, Pool, PoolVersion
from rounds.models import Finding, LateRound, Round, RoundKey, Seat, Submission, TableConfigVersion
from trail.services import audit_head_lock_statement

from . import day_totals, work_tally

# (pk, effective_from, version number) of each version of a configuration or pool.
Versions = dict[int, list[tuple]]


def _column(model, name: str) -> str:
    return f'"{model._meta.get_field(name).column}"'


def _table(model) -> str:
    return f'"{model._meta.db_table}"'


def _columns(model, names) -> str:
    return ", ".join(_column(model, name) for name in names)


_VERSION_COLUMNS = ("id", "effective_from", "version")
SQL = {
    "stored": f"SELECT k.{_column(RoundKey, 'table')}, k.{_column(RoundKey, 'round_id')}, "
              f"k.{_column(RoundKey, 'id')}, k.{_column(RoundKey, 'gaming_day')} "
              f"FROM {_table(RoundKey)} k JOIN unnest(%s::bigint[], %s::text[]) AS sent(table_id, round_id) "
              f"ON k.{_column(RoundKey, 'table')} = sent.table_id AND k.{_column(RoundKey, 'round_id')} = sent.round_id",
    "config_versions": f"SELECT {_columns(TableConfigVersion, ('config', *_VERSION_COLUMNS))} "
                f"FROM {_table(TableConfigVersion)} WHERE {_column(TableConfigVersion, 'config')} = ANY(%s)",
    "keys": f"SELECT nextval(pg_get_serial_sequence('{Round._meta.db_table}', 'id')) FROM generate_series(1, %s)",
    "pools": f"SELECT {_columns(Pool, [f.name for f in Pool._meta.concrete_fields])} "
             f"FROM {_table(Pool)} WHERE {_column(Pool, 'id')} = ANY(%s) ORDER BY {_column(Pool, 'id')} FOR UPDATE",
    "pool_versions": f"SELECT {_columns(PoolVersion, ('pool', *_VERSION_COLUMNS))} "
                     f"FROM {_table(PoolVersion)} WHERE {_column(PoolVersion, 'pool')} = ANY(%s)",
    "durable": "SELECT pg_logical_emit_message(true, 'table-audit', 'durable')",
}
# The look-up of the stored rounds is planned with whole-table reads priced out: a
# connection keeps the plan it made for a prepared statement, and one made while
# the keys were a page or two (a fresh database, statistics stale with autovacuum
# off or behind) reads every key ever stored, for every round posted after.
BY_INDEX_ONLY = ("enable_seqscan", "enable_bitmapscan", "enable_hashjoin", "enable_mergejoin")


@dataclass(slots=True)
class Look:
    stored: dict[tuple[int, str], tuple[int, date] | None]  # (table, round id) -> its key's pk and day
    versions: Versions  # by configuration
    free_pks: list[int] | None  # keys for the new rounds (None on SQLite: the inserts draw them)


def look(keys: Sequence[tuple[int, str]], configs: Sequence[int], *, durable: bool, inline: bool) -> Look:
    """Step 1, in one round trip."""
    keys, configs = list(dict.fromkeys(keys)), list(dict.fromkeys(configs))
    if connection.vendor != "postgresql":
        return _look_sqlite(keys, configs)
    statements = []
    if settings.INGEST_ASYNC_COMMIT:
        statements.append(sql.raw("SET LOCAL synchronous_commit TO OFF"))
        if durable:
            transaction.on_commit(make_durable)
    if not inline:
        # Each row's foreign keys checked as it goes in, not all at the commit:
        # the commit comes with the audit chain's lock held, which every writer
        # queues for. Our own transaction only: a caller's keeps its deferred
        # checks. The meter's triggers stay at the commit (progressive.ledger).
        statements.append(sql.raw("SET CONSTRAINTS ALL IMMEDIATE"))
        statements.append(sql.raw(f"SET CONSTRAINTS {', '.join(TRIGGERS)} DEFERRED"))
    statements += [sql.raw(f"SET LOCAL {name} TO off") for name in BY_INDEX_ONLY]
    stored_at = len(statements)
    statements.append(
        sql.raw(SQL["stored"], [[k[0] for k in keys], [k[1] for k in keys]], returns_rows=True, prepare=True))
    statements += [sql.raw(f"SET LOCAL {name} TO DEFAULT") for name in BY_INDEX_ONLY]
    statements += [
        sql.raw(SQL["config_versions"], [list(configs)], returns_rows=True, prepare=True),
        sql.raw(SQL["keys"], [len(keys)], returns_rows=True, prepare=True),
    ]
    answers = sql.run(statements)
    stored_rows = answers[stored_at]
    version_rows, key_rows = answers[len(statements) - 2:]
    return Look(
        stored={(table, round_id): (pk, day) for table, round_id, pk, day in stored_rows},
        versions=_by_owner(version_rows),
        free_pks=[pk for (pk,) in key_rows],
    )


def _look_sqlite(keys, configs) -> Look:
    stored = {}
    for table_pk in {table_pk for table_pk, _ in keys}:
        ids = [round_id for t, round_id in keys if t == table_pk]
        rows = RoundKey.objects.filter(table_id=table_pk, round_id__in=ids).values_list("round_id", "pk", "gaming_day")
        stored.update({(table_pk, round_id): (pk, day) for round_id, pk, day in rows})
    versions = TableConfigVersion.objects.filter(config_id__in=configs).values_list(
        "config_id", *_VERSION_COLUMNS)
    return Look(stored, _by_owner(versions), None)


def _by_owner(rows) -> Versions:
    versions: Versions = {}
    for owner, *rest in rows:
        versions.setdefault(owner, []).append(tuple(rest))
    return versions


@dataclass(slots=True)
class Held:
    pools: dict[int, Pool]
    pool_versions: Versions  # by pool
    rounds: dict[int, Round]  # the stored rounds this transaction resubmits to


def lock(pool_ids: set[int], stored: Sequence[tuple[int, date]], new_keys: Sequence[RoundKey]) -> Held:
    """Step 2: the pools, the stored rounds a resubmission touches, then the new rounds' keys.

    New rounds only: one round trip. The keys go in sorted by (table, round
    id), so two transactions inserting the same ids (a table sending a round
    twice at once) meet them in one order.
    """
    pools, rounds = sorted(pool_ids), sorted(pk for pk, _ in stored)
    keys = sql.insert(RoundKey, sorted(new_keys, key=lambda k: (k.table_id, k.round_id)))
    held = Held({}, {}, {})
    if pools:
        held.pools, held.pool_versions = _pools_locked(pools, then=[] if rounds else keys)
        keys = keys if rounds else []
    if rounds:
        days = sorted({day for _, day in stored})
        locked = locks.rows_locked(Round.objects.filter(pk__in=rounds, gaming_day__in=days), rounds)
        held.rounds = {round_.pk: round_ for round_ in locked}
    sql.run(keys)
    return held


def _pools_locked(pools: list[int], then: Sequence[sql.Statement]) -> tuple[dict[int, Pool], Versions]:
    """The pools row-locked and their versions as they stand once the locks are ours; ``then`` after."""
    if connection.vendor != "postgresql":
        locked = {p.pk: p for p in locks.rows_locked(Pool.objects.filter(pk__in=pools), pools)}
        versions = PoolVersion.objects.filter(pool_id__in=pools).values_list("pool_id", *_VERSION_COLUMNS)
        sql.run(then)
        return locked, _by_owner(versions)
    rows, versions, *_ = sql.run([
        locks.raw_lock_statement("progressive.Pool", sql.raw(SQL["pools"], [pools], returns_rows=True, prepare=True),
                                 pools),
        sql.raw(SQL["pool_versions"], [pools], returns_rows=True, prepare=True),
        *then,
    ])
    names = [f.attname for f in Pool._meta.concrete_fields]
    return {row[0]: Pool.from_db(connection.alias, names, row) for row in rows}, _by_owner(versions)


def write(rounds: Sequence[Round], seats: Sequence[Seat], findings: Sequence[Finding],
          events: Sequence[MeterEvent], bodies: Sequence[Submission], *, head_too: bool,
          totals: dict, tally: dict, late: Sequence[Round] = ()) -> tuple[int, str] | None:
    """Step 3: a run of new rounds and all that goes with them (a ``LateRound`` for each of
    ``late``, stored after its gaming day ended), what they add to their days' totals gathered
    in ``totals`` and their findings to the work to do in ``tally``; with ``head_too`` the audit
    head locked last, in the same round trip, and ``totals`` and ``tally`` sent after it (then
    emptied).

    Returns the head (seq, hash) for ``trail.services.audit_record_many``, or None.
    """
    statements = []
    if connection.vendor != "postgresql":
        Round.objects.bulk_create(rounds)  # no sequence: the insert draws the keys
        statements += sql.insert(RoundKey, [key_of(r.pk, r.table_id, r.round_id, r.gaming_day) for r in rounds])
        for row in (*seats, *findings, *events, *bodies):
            row.round_id = row.round.pk
    else:
        statements += sql.insert(Round, rounds)
    finding_inserts = sql.insert(Finding, findings, returning="id")
    statements += [
        *sql.insert(Seat, seats),
        *finding_inserts,
        *ledger_statements(events),
        *sql.insert(Submission, bodies),
        *sql.insert(LateRound, [new_row(LateRound, round_pk=r.pk, table_id=r.table_id, gaming_day=r.gaming_day,
                                        received_at=r.received_at) for r in late]),
        *([audit_head_lock_statement()] if head_too else []),
    ]
    head_at = len(statements) - 1
    # What the rounds add to their days' totals and work goes out once the head is held
    # (``day_totals``, ``work_tally``).
    day_totals.of_rounds(rounds, seats, findings, into=totals)
    work_tally.of_new(rounds, findings, into=tally)
    if head_too:
        statements += [*day_totals.added_statements(totals), *work_tally.added_statements(tally)]
        totals.clear()
        tally.clear()
    results = sql.run(statements)
    first = statements.index(finding_inserts[0]) if finding_inserts else 0
    # Keys come back in insertion order, as bulk_create relies on.
    finding_pks = sorted(row[0] for rows in results[first : first + len(finding_inserts)] for row in rows)
    for finding, pk in zip(findings, finding_pks):
        finding.pk = pk
    alias = connection.alias  # looked up once: each lookup goes through the connection's thread-local
    for row in (*rounds, *findings, *events, *bodies):
        row._state.adding, row._state.db = False, alias
    if not head_too:
        return None
    return results[head_at][0] if results[head_at] else None


def key_of(pk: int, table_id: int, round_id: str, gaming_day: date) -> RoundKey:
    return new_row(RoundKey, id=pk, table_id=table_id, round_id=round_id, gaming_day=gaming_day)


def make_durable() -> None:
    """Wait until the disk holds everything committed so far, this transaction included.

    The transaction committed without waiting for its WAL to be flushed, so
    its row locks went free at once. A transactional logical message commits
    with ``synchronous_commit`` on: PostgreSQL flushes the WAL up to it, and
    so past our commit, which is earlier in the same log. Concurrent waiters
    share one flush.
    """
    sql.run([sql.raw(SQL["durable"], returns_rows=True, prepare=True)])
