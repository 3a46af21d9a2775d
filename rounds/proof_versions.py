"""Configuration versions held to what the audit chain recorded when each was made.

A version's numbers judge every round dealt under it, and the row can be
edited by whoever can pass the database's triggers: pay a straight 100:1
and every round paid so is ``verified`` again. The chain recorded each
version's numbers as it was made (``config.version_created``, whose
snapshot is ``rounds.services.configs.config_version_snapshot``); the
versions the migrations ship, made before anyone could write the chain, are
recorded on the ``migrate`` that makes them (``config.version_recorded``,
``config_versions_record``). ``config_versions_differences`` names every
version whose row says otherwise, field by field, and every version the
chain never recorded; ``config_versions_recorded`` gives the recorded
numbers, which the re-derivation of stored rounds judges by.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction

from audit.models import AuditEvent
from audit.services import SYSTEM, audit_record
from rounds.engine.rules import STORED_TYPES, TABLE_NUMBERS, TableRules, table_rules
from rounds.models import TableConfigVersion
from rounds.services.configs import config_version_snapshot

RECORDED = ("config.version_created", "config.version_recorded")


@dataclass(frozen=True, slots=True)
class VersionDifference:
    version_pk: int
    version: str  # "se-50kr v1"
    field: str  # "" when the chain never recorded the version
    stored: object
    recorded: object

    def __str__(self) -> str:
        if not self.field:
            return f"configuration {self.version} (#{self.version_pk}): the audit chain never recorded it"
        return (f"configuration {self.version} (#{self.version_pk}): {self.field} stored {_text(self.stored)}, "
                f"the chain recorded {_text(self.recorded)}")


def config_versions_recorded() -> dict[int, dict]:
    """Each version's snapshot as the chain last recorded it, by the version's pk: one read."""
    events = (
        AuditEvent.objects.filter(action__in=RECORDED, object_type=TableConfigVersion._meta.label_lower)
        .order_by("seq").values_list("object_id", "after")
    )
    return {int(pk): after for pk, after in events.iterator(chunk_size=1000) if pk.isdigit() and after}


def config_versions_differences(*, recorded: dict[int, dict] | None = None) -> Iterator[VersionDifference]:
    recorded = config_versions_recorded() if recorded is None else recorded
    for version in TableConfigVersion.objects.select_related("config", "pool").order_by("pk"):
        snapshot = recorded.get(version.pk)
        if snapshot is None:
            yield VersionDifference(version.pk, str(version), "", None, None)
            continue
        stored = _as_recorded(config_version_snapshot(version))
        # The chain may say more of a version (who asked for it, who approved it): each of the
        # version's own fields is held to what it recorded.
        for field in sorted(stored):
            if not _same(stored.get(field), snapshot.get(field)):
                yield VersionDifference(version.pk, str(version), field, stored.get(field), snapshot.get(field))


def config_rules_recorded(snapshot: dict) -> TableRules:
    """The rules a version's recorded snapshot gives: what its rounds are judged by."""
    numbers = {}
    for name in TABLE_NUMBERS:
        value = snapshot[name]
        if STORED_TYPES[name].startswith("Decimal") and value is not None:
            value = Decimal(str(value))
        numbers[name] = value
    return table_rules(numbers)


def config_versions_record(**_signal) -> int:
    """Record in the chain each version it does not hold yet (connected to ``post_migrate``).

    The migrations' own versions are made where no chain writer runs; this
    records them on the ``migrate`` that made them. Any other version is
    recorded by ``config_version_create`` as it is made, so this finds it
    recorded already.
    """
    recorded = set(
        AuditEvent.objects.filter(action__in=RECORDED, object_type=TableConfigVersion._meta.label_lower)
        .values_list("object_id", flat=True)
    )
    made = 0
    with transaction.atomic():
        for version in TableConfigVersion.objects.select_related("pool").order_by("pk"):
            if str(version.pk) in recorded:
                continue
            audit_record(actor=SYSTEM, action="config.version_recorded", obj=version,
                         after=config_version_snapshot(version))
            made += 1
    return made


def _as_recorded(snapshot: dict) -> dict:
    # The same encoding the audit log gave the snapshot when it wrote it.
    return json.loads(json.dumps(snapshot, cls=DjangoJSONEncoder))


def _same(stored: object, recorded: object) -> bool:
    """Equal as numbers, moments or pay tables, whatever spelling each took (a column of four
    decimals reads 0.01 as 0.0100; a moment comes back in UTC)."""
    if isinstance(stored, dict) and isinstance(recorded, dict):
        return stored.keys() == recorded.keys() and all(_same(stored[k], recorded[k]) for k in stored)
    if isinstance(stored, str) and isinstance(recorded, str) and stored != recorded:
        for read in (Decimal, datetime.fromisoformat):
            try:
                return read(stored) == read(recorded)
            except (InvalidOperation, ValueError):
                continue
    return type(stored) is type(recorded) and stored == recorded


def _text(value: object) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, dict) else str(value)
