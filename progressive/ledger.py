"""The one way a pool's meter moves: by appending events to its ledger.

A pool's ``meter``, ``overflow``, ``reserve`` and ``last_event_seq`` are the
figures of its last ledger event, never set any other way. Every path that
moves a meter (a stored round, an opening reseed, an adjustment, an overflow
transfer, a void's reversal) builds its events with a ``LedgerDraft`` on the
row-locked pool and writes them with ``ledger_statements`` (sent with a
round's other writes) or ``ledger_write`` (a person's change, at once): the
events' INSERT and the pool's UPDATE to the last one's figures, together.
The pool's figures are copied from its last event, never computed apart.

On PostgreSQL the database holds every path to this: deferred constraint
triggers refuse to commit a transaction after which a pool's figures differ
from its last event's (migration ``0008_meter_is_its_ledger``) or an event
does not follow from the one before it (``0011_events_follow_by_statement``),
so a raw ``UPDATE`` of a meter, an event written without moving its pool, or
an event with made-up figures and its pool set to match never lands.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import connection
from django.utils import timezone

from game.progressive import MeterEvent as EngineEvent
from game.vocabulary import METER_MOVES, ROUND_EVENT_KINDS
from infra import sql
from infra.models import ZERO
from infra.rows import new_row

from .models import MeterEvent, Pool

# How each kind a round makes moves the visible meter, given its (positive) amount.
ROUND_EVENT_SIGN = {kind: METER_MOVES[kind][0] for kind in ROUND_EVENT_KINDS}
# The triggers that hold a pool to its ledger: deferred to the commit even where
# a writer makes every other constraint immediate (``rounds.services.ingest``).
TRIGGERS = ("pool_meter_is_its_ledger", "meter_event_moves_its_pool")


class LedgerError(ValueError):
    """Events that do not add up: a bug in the caller, never a table's mistake."""


class LedgerDraft:
    """The next events of one row-locked pool, each starting where the last left the pool.

    The pool object moves with each event, in memory; nothing is written until
    the caller sends ``ledger_statements(draft)`` in its transaction.
    """

    def __init__(self, pool: Pool):
        self.pool = pool
        self.rows: list[MeterEvent] = []

    def add(self, kind: str, amount: Decimal, *, delta: Decimal, overflow_delta: Decimal = ZERO,
            reserve_delta: Decimal = ZERO, **columns) -> MeterEvent:
        pool = self.pool
        meter, overflow, reserve = pool.meter + delta, pool.overflow + overflow_delta, pool.reserve + reserve_delta
        row = new_row(
            MeterEvent, pool=pool, seq=pool.last_event_seq + 1, kind=kind, amount=amount, delta=delta,
            overflow_delta=overflow_delta, reserve_delta=reserve_delta, meter_after=meter,
            overflow_after=overflow, reserve_after=reserve, **columns,
        )
        pool.meter, pool.overflow, pool.reserve = meter, overflow, reserve
        pool.last_event_seq = row.seq
        self.rows.append(row)
        return row

    def add_round(self, events: Iterable[EngineEvent], round) -> list[MeterEvent]:
        """A round's events as the engine made them (each with the figures after it)."""
        added = []
        for event in events:
            pool = self.pool
            row = self.add(
                event.kind, event.amount, delta=ROUND_EVENT_SIGN[event.kind] * event.amount,
                overflow_delta=event.overflow - pool.overflow, reserve_delta=event.reserve - pool.reserve,
                round=round, seat=event.seat,
            )
            if row.meter_after != event.meter:
                raise LedgerError(f"event {event.kind} does not add up on pool {pool.code}")
            added.append(row)
        return added



@dataclass(frozen=True, slots=True)
class PoolOffLedger:
    """A pool whose row held other figures than its last ledger event: what each said."""

    pool: Pool
    held: tuple[Decimal, Decimal, Decimal, int]  # meter, overflow, reserve, last event, as the row said
    ledger: tuple[Decimal, Decimal, Decimal, int]  # the same of its last event

    def __str__(self) -> str:
        return (f"pool {self.pool.code} held meter/overflow/reserve {'/'.join(map(str, self.held[:3]))} at "
                f"event {self.held[3]}, its ledger ends at {'/'.join(map(str, self.ledger[:3]))} at event "
                f"{self.ledger[3]}")


# The hint every ledger trigger raises with (migrations 0008 and 0011).
REFUSAL_HINT = "a meter moves only through progressive.ledger"


def ledger_refused(error: BaseException) -> bool:
    """The database refused a pool's figures or events: the row was moved past the triggers,
    so what the writer drew from it does not follow its ledger."""
    diagnosis = getattr(error.__cause__, "diag", None)
    return diagnosis is not None and diagnosis.message_hint == REFUSAL_HINT


def pools_to_their_ledger(pools: dict[int, Pool]) -> list[PoolOffLedger]:
    """Each row-locked pool's figures set, in memory, to its last ledger event's; those that differed.

    The ledger is the meter; a row moved by hand past the triggers is not.
    The next events are drafted from the ledger, and the pool's UPDATE
    that goes with them puts the row back where its ledger says.
    """
    if not pools:
        return []
    last = {pk: (ZERO, ZERO, ZERO, 0) for pk in pools}
    events = (MeterEvent.objects.filter(pool_id__in=list(pools)).order_by("pool_id", "-seq")
              .distinct("pool_id") if connection.vendor == "postgresql" else
              MeterEvent.objects.filter(pool_id__in=list(pools)).order_by("pool_id", "-seq"))
    for pool_id, meter, overflow, reserve, seq in events.values_list(
            "pool_id", "meter_after", "overflow_after", "reserve_after", "seq"):
        if last[pool_id][3] == 0:
            last[pool_id] = (meter, overflow, reserve, seq)
    off = []
    for pk, pool in pools.items():
        held = (pool.meter, pool.overflow, pool.reserve, pool.last_event_seq)
        if held != last[pk]:
            off.append(PoolOffLedger(pool, held, last[pk]))
            pool.meter, pool.overflow, pool.reserve, pool.last_event_seq = last[pk]
    return off


def ledger_statements(rows: Sequence[MeterEvent]) -> list[sql.Statement]:
    """The INSERT of ``rows`` (their pools' next events, in order) and each pool's
    UPDATE to its last row's figures: the pool takes its meter from the ledger."""
    if not rows:
        return []
    last = {row.pool_id: row for row in rows}
    now = timezone.now()
    return [*sql.insert(MeterEvent, rows), *(_pool_move(row, now) for row in last.values())]


def ledger_write(draft: LedgerDraft) -> list[MeterEvent]:
    """Write one draft now (a person's change: one pool, a few events), the events with their ids."""
    if draft.rows:
        MeterEvent.objects.bulk_create(draft.rows)
        sql.run([_pool_move(draft.rows[-1], timezone.now())])
    return draft.rows


def _pool_move(last: MeterEvent, now) -> sql.Statement:
    figures = [last.meter_after, last.overflow_after, last.reserve_after, last.seq, now, last.pool_id]
    if connection.vendor != "postgresql":
        return sql.update(Pool.objects.filter(pk=last.pool_id), meter=figures[0], overflow=figures[1],
                          reserve=figures[2], last_event_seq=figures[3], updated_at=now)
    return sql.raw(_POOL_MOVE, figures, prepare=True)


_POOL_MOVE = (
    f'UPDATE "{Pool._meta.db_table}" SET "meter" = %s, "overflow" = %s, "reserve" = %s, '
    '"last_event_seq" = %s, "updated_at" = %s WHERE "id" = %s'
)
