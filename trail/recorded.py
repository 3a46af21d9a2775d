"""A version's row held to what the audit chain recorded of it when it was made.

Versions (a table configuration's, a pool's) are what rounds are judged and
paid by. Their rows are append-only in the database, but whoever passes its
triggers can still edit one; the chain recorded each version's numbers as it
was made (a snapshot in its event), and the chain proves itself. This is the
comparison both kinds share: the snapshots the chain holds, each row's own
fields against its snapshot, and the spelling that tells an edit from a
number written two ways.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction

from .models import AuditEvent
from .services import SYSTEM, audit_record


@dataclass(frozen=True, slots=True)
class VersionDifference:
    kind: str  # "configuration", "pool"
    version_pk: int
    version: str  # "se-50kr v1"
    field: str  # "" when the chain never recorded the version
    stored: object
    recorded: object

    def __str__(self) -> str:
        where = f"{self.kind} {self.version} (#{self.version_pk})"
        if not self.field:
            return f"{where}: the audit chain never recorded it"
        return f"{where}: {self.field} stored {text(self.stored)}, the chain recorded {text(self.recorded)}"


def snapshots_recorded(*, object_type: str, actions: Iterable[str]) -> dict[int, dict]:
    """Each object's snapshot (its event's ``after``) as the chain last recorded it, by pk: one read."""
    events = (
        AuditEvent.objects.filter(action__in=list(actions), object_type=object_type)
        .order_by("seq").values_list("object_id", "after")
    )
    return {int(pk): after for pk, after in events.iterator(chunk_size=1000) if pk.isdigit() and after}


def versions_differences(*, kind: str, versions: Iterable, snapshot: Callable[[object], dict],
                         recorded: dict[int, dict]) -> Iterator[VersionDifference]:
    """Each of ``versions`` the chain never recorded, and each field of its snapshot that differs."""
    for version in versions:
        said = recorded.get(version.pk)
        if said is None:
            yield VersionDifference(kind, version.pk, str(version), "", None, None)
            continue
        stored = as_recorded(snapshot(version))
        # The chain may say more of a version (who asked for it, who approved it): each of the
        # version's own fields is held to what it recorded.
        for field in sorted(stored):
            if not same(stored.get(field), said.get(field)):
                yield VersionDifference(kind, version.pk, str(version), field, stored.get(field), said.get(field))


def versions_record(*, versions: Iterable, snapshot: Callable[[object], dict], action: str,
                    recorded: Iterable[int]) -> int:
    """Record in the chain each of ``versions`` whose pk is not in ``recorded``; how many.

    For the versions the migrations ship, made where no chain writer runs: each
    app records them on the ``migrate`` that made them (``post_migrate``). Every
    other version is recorded by the service that makes it, so is found here.
    """
    recorded = set(recorded)
    made = 0
    with transaction.atomic():
        for version in versions:
            if version.pk in recorded:
                continue
            audit_record(actor=SYSTEM, action=action, obj=version, after=snapshot(version))
            made += 1
    return made


def as_recorded(snapshot: dict) -> dict:
    # The same encoding the audit log gave the snapshot when it wrote it.
    return json.loads(json.dumps(snapshot, cls=DjangoJSONEncoder))


def same(stored: object, recorded: object) -> bool:
    """Equal as numbers, moments or pay tables, whatever spelling each took (a column of four
    decimals reads 0.01 as 0.0100; a moment comes back in UTC)."""
    if isinstance(stored, dict) and isinstance(recorded, dict):
        return stored.keys() == recorded.keys() and all(same(stored[k], recorded[k]) for k in stored)
    if isinstance(stored, list) and isinstance(recorded, list):
        return len(stored) == len(recorded) and all(same(a, b) for a, b in zip(stored, recorded, strict=True))
    if isinstance(stored, str) and isinstance(recorded, str) and stored != recorded:
        for read in (Decimal, datetime.fromisoformat):
            try:
                return read(stored) == read(recorded)
            except (InvalidOperation, ValueError):
                continue
    return type(stored) is type(recorded) and stored == recorded


def text(value: object) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
