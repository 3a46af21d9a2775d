"""Storing what tables send. ``ingest_round`` (one) and ``ingest_rounds`` (a batch) store every round.

A new round travels in a fixed number of round trips to the database, however
many seats, findings and meter events it has; a batch of them in the same
number (on PostgreSQL):

1. the look: which round ids are stored already, the table configuration's
   versions, primary keys for the new rounds, and whether their gaming days
   have partitions (``rounds.partitions``: a month without one gets it first,
   outside the transaction);
2. the rounds' keys and kept bodies, then the pools' row locks (in primary
   key order) and their versions, in one string of statements (rounds of no
   pool take no lock: their keys and bodies go with step 4);
3. the engine's verdicts finished at the meters, in memory, the pools'
   meters moved in memory;
4. the rounds, seats, findings, meter events and pools, sent as one string
   of statements;
5. the audit chain: its head locked, then the events and the new head;
6. the commit, which does not wait for the disk, so the pool and chain locks
   are free for the next table at once; then, before answering, a wait until
   the disk holds this commit (``_durable``). A round is never answered
   before it is durable, exactly as with a synchronous commit.

Everything that does not need a lock happens before the first lock is
taken: shape, hashes, the look, and each round judged as far as the meter
allows (``prepare_round``) with its rows built; foreign keys are checked as
rows go in, not at the commit. The pool's lock comes before the audit head's.

Single posts that reach one web worker at the same moment are stored together
by that worker's round writer (``_Combiner``), so that under load one pass of
the locks and one wait for the disk serve several tables. docs/SCALING.md has
the measurements behind each of these choices.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from audit.services import Actor, AuditEntry, audit_head_lock_statement, audit_record, audit_record_many
from casino import sql
from casino.gaming_day import gaming_day_of
from casino.rows import new_row
from progressive.models import MeterEvent, Pool, PoolVersion
from progressive.services import meter_round_event_rows, pool_meters
from rounds import partitions
from rounds.engine import category_name
from rounds.engine.findings import CONFLICTING_RESUBMISSION
from rounds.engine.record import round_from_wire
from rounds.engine.rules import BETS, PoolRules, TableRules
from rounds.engine.settlement import ZERO, GameSettlement
from rounds.engine.verdict import Prepared, judge_prepared, prepare_round
from rounds.models import Finding, Round, RoundKey, Seat, Submission, Table, TableConfigVersion
from rounds.selectors import round_detail

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IngestResult:
    round: Round
    outcome: str  # a Submission.Outcome: accepted, replayed or conflict
    # ``round`` as this record left it, seats, findings and meter events
    # included, so its answer needs no read and later records of a batch
    # (a conflicting resubmission flags the round) do not change it.
    snapshot: bool = False

    @property
    def http_status(self) -> int:
        return {"accepted": 201, "replayed": 200, "conflict": 409}[self.outcome]


@dataclass(frozen=True, slots=True)
class Received:
    """One record of a table, shape-checked and canonical, and the body it came in."""

    record: dict
    body: bytes


@dataclass(frozen=True, slots=True)
class _Entry:
    """A received record with who sent it: several tables' records can share a transaction."""

    table: Table
    record: dict
    body: bytes
    request_id: str
    # Worked out beforehand by the request's own thread when a round writer
    # will store it (``ingest_round``): the writer serves a whole process,
    # one group at a time, so what it need not do itself it should not.
    digest: str | None = None
    wire: object = None  # the record read for the engine (``round_from_wire``)

    @property
    def key(self) -> tuple[int, str]:
        return self.table.pk, self.record["round"]


def record_hash(record: dict) -> str:
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def ingest_round(*, table: Table, record: dict, body: bytes, request_id: str = "") -> IngestResult:
    """Keep the body, judge the round, move its pool's meter and store it all, atomically.

    ``record`` is the wire record after shape checks, in canonical form
    (``rounds.api.serializers.RoundRecordSerializer``). A resubmission of the
    same record returns the stored round; a different record under the same
    round id is refused and marks the stored round.
    """
    if _COMBINER.serves(connection):
        return _COMBINER.ingest(
            _Entry(table, record, body, request_id, record_hash(record), round_from_wire(record)))
    return _ingest_entries([_Entry(table, record, body, request_id)])[0]


def ingest_rounds(*, table: Table, received: Sequence[Received], request_id: str = "") -> list[IngestResult]:
    """``ingest_round`` for each record, in order, in one transaction; one result each.

    The new rounds are written together; a record whose round id is stored
    already (or came earlier in the same batch) is answered as a resubmission
    where it stands: every body is kept, and every answer given, exactly as if
    the records had come one by one.
    """
    return _ingest_entries([_Entry(table, r.record, r.body, request_id) for r in received])


def _ingest_entries(entries: Sequence[_Entry], *, durable: bool = True) -> list[IngestResult]:
    """``entries`` stored in one transaction; with ``durable``, not before the disk holds them."""
    if not entries:
        return []
    # Inside a caller's transaction a missing partition is made in it; ours is
    # made first, in a transaction of its own, so that no round's transaction
    # ever holds the lock that making a partition takes on all of rounds.
    inline = connection.in_atomic_block
    collided = False
    days_check = True
    while True:
        try:
            with transaction.atomic():
                return _ingest(entries, durable, days_check=days_check, inline=inline)
        except _DaysWithoutPartition as missing:
            partitions.partitions_make(missing.days)
            days_check = False  # made, or refused: either way the rows may go in now
        except IntegrityError:
            # Another request stored one of these round ids between our look
            # and our insert; the second pass finds it and answers it as a
            # resubmission.
            if collided:
                raise
            collided = True


class _DaysWithoutPartition(Exception):
    def __init__(self, days: list):
        super().__init__(days)
        self.days = days


# ---- the versions: immutable, so each is read once per process --------------------------


_CONFIG_VERSIONS: dict[int, tuple[TableConfigVersion, TableRules]] = {}
_POOL_VERSIONS: dict[int, tuple[PoolVersion, PoolRules]] = {}


def _config_version(pk: int) -> tuple[TableConfigVersion, TableRules]:
    known = _CONFIG_VERSIONS.get(pk)
    if known is None:
        version = TableConfigVersion.objects.select_related("config").get(pk=pk)
        known = _CONFIG_VERSIONS[pk] = (version, version.rules())
    return known


def _pool_version(pk: int) -> tuple[PoolVersion, PoolRules]:
    known = _POOL_VERSIONS.get(pk)
    if known is None:
        version = PoolVersion.objects.select_related("pool").get(pk=pk)
        known = _POOL_VERSIONS[pk] = (version, version.rules())
    return known


def _in_force(versions: list[tuple[int, datetime, int]], at: datetime) -> int:
    """The pk of the version in force at ``at`` (the earliest, before any): as
    ``rounds.selectors.config_version_in_force`` answers, from (pk, effective_from, version)."""
    started = [v for v in versions if v[1] <= at]
    if started:
        return max(started, key=lambda v: (v[1], v[2]))[0]
    return min(versions, key=lambda v: (v[1], v[2]))[0]


# ---- one transaction ------------------------------------------------------------------------


@dataclass(slots=True)
class _New:
    """A round about to be stored, and everything written with it."""

    at: int  # its place among the received records
    entry: _Entry
    digest: str
    dealt_at: datetime
    gaming_day: date
    round: Round | None = None
    seats: list[Seat] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    events: list[MeterEvent] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)


def _ingest(entries: Sequence[_Entry], durable: bool, *, days_check: bool, inline: bool) -> list[IngestResult]:
    results: list[IngestResult | None] = [None] * len(entries)
    digests = [e.digest or record_hash(e.record) for e in entries]
    stored, version_rows, free_pks, days_missing = _look(entries, durable, days_check, inline)
    if days_missing:
        if not inline:
            raise _DaysWithoutPartition(days_missing)
        partitions.partitions_make(days_missing)

    # In order: a run of new rounds is written together; a record whose id is
    # stored already (or came earlier in this call) is a resubmission, answered
    # where it stands, so every kept body and answer is as if sent one by one.
    run: list[_New] = []
    for number, entry in enumerate(entries):
        if entry.key not in stored:
            stored[entry.key] = None  # a later record with this id is a resubmission of this one
            dealt_at = datetime.fromisoformat(entry.record["dealt_at"])
            run.append(_New(number, entry, digests[number], dealt_at, gaming_day_of(dealt_at)))
            continue
        _store_run(run, version_rows, free_pks, results)
        # Through its key: the key names the one partition that holds the round.
        key = RoundKey.objects.get(table=entry.table, round_id=entry.record["round"])
        round_ = Round.objects.select_for_update().get(pk=key.pk, gaming_day=key.gaming_day)
        result = _resubmission(entry.table, round_, digests[number], entry.body, entry.request_id)
        results[number] = IngestResult(round_detail(round_pk=round_.pk), result.outcome, snapshot=True)
    _store_run(run, version_rows, free_pks, results)
    return results


def _store_run(run: list[_New], version_rows, free_pks, results: list) -> None:
    if run:
        _store(run, version_rows, free_pks)
        for item in run:
            results[item.at] = IngestResult(item.round, Submission.Outcome.ACCEPTED, snapshot=True)
        run.clear()


def _look(entries: Sequence[_Entry], durable: bool, days_check: bool, inline: bool) -> tuple[dict, dict, object, list]:
    """In one round trip: which round ids are stored, the configurations' versions, keys for new
    rounds, and the rounds' gaming days whose month has no partition yet."""
    keys = list(dict.fromkeys(e.key for e in entries))
    configs = list(dict.fromkeys(e.table.config_id for e in entries))
    versions: dict[int, list] = {}
    if connection.vendor != "postgresql":
        stored = {}
        for table in {e.table.pk: e.table for e in entries}.values():
            ids = [round_id for table_pk, round_id in keys if table_pk == table.pk]
            rows = RoundKey.objects.filter(table=table, round_id__in=ids).values_list("round_id", "pk")
            stored.update({(table.pk, round_id): pk for round_id, pk in rows})
        rows = TableConfigVersion.objects.filter(config_id__in=configs).values_list(
            "config_id", "pk", "effective_from", "version")
        for config_id, *rest in rows:
            versions.setdefault(config_id, []).append(tuple(rest))
        return stored, versions, None, []
    statements = []
    if settings.INGEST_ASYNC_COMMIT:
        statements.append(sql.raw("SET LOCAL synchronous_commit TO OFF"))
        if durable:
            transaction.on_commit(_durable)
    if not inline:
        # Each row's foreign keys checked as it goes in, not all at the commit:
        # the commit comes with the audit chain's lock held, which every writer
        # of the service queues for, and a round's dozen checks took a third
        # of its database time. Our own transaction only: a caller's keeps its
        # deferred checks.
        statements.append(sql.raw("SET CONSTRAINTS ALL IMMEDIATE"))
    statements += [
        sql.raw(_SQL["stored"], [[k[0] for k in keys], [k[1] for k in keys]], returns_rows=True, prepare=True),
        sql.raw(_SQL["versions"], [configs], returns_rows=True, prepare=True),
        sql.raw(_SQL["keys"], [len(keys)], returns_rows=True, prepare=True),
    ]
    if days_check:
        days = list({gaming_day_of(datetime.fromisoformat(e.record["dealt_at"])) for e in entries})
        statements.append(sql.raw(partitions.MISSING_SQL, [days], returns_rows=True, prepare=True))
    answers = sql.run(statements)
    if days_check:
        *_, stored_rows, version_list, key_rows, days_missing = answers
    else:
        *_, stored_rows, version_list, key_rows = answers
        days_missing = []
    for config_id, *rest in version_list:
        versions.setdefault(config_id, []).append(tuple(rest))
    stored = {(table_pk, round_id): pk for table_pk, round_id, pk in stored_rows}
    return stored, versions, iter([pk for (pk,) in key_rows]), [day for (day,) in days_missing]


def _pools_lock(pool_ids: set[int], before: Sequence[sql.Statement] = ()) -> tuple[dict[int, Pool], dict[int, list]]:
    """The pools, row-locked in primary key order (two writers never deadlock), and
    their versions as they stand once the locks are ours; ``before`` runs first,
    in the same round trip."""
    ordered = sorted(pool_ids)
    if connection.vendor == "postgresql":
        *_, locked, version_list = sql.run([
            *before,
            sql.raw(_SQL["pools"], [ordered], returns_rows=True, prepare=True),
            sql.raw(_SQL["pool_versions"], [ordered], returns_rows=True, prepare=True),
        ])
    else:
        sql.run(before)
        locked = Pool.objects.select_for_update().filter(pk__in=ordered).order_by("pk").values_list(
            *(f.attname for f in Pool._meta.concrete_fields))
        version_list = PoolVersion.objects.filter(pool_id__in=ordered).values_list(
            "pool_id", "pk", "effective_from", "version")
    names = [f.attname for f in Pool._meta.concrete_fields]
    pools = {}
    for row in locked:
        pool = Pool.from_db(connection.alias, names, row)
        pools[pool.pk] = pool
    versions: dict[int, list] = {}
    for pool_id, *rest in version_list:
        versions.setdefault(pool_id, []).append(tuple(rest))
    return pools, versions


def _column(model, name: str) -> str:
    return f'"{model._meta.get_field(name).column}"'


def _table(model) -> str:
    return f'"{model._meta.db_table}"'


# The reads of every round, written once: Django would compile them again for each.
_SQL = {
    "stored": f"SELECT k.{_column(RoundKey, 'table')}, k.{_column(RoundKey, 'round_id')}, k.{_column(RoundKey, 'id')} "
              f"FROM {_table(RoundKey)} k JOIN unnest(%s::bigint[], %s::text[]) AS sent(table_id, round_id) "
              f"ON k.{_column(RoundKey, 'table')} = sent.table_id AND k.{_column(RoundKey, 'round_id')} = sent.round_id",
    "versions": f"SELECT {_column(TableConfigVersion, 'config')}, {_column(TableConfigVersion, 'id')}, "
                f"{_column(TableConfigVersion, 'effective_from')}, {_column(TableConfigVersion, 'version')} "
                f"FROM {_table(TableConfigVersion)} WHERE {_column(TableConfigVersion, 'config')} = ANY(%s)",
    "durable": "SELECT pg_logical_emit_message(true, 'table-audit', 'durable')",
    "keys": f"SELECT nextval(pg_get_serial_sequence('{Round._meta.db_table}', 'id')) "
            "FROM generate_series(1, %s)",
    "pools": f"SELECT {', '.join(_column(Pool, f.name) for f in Pool._meta.concrete_fields)} "
             f"FROM {_table(Pool)} WHERE {_column(Pool, 'id')} = ANY(%s) "
             f"ORDER BY {_column(Pool, 'id')} FOR UPDATE",
    "pool_move": f"UPDATE {_table(Pool)} SET {_column(Pool, 'meter')} = %s, {_column(Pool, 'overflow')} = %s, "
                 f"{_column(Pool, 'reserve')} = %s, {_column(Pool, 'last_event_seq')} = %s, "
                 f"{_column(Pool, 'updated_at')} = %s WHERE {_column(Pool, 'id')} = %s",
    "pool_versions": f"SELECT {_column(PoolVersion, 'pool')}, {_column(PoolVersion, 'id')}, "
                     f"{_column(PoolVersion, 'effective_from')}, {_column(PoolVersion, 'version')} "
                     f"FROM {_table(PoolVersion)} WHERE {_column(PoolVersion, 'pool')} = ANY(%s)",
}


def _store(new: list[_New], version_rows: dict, free_pks) -> None:
    versions = {}
    pool_ids = set()
    for item in new:
        pk = _in_force(version_rows[item.entry.table.config_id], item.dealt_at)
        version, _ = _config_version(pk)
        versions[item.at] = version
        if version.pool_id:
            pool_ids.add(version.pool_id)

    # What does not depend on the pool's meter is made before its lock is
    # taken: every other table's round waits for that lock while this group
    # holds it. Each round's key (drawn in order, as ever), the round judged
    # but for its Progressive, its row and its seats' rows but for what the
    # meter decides, and, where the keys are known already, the rows of its
    # key and of its kept body.
    pks = [next(free_pks) if free_pks is not None else None for _ in new]
    prepared = []
    for item, pk in zip(new, pks):
        wire = item.entry.wire if item.entry.wire is not None else round_from_wire(item.entry.record)
        version = versions[item.at]
        ready = prepare_round(wire, _config_version(version.pk)[1])
        prepared.append(ready)
        item.round = _round_row(item, ready.game, version, pk)
        item.seats = _seat_rows(item.round, item.entry.record, ready)
    early: list[sql.Statement] = []
    submissions: list[Submission] = []
    submission_inserts: list[sql.Statement] = []
    if free_pks is not None:
        early = sql.insert(RoundKey, [
            _key_row(pk, item.entry.table.pk, item.entry.record["round"], item.gaming_day)
            for pk, item in zip(pks, new)
        ])
        submissions = [_accepted(item, pk) for pk, item in zip(pks, new)]
        submission_inserts = sql.insert(Submission, submissions)

    if pool_ids:
        # The keys and kept bodies go in with the pools' locks, ahead of them:
        # the database's work on them (and their keys' checks) is then done
        # before the lock that every other table of the pools waits for.
        pools, pool_version_rows = _pools_lock(pool_ids, before=[*early, *submission_inserts])
        early = submission_inserts = []
    else:
        pools, pool_version_rows = {}, {}
    seq_at_lock = {pk: pool.last_event_seq for pk, pool in pools.items()}

    # Judged to the end in order: each round of a pool starts from the meter the last one left.
    for item, ready in zip(new, prepared):
        version = versions[item.at]
        pool = pools.get(version.pool_id) if version.pool_id else None
        pool_version = pool_rules = meters = None
        if pool is not None:
            pool_version, pool_rules = _pool_version(_in_force(pool_version_rows[pool.pk], item.dealt_at))
            meters = pool_meters(pool)
        verdict = judge_prepared(ready, pool_rules, meters)
        _round_finish(item.round, verdict, pool_version, meters)
        for seat, judged in zip(item.seats, _seat_verdicts(item.entry.record, verdict)):
            seat.settled_progressive = judged.settled["progressive"]
        item.codes = sorted({f.code for f in verdict.findings})
        item.findings = [
            new_row(Finding, round=item.round, code=f.code, informational=f.informational, seat=f.seat,
                    bet=f.bet or "", expected=f.expected, claimed=f.claimed, detail=f.detail)
            for f in verdict.findings
        ]
        if pool is not None and verdict.events:
            item.events = meter_round_event_rows(pool=pool, events=verdict.events, round=item.round)

    rounds = [item.round for item in new]
    if free_pks is None:
        # No sequence to draw keys from (SQLite): the rounds first, for their keys.
        Round.objects.bulk_create(rounds)
        statements = sql.insert(RoundKey, [
            _key_row(r.pk, r.table_id, r.round_id, r.gaming_day) for r in rounds])
        for item in new:
            for row in (*item.seats, *item.findings, *item.events):
                row.round = item.round
        submissions = [_accepted(item, item.round.pk) for item in new]
        submission_inserts = sql.insert(Submission, submissions)
    else:
        # The key first: its unique index is where two tables' racing inserts of one round id meet.
        statements = [*early, *sql.insert(Round, rounds)]
    now = timezone.now()
    findings = [f for item in new for f in item.findings]
    finding_inserts = sql.insert(Finding, findings, returning="id")
    statements += [
        *sql.insert(Seat, [s for item in new for s in item.seats]),
        *finding_inserts,
        *sql.insert(MeterEvent, [e for item in new for e in item.events]),
        *(_pool_move(pool, now) for pool in pools.values() if pool.last_event_seq != seq_at_lock[pool.pk]),
        *submission_inserts,
        # Last, after the pools': the chain's head, whose lock every writer queues for.
        audit_head_lock_statement(),
    ]
    results = sql.run(statements)
    first = statements.index(finding_inserts[0]) if finding_inserts else 0
    # Keys come back in insertion order, as bulk_create relies on.
    finding_pks = sorted(row[0] for rows in results[first : first + len(finding_inserts)] for row in rows)
    for finding, pk in zip(findings, finding_pks):
        finding.pk = pk
    for row in (*rounds, *findings, *submissions):
        row._state.adding, row._state.db = False, connection.alias

    audit_record_many(head=results[-1][0] if results[-1] else None, entries=[
        AuditEntry(
            actor=Actor.of_table(item.entry.table), action="round.stored", obj=item.round,
            after={"status": item.round.status, "record_hash": item.digest, "findings": item.codes},
            request_id=item.entry.request_id,
        )
        for item in new
    ])
    for item in new:
        _remember(item.round, "seats", sorted(item.seats, key=lambda s: s.seat))
        _remember(item.round, "findings", item.findings)
        _remember(item.round, "meter_events", item.events)


def _pool_move(pool: Pool, now: datetime) -> sql.Statement:
    if connection.vendor != "postgresql":
        return sql.update(Pool.objects.filter(pk=pool.pk), meter=pool.meter, overflow=pool.overflow,
                          reserve=pool.reserve, last_event_seq=pool.last_event_seq, updated_at=now)
    return sql.raw(_SQL["pool_move"], [pool.meter, pool.overflow, pool.reserve, pool.last_event_seq,
                                       now, pool.pk], prepare=True)


def _round_row(item: _New, game: GameSettlement, version, pk: int | None) -> Round:
    """The round's row but for what its Progressive decides (``_round_finish``)."""
    record = item.entry.record
    return new_row(
        Round,
        pk=pk,
        table=item.entry.table,
        round_id=record["round"],
        dealt_at=item.dealt_at,
        gaming_day=item.gaming_day,
        dealer=record.get("dealer") or "",
        void=record["void"],
        board="".join(record.get("board") or ()),
        dealer_cards="".join(record.get("dealer_cards") or ()),
        dealer_hand=category_name(game.dealer_hand) if game.dealer_hand is not None else "",
        dealer_qualifies=game.dealer_qualifies,
        config_version=version,
        record=record,
        record_hash=item.digest,
    )


def _round_finish(round_: Round, verdict, pool_version, meters) -> None:
    """What the whole verdict decides of the round's row: its status, and its pool's meter."""
    round_.status = verdict.status
    round_.pool_version_id = pool_version.pk if pool_version is not None else None
    round_._state.fields_cache["pool_version"] = pool_version
    round_.meter_before = meters.meter if meters else None
    round_.meter_after = verdict.meters_after.meter if verdict.meters_after else None


def _key_row(pk: int, table_id: int, round_id: str, gaming_day: date) -> RoundKey:
    return new_row(RoundKey, id=pk, table_id=table_id, round_id=round_id, gaming_day=gaming_day)


def _seat_rows(round_: Round, record: dict, ready: Prepared) -> list[Seat]:
    """The seats' rows, in the order the table listed them, but for the
    Progressive's settlement (set once the verdict is in). Amounts are the
    ones the engine read from the record, not parsed a second time."""
    by_number = ready.game.seats
    rows = []
    for wire, read in zip(record["seats"], ready.record.seats, strict=True):
        judged = by_number[read.seat]
        paid = read.paid
        row = new_row(
            Seat,
            round=round_,
            gaming_day=round_.gaming_day,
            seat=read.seat,
            player=wire.get("player") or "",
            hole="".join(wire.get("hole") or ()),
            ante=read.ante, blind=read.blind, trips=read.trips, play=read.play,
            progressive=read.progressive,
            progressive_lit=read.progressive_lit,
            decision=read.decision,
            hand=category_name(judged.hand) if judged.hand is not None else "",
            paid_reported=paid is not None,
        )
        columns = row.__dict__  # plain attributes: new_row set every one
        settled = judged.results
        for bet in BETS:
            columns[f"settled_{bet}"] = settled.get(bet, ZERO)
            if paid is not None:
                columns[f"paid_{bet}"] = paid.get(bet, ZERO)
        rows.append(row)
    return rows


def _seat_verdicts(record: dict, verdict) -> list:
    """The verdict's seats in the order the table listed them, as ``_seat_rows`` made the rows."""
    by_number = {s.seat: s for s in verdict.seats}
    return [by_number[wire["seat"]] for wire in record["seats"]]


def _remember(round_: Round, name: str, rows: list) -> None:
    """Hand the rows just written to the answer as if prefetched (``selectors.round_list``).

    Django's related manager answers ``round_.seats.all()`` with whatever its
    prefetch cache holds; a list here serves the answer's serializer, which
    only iterates it, without the cost of building a queryset around it.
    """
    if not hasattr(round_, "_prefetched_objects_cache"):
        round_._prefetched_objects_cache = {}
    round_._prefetched_objects_cache[name] = list(rows)


def _durable() -> None:
    """Wait until the disk holds everything committed so far, this transaction included.

    The transaction committed without waiting for its WAL to be flushed, so
    its row locks went free at once. A transactional logical message commits
    with ``synchronous_commit`` on: PostgreSQL flushes the WAL up to it, and
    so past our commit, which is earlier in the same log. Concurrent waiters
    share one flush.
    """
    sql.run([sql.raw(_SQL["durable"], returns_rows=True, prepare=True)])


# ---- resubmissions and refusals -------------------------------------------------------------


def _resubmission(table, existing: Round, digest: str, body: bytes, request_id: str) -> IngestResult:
    if existing.record_hash == digest:
        _keep_body(table, body, existing.round_id, Submission.Outcome.REPLAYED, 200, request_id, existing)
        return IngestResult(existing, Submission.Outcome.REPLAYED)
    submission = _keep_body(
        table, body, existing.round_id, Submission.Outcome.CONFLICT, 409, request_id, existing
    )
    Finding.objects.create(
        round=existing, code=CONFLICTING_RESUBMISSION,
        detail=f"submission {submission.pk} sent a different body for this round id; it was refused and kept",
    )
    if existing.status != Round.Status.FLAGGED:
        existing.status = Round.Status.FLAGGED
        # With its gaming day, the update looks in one partition only.
        Round.objects.filter(pk=existing.pk, gaming_day=existing.gaming_day).update(status=existing.status)
    audit_record(
        actor=Actor.of_table(table), action="round.conflict_refused", obj=existing,
        after={"submission": submission.pk}, request_id=request_id,
    )
    return IngestResult(existing, Submission.Outcome.CONFLICT)


def _accepted(item: _New, round_pk: int) -> Submission:
    """The kept body of a new round, by its round's key (the round is written with it)."""
    submission = _submission(item.entry.table, item.entry.body, item.entry.record["round"],
                             Submission.Outcome.ACCEPTED, 201, item.entry.request_id)
    submission.round_id = round_pk
    return submission


def _submission(table, body, round_id, outcome, status, request_id, round_=None, errors=None) -> Submission:
    return new_row(
        Submission, table=table, body=bytes(body), body_sha256=hashlib.sha256(body).hexdigest(),
        claimed_round=(round_id or "")[:64], outcome=outcome, http_status=status,
        request_id=request_id, errors=errors, round=round_,
    )


def _keep_body(table, body, round_id, outcome, status, request_id, round_=None, errors=None) -> Submission:
    submission = _submission(table, body, round_id, outcome, status, request_id, round_, errors)
    submission.save(force_insert=True)
    return submission


def submission_refuse(
    *, table: Table, body: bytes, outcome: str, http_status: int, errors, round_id: str = "",
    request_id: str = "",
) -> Submission:
    """Keep a body that was refused (unreadable, or another table's), and log the refusal."""
    with transaction.atomic():
        submission = _keep_body(table, body, round_id, outcome, http_status, request_id, errors=errors)
        audit_record(
            actor=Actor.of_table(table), action=f"round.{outcome}", obj=submission,
            after={"http_status": http_status, "round": round_id}, request_id=request_id,
        )
    return submission


# ---- single posts that arrive together share one transaction -----------------------------------


@dataclass(slots=True)
class _Waiter:
    entry: _Entry
    done: threading.Event = field(default_factory=threading.Event)
    result: IngestResult | None = None
    error: BaseException | None = None


class _Combiner:
    """A writer thread per process: single posts that arrive while it writes go together.

    Every new round holds the pool's lock, then the audit chain's, for a few
    round trips; tables that post at the same moment queue for them one by
    one. Instead, a web worker's request threads hand their records to the
    process's writer, which stores whatever is waiting in one transaction
    (``_ingest_entries``: each record still answered on its own and exactly as
    if alone). If the shared transaction fails, each record is stored again
    alone, so a bad one fails alone.

    The writer does not wait for the disk: it hands each committed group to a
    second thread, which waits until the disk holds everything committed so
    far (one wait covers every group committed meanwhile) and only then
    wakes the group's requests. Idle, a record waits for nothing; under load
    one pass of the locks and one disk flush serve several tables.
    """

    MOST = 32  # records one transaction takes at most
    PATIENCE = 55.0  # seconds a request waits for its answer (gunicorn's timeout is 60)

    def __init__(self):
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

    def ingest(self, entry: _Entry) -> IngestResult:
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
                for waiter, result in zip(group, _ingest_entries([w.entry for w in group], durable=durable)):
                    waiter.result = result
            except BaseException:
                durable = True
                for waiter in group:
                    try:
                        waiter.result = _ingest_entries([waiter.entry])[0]
                    except BaseException as error:
                        waiter.error = error
            if durable:
                _wake(group)
            else:
                self._flushing.put(group)
            _connection_rest(waiting)

    @staticmethod
    def _flush(flushing: queue.SimpleQueue) -> None:
        while True:
            groups = _drain(flushing, 1000)
            stopping = groups[-1] is _STOP
            if stopping:
                groups.pop()
            waiters = [w for group in groups for w in group]
            try:
                _connection_check()
                _durable()
            except BaseException as error:
                for waiter in waiters:
                    waiter.result, waiter.error = None, error
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


_COMBINER = _Combiner()
