"""Storing what tables send: the story of every round.

``ingest_round`` (one record) and ``ingest_rounds`` (a batch from one table)
store rounds. The records of one call share a transaction, and each new
round goes through the same steps:

1. look: which round ids are stored already, the configurations' versions,
   keys for the new rounds;
2. prepare: each new round judged as far as it goes without its pool's
   meter, and its rows built, before any lock is taken;
3. lock: the pools, the stored rounds a resubmission touches, then the new
   rounds' keys, in the one order of ``infra.locks``;
4. judge: each new round finished at its pool's meter, in the order sent,
   its meter events drafted on the pool's ledger (``progressive.ledger``);
5. write: the rows of each run of new rounds, and each resubmission's;
6. audit: one ``round.stored`` event each (and a conflict's), under one lock
   of the chain's head, taken last;
7. answer: each record's result, as the record left the round.

A record whose round id is stored already (or came earlier in the same call)
is a resubmission: its body is kept and it is answered where it stands, so
every kept body and every answer is as if the records had come one by one.
``write_plan`` turns the steps into round trips; ``combiner`` lets single
posts that arrive together share one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction

from game.record import round_from_wire
from game.verdict import Clock, judge_prepared, prepare_round
from game.versions import in_force
from infra import sql
from infra.gaming_day import gaming_day_of
from progressive.ledger import LedgerDraft, ledger_refused, pools_to_their_ledger
from progressive.services import pool_meters
from rounds import notices, partitions
from rounds.models import ROUND_ID_UNIQUE, Round, RoundKey, Submission, Table
from rounds.selectors import round_detail
from rounds.window import outside_window, window_opens
from trail.services import Actor, AuditEntry, audit_record_many

from . import day_totals, round_rows, versions, work_tally, write_plan
from .combiner import Combiner
from .entries import Entry, IngestResult, Received, record_hash
from .off_ledger import pools_off_ledger_named
from .resubmissions import resubmission
from .steps import NewRound, Resubmission, runs_of, steps_of

logger = logging.getLogger(__name__)


def ingest_round(*, table: Table, record: dict, body: bytes, request_id: str = "") -> IngestResult:
    """Keep the body, judge the round, move its pool's meter and store it all, atomically.

    ``record`` is the wire record after shape checks, in canonical form. A
    resubmission of the same record returns the stored round; a different
    record under the same round id is refused and marks the stored round.
    """
    if _COMBINER.serves(connection):
        return _COMBINER.ingest(Entry(table, record, body, request_id, record_hash(record), round_from_wire(record)))
    return ingest_entries([Entry(table, record, body, request_id)])[0]


def ingest_rounds(
    *, table: Table, received: Sequence[Received], request_id: str = "",
) -> list[IngestResult | Exception]:
    """``ingest_round`` for each record, in order, in one transaction; one result each.

    If that transaction fails, each record is stored again alone, so that a
    bad one fails alone: its exception stands in its place. The database
    unable to serve at all (``OperationalError``) is raised at once.
    """
    return ingest_each([Entry(table, r.record, r.body, request_id) for r in received],
                       not_retried=(OperationalError,))


def ingest_each(entries: Sequence[Entry], *, durable: bool = True,
                not_retried: tuple[type[BaseException], ...] = ()) -> list[IngestResult | Exception]:
    """``entries`` together in one transaction, or, if that fails, each alone.

    The one way the service stores a group (a batch's run, the round writer's
    group): a failure of the group costs it its shared transaction, never a
    good record. Errors of the kinds in ``not_retried`` are raised at once.
    """
    try:
        return ingest_entries(entries, durable=durable)
    except not_retried:
        raise
    except Exception as error:
        if len(entries) == 1:
            # Answered in its place, as a member of a larger group would be: a batch of one
            # round refused (an archived month) is that round's refusal, not the request's 500.
            if not isinstance(error, partitions.MonthArchived):
                logger.exception("round %s of table %s could not be stored",
                                 entries[0].record["round"], entries[0].table.code)
            return [error]
        logger.exception("a group of %d records failed together; storing each alone", len(entries))
    results: list[IngestResult | Exception] = []
    for entry in entries:
        try:
            results.append(ingest_entries([entry], durable=durable)[0])
        except not_retried:
            raise
        except Exception as error:
            logger.exception("round %s of table %s could not be stored", entry.record["round"], entry.table.code)
            results.append(error)
    return results


def ingest_entries(entries: Sequence[Entry], *, durable: bool = True) -> list[IngestResult]:
    """``entries`` stored in one transaction; with ``durable``, not answered before the disk holds them.

    Twice at most: when another request stored one of these round ids between
    our look and our insert, the second pass answers it as a resubmission.
    """
    try:
        return _transaction(entries, durable)
    except IntegrityError as error:
        partitions.refuse_if_archived(error)  # a round of an archived month: MonthArchived
        if ledger_refused(error):
            # A pool's row was moved past the triggers: judged again at its ledger, the pool named.
            return _transaction(entries, durable, pools_from_ledger=True)
        if not _lost_the_race(error):
            raise
        return _transaction(entries, durable)


def _lost_the_race(error: IntegrityError) -> bool:
    """The round key's unique index refused an id another transaction stored first."""
    diagnosis = getattr(error.__cause__, "diag", None)
    if diagnosis is not None:
        return diagnosis.constraint_name == ROUND_ID_UNIQUE
    return f"{RoundKey._meta.db_table}.round_id" in str(error)  # SQLite names the columns


def _transaction(entries: Sequence[Entry], durable: bool, pools_from_ledger: bool = False) -> list[IngestResult]:
    # No partition is ever made here: a round of a month without one goes to the default
    # partition (rounds.partitions); the schedule makes the window's months ahead of time.
    inline = connection.in_atomic_block
    keys, configs = [e.key for e in entries], [e.table.config_id for e in entries]
    opens = window_opens()
    with transaction.atomic():
        return _story(entries, write_plan.look(keys, configs, durable=durable, inline=inline), opens,
                      pools_from_ledger)


# ---- the story -------------------------------------------------------------------------------


def _story(entries: Sequence[Entry], look: write_plan.Look, opens: date,
           pools_from_ledger: bool = False) -> list[IngestResult]:
    steps = steps_of(entries, look.stored)
    new = [step for step in steps if isinstance(step, NewRound)]
    free_pks = iter(look.free_pks) if look.free_pks is not None else None
    pool_ids = set()
    for item in new:
        if (pool_id := _prepare(item, look.versions, free_pks, opens)) is not None:
            pool_ids.add(pool_id)
    stored_again = {step.stored for step in steps if isinstance(step, Resubmission) and step.stored}
    held = write_plan.lock(pool_ids, sorted(stored_again), [item.key for item in new if item.key is not None])
    off = pools_to_their_ledger(held.pools) if pools_from_ledger else []
    ledgers = {pk: LedgerDraft(pool) for pk, pool in held.pools.items()}
    for item in new:
        _judge(item, held.pool_versions, ledgers)
    results: list[IngestResult | None] = [None] * len(entries)
    audit: list[AuditEntry] = pools_off_ledger_named(off, new)
    head = None
    totals: dict = {}
    tally: dict = {}
    runs = list(runs_of(steps))
    for number, run in enumerate(runs):
        if isinstance(run, Resubmission):
            results[run.at], said = _answer_again(run, held.rounds, tally)
            audit += said
            continue
        # The chain's head is locked with the last write, so it is held for the audit alone.
        head = _write(run, head_too=number == len(runs) - 1, totals=totals, tally=tally)
        for item in run:
            results[item.at] = IngestResult(item.round, Submission.Outcome.ACCEPTED, item.seats,
                                            item.findings, item.events)
            audit.append(_stored(item))
    audit_record_many(head=head, entries=audit)
    # A batch whose last step answered a resubmission sends its new rounds' totals here, the head held.
    sql.run([*day_totals.added_statements(totals), *work_tally.added_statements(tally)])
    notices.due_after_commit((item.version.currency, item.findings, item.events) for item in new if item.version)
    return results


def _prepare(item: NewRound, config_versions: write_plan.Versions, free_pks, opens: date) -> int | None:
    """Step 2 for one new round; the pool whose lock it needs, if any."""
    entry = item.entry
    item.outside = outside_window(gaming_day=item.gaming_day, dealt_at=item.dealt_at,
                                  received_at=entry.received_at, opens=opens)
    item.version, rules = versions.config_version(in_force(config_versions[entry.table.config_id], item.dealt_at))
    clock = Clock(item.dealt_at, entry.received_at, settings.CLOCK_TOLERANCE)
    item.prepared = prepare_round(entry.wire if entry.wire is not None else round_from_wire(entry.record), rules,
                                  clock)
    digest = entry.digest or record_hash(entry.record)
    pk = next(free_pks) if free_pks is not None else None
    item.round = round_rows.round_row(entry.record, entry.table, digest, item.dealt_at, item.gaming_day,
                                      item.version, item.prepared, pk, entry.received_at)
    item.seats = round_rows.seat_rows(item.round, entry.record, item.prepared)
    item.body = round_rows.submission_row(entry.table, entry.body, entry.record["round"],
                                          Submission.Outcome.ACCEPTED, 201, entry.request_id, item.round)
    if pk is not None:
        item.key = write_plan.key_of(pk, entry.table.pk, entry.record["round"], item.gaming_day)
    return item.version.pool_id


def _judge(item: NewRound, pool_versions: write_plan.Versions, ledgers: dict[int, LedgerDraft]) -> None:
    """Step 4: the round finished at its pool's meter, as the rounds before it left the meter."""
    ledger = ledgers.get(item.version.pool_id)
    pool_version = pool_rules = meters = None
    if ledger is not None:
        pool_version, pool_rules = versions.pool_version(in_force(pool_versions[ledger.pool.pk], item.dealt_at))
        meters = pool_meters(ledger.pool)
    verdict = judge_prepared(item.prepared, pool_rules, meters)
    round_rows.round_finish(item.round, verdict, pool_version, meters.meter if meters else None)
    round_rows.seats_finish(item.seats, verdict)
    item.findings = round_rows.finding_rows(item.round, verdict)
    if item.outside is not None:
        item.findings.append(round_rows.held_apart(item.round, item.outside))
    item.codes = sorted({f.code for f in item.findings})
    if ledger is not None and verdict.events:
        item.events = ledger.add_round(verdict.events, item.round)


def _write(run: list[NewRound], *, head_too: bool, totals: dict, tally: dict) -> tuple[int, str] | None:
    """Step 5 for a run of new rounds; with ``head_too``, the audit head's lock (and its
    figures) in the same round trip, and the days' totals and work gathered in ``totals`` and
    ``tally`` after it."""
    return write_plan.write(
        [item.round for item in run], [s for item in run for s in item.seats],
        [f for item in run for f in item.findings], [e for item in run for e in item.events],
        [item.body for item in run], head_too=head_too, totals=totals, tally=tally,
        late=[item.round for item in run if _late(item)],
    )


def _late(item: NewRound) -> bool:
    """Stored after its gaming day ended, and counted by the reports (a held round is not): a
    report of its day made before undercounts (``rounds.LateRound``)."""
    return item.outside is None and item.gaming_day < gaming_day_of(item.entry.received_at)


def _stored(item: NewRound) -> AuditEntry:
    """Step 6 for a new round: what the chain says of it."""
    return AuditEntry(
        actor=Actor.of_table(item.entry.table), action="round.stored", obj=item.round,
        after={"status": item.round.status, "record_hash": item.round.record_hash, "findings": item.codes},
        request_id=item.entry.request_id,
    )


def _answer_again(step: Resubmission, locked: dict[int, Round], tally: dict) -> tuple[IngestResult, list[AuditEntry]]:
    entry = step.entry
    if step.stored is not None:
        if step.stored[0] not in locked:  # its key stays while its month is archived: MonthArchived
            partitions.refuse_if_month_archived(step.stored[1])
        existing = locked[step.stored[0]]
    else:  # written earlier in this transaction: ours, no lock needed
        existing = Round.objects.get(pk=step.new.round.pk, gaming_day=step.new.gaming_day)
    digest = entry.digest or record_hash(entry.record)
    outcome, said = resubmission(entry.table, existing, digest, entry.body, entry.request_id, tally)
    return IngestResult(_round_read(existing.pk), outcome), said


def _round_read(pk: int) -> Round:
    return round_detail(round_pk=pk)


_COMBINER = Combiner(store=lambda entries, **kwargs: ingest_each(entries, **kwargs))
