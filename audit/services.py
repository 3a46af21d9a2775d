"""Writing to the audit log. Call inside the transaction of the change it records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone
import json

from .chain import event_hash
from .models import AuditEvent, ChainHead


@dataclass(frozen=True, slots=True)
class Actor:
    kind: str
    id: str = ""
    name: str = ""

    @classmethod
    def of_user(cls, user) -> "Actor":
        if user is None or not getattr(user, "is_authenticated", False):
            return SYSTEM
        return cls(AuditEvent.ActorKind.USER, str(user.pk), user.get_username())

    @classmethod
    def of_table(cls, table) -> "Actor":
        return cls(AuditEvent.ActorKind.TABLE, table.code, table.code)


SYSTEM = Actor(AuditEvent.ActorKind.SYSTEM, "", "system")


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
    if obj is not None:
        object_type = object_type or obj._meta.label_lower
        object_id = object_id or str(obj.pk)
        object_repr = object_repr or str(obj)[:200]
    with transaction.atomic():
        head, _ = ChainHead.objects.select_for_update().get_or_create(pk=1)
        fields = {
            "seq": head.seq + 1,
            "at": timezone.now(),
            "actor_kind": actor.kind,
            "actor_id": actor.id,
            "actor_name": actor.name[:150],
            "action": action,
            "object_type": object_type,
            "object_id": object_id,
            "object_repr": object_repr[:200],
            "before": _jsonable(before),
            "after": _jsonable(after),
            "request_id": request_id,
            "prev_hash": head.hash,
        }
        event = AuditEvent.objects.create(**fields, hash=event_hash(fields))
        head.seq, head.hash = event.seq, event.hash
        head.save(update_fields=["seq", "hash"])
    return event
