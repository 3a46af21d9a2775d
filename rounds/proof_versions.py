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

from collections.abc import Iterator
from decimal import Decimal

from game.rules import STORED_TYPES, TABLE_NUMBERS, TableRules, table_rules
from rounds.models import TableConfigVersion
from rounds.services.configs import config_version_snapshot
from trail.recorded import VersionDifference, snapshots_recorded, versions_differences, versions_record

RECORDED = ("config.version_created", "config.version_recorded")


def config_versions_recorded() -> dict[int, dict]:
    """Each version's snapshot as the chain last recorded it, by the version's pk: one read."""
    return snapshots_recorded(object_type=TableConfigVersion._meta.label_lower, actions=RECORDED)


def config_versions_differences(*, recorded: dict[int, dict] | None = None) -> Iterator[VersionDifference]:
    return versions_differences(
        kind="configuration", snapshot=config_version_snapshot,
        versions=TableConfigVersion.objects.select_related("config", "pool").order_by("pk"),
        recorded=config_versions_recorded() if recorded is None else recorded,
    )


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
    """The shipped configuration versions recorded in the chain (connected to ``post_migrate``)."""
    return versions_record(
        versions=TableConfigVersion.objects.select_related("pool").order_by("pk"),
        snapshot=config_version_snapshot, action="config.version_recorded",
        recorded=config_versions_recorded(),
    )
