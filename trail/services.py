"""Writing to the audit log. Call inside the transaction of the change it records.

Every writer locks the chain's single head row, appends after it and moves it,
so the events form one unbroken hash chain in ``seq`` order. That lock is the
one place every write of the service queues, so it is held as briefly as the
chain allows: the head is read and locked in one statement, and the events and
the head's new tip are written in one more.
"""

from __future__ import annotations

import getpass
import json
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.utils import timezone

from infra import locks, sql
from infra.rows import new_row

from .chain import event_hash
from .models import AuditEvent, ChainHead


@dataclass(frozen=True, slots=True)
class Actor:
    kind: str
    id: str = ""
    name: str = ""

    @classmethod
    def of_user(cls, user) -> Actor:
        if user is None or not getattr(user, "is_authenticated", False):
            return SYSTEM
        return cls(AuditEvent.ActorKind.USER, str(user.pk), user.get_username())

    @classmethod
    def of_command(cls, command: str) -> Actor:
        """A ``manage.py`` command run at a shell: no person it proved, so the trail names the
        command and the login that ran it, never someone the command was told to be."""
        try:
            login = getpass.getuser()
        except (KeyError, OSError):  # no name for the uid in this container
            login = f"uid {os.getuid()}"
        return cls(AuditEvent.ActorKind.SYSTEM, "", f"manage.py {command} (by {login} on {platform.node()})"[:150])

    @classmethod
    def of_table(cls, table) -> Actor:
        return cls(AuditEvent.ActorKind.TABLE, table.code, table.code)

    @property
    def user_id(self) -> int | None:
        """The person's user id; ``None`` for a table or the system."""
        return int(self.id) if self.kind == AuditEvent.ActorKind.USER and self.id else None


SYSTEM = Actor(AuditEvent.ActorKind.SYSTEM, "", "system")


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One event to append: ``audit_record``'s arguments, for ``audit_record_many``."""

    actor: Actor
    action: str
    obj: Any = None
    object_type: str = ""
    object_id: str = ""
    object_repr: str = ""
    before: Any = None
    after: Any = None
    request_id: str = ""


def _jsonable(value: Any) -> Any:
    # Round-trip through the encoder so the hash sees exactly what the row stores.
    return None if value is None else json.loads(json.dumps(value, cls=DjangoJSONEncoder))


def audit_record(
    *,
    actor: Actor,
    action: str,
    obj: Any = None,
    object_type: str = "",
    object_id: str = "",
    object_repr: str = "",
    before: Any = None,
    after: Any = None,
    request_id: str = "",
) -> AuditEvent:
    """Append one event to the chain; keep it the last write of its transaction."""
    entry = AuditEntry(actor, action, obj, object_type, object_id, object_repr, before, after, request_id)
    return audit_record_many(entries=[entry])[0]


def audit_record_many(*, entries: Sequence[AuditEntry], head: tuple[int, str] | None = None) -> list[AuditEvent]:
    """Append events to the chain in the order given, under one lock of its head.

    The last write of its transaction, as ``audit_record``: whatever the
    transaction does after it holds every other writer of the service up.
    ``head`` is the (seq, hash) a caller already read with
    ``audit_head_lock_statement`` at the end of its own last writes, saving
    the lock its own round trip.
    """
    if not entries:
        return []
    # Inside a transaction already (the usual case) a savepoint would only add
    # two round trips: any failure here rolls back the whole change anyway.
    with transaction.atomic(savepoint=False):
        seq, prev_hash = head if head is not None else _head_lock()
        events = []
        for entry in entries:
            seq += 1
            fields = _fields(entry, seq, prev_hash)
            event = new_row(AuditEvent, **fields, hash=event_hash(fields))
            events.append(event)
            prev_hash = event.hash
        _append(events)
    return events


def _fields(entry: AuditEntry, seq: int, prev_hash: str) -> dict:
    object_type, object_id, object_repr = entry.object_type, entry.object_id, entry.object_repr
    if entry.obj is not None:
        object_type = object_type or entry.obj._meta.label_lower
        object_id = object_id or str(entry.obj.pk)
        object_repr = object_repr or str(entry.obj)[:200]
    return {
        "seq": seq,
        "at": timezone.now(),
        "actor_kind": entry.actor.kind,
        "actor_id": entry.actor.id,
        "actor_name": entry.actor.name[:150],
        "action": entry.action,
        "object_type": object_type,
        "object_id": object_id,
        "object_repr": object_repr[:200],
        "before": _jsonable(entry.before),
        "after": _jsonable(entry.after),
        "request_id": entry.request_id,
        "prev_hash": prev_hash,
    }


def audit_head_lock_statement() -> sql.Statement:
    """The chain head's row lock as a statement: its one row is ``head`` for ``audit_record_many``.

    No row means the chain has no head yet; ``audit_record_many`` makes one.
    """
    if connection.vendor == "postgresql":
        return locks.raw_lock_statement("trail.ChainHead", _HEAD_LOCK, [1])
    return locks.rows_locked_statement(ChainHead.objects.filter(pk=1).values_list("seq", "hash"), [1])


_HEAD_LOCK = sql.raw(
    f'SELECT "seq", "hash" FROM "{ChainHead._meta.db_table}" WHERE "id" = 1 FOR UPDATE',
    returns_rows=True, prepare=True,
)
_HEAD_MOVE = f'UPDATE "{ChainHead._meta.db_table}" SET "seq" = %s, "hash" = %s WHERE "id" = 1'



def _head_lock() -> tuple[int, str]:
    [rows] = sql.run([audit_head_lock_statement()])
    if not rows:
        # A database flushed by a test, or one migrated without data: start the chain.
        ChainHead.objects.get_or_create(pk=1)
        [rows] = sql.run([audit_head_lock_statement()])
    return rows[0]


def _append(events: list[AuditEvent]) -> None:
    """Insert the events and move the head to the last, in one round trip on PostgreSQL."""
    last = events[-1]
    inserts = sql.insert(AuditEvent, events, returning="id")
    if connection.vendor == "postgresql" and len(inserts) == 1:
        # One statement, so one round trip: a data-modifying WITH always runs to
        # completion, and if the insert fails the head does not move either.
        statement = sql.raw(
            f"WITH appended AS ({inserts[0].sql}) {_HEAD_MOVE} "
            "RETURNING (SELECT array_agg(id) FROM appended)",
            inserts[0].params + (last.seq, last.hash),
            returns_rows=True, prepare=True,
        )
        [[(ids,)]] = sql.run([statement])
    else:
        move_head = sql.update(ChainHead.objects.filter(pk=1), seq=last.seq, hash=last.hash)
        results = sql.run([*inserts, move_head])
        ids = sorted(row[0] for rows in results[:-1] for row in rows)
    # One writer at a time (the head's lock), so the ids ascend with seq.
    for event, pk in zip(events, sorted(ids)):
        event.pk = event.id = pk
        event._state.adding = False
        event._state.db = "default"
