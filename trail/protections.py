"""The database's protections of what happened, declared once, and the check that each is in force.

The triggers that refuse UPDATE, DELETE and TRUNCATE of the records (audit
migrations 0003, 0010 and 0023, progressive 0005, 0012 and 0014, rounds 0003, 0009 and 0023)
the ones that keep a pool's meter equal to its ledger (progressive 0008,
0011), an archived month out of the default partitions (rounds 0017) and the
one that writes on each audit event which connection wrote it (trail 0002) are
raw SQL in migrations. A trigger dropped or disabled by anyone
with the owner's rights leaves no trace in the data, and every write goes on
succeeding: nothing would say the protection is gone. So the list of what
must be there lives here, and ``protections_missing`` compares it with
``pg_trigger``; ``verify_audit`` and ``manage.py check --deploy`` both run it.

A test (tests/audit/test_protections.py) holds this list equal to the
triggers a migrated database has, both ways: a protection added by a
migration and not declared here fails it, as does one declared and never made.

PostgreSQL only: SQLite, the development default, has none of these triggers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Table → the triggers the migrations give it. Every one is a protection:
# a refusal of change (``*_append_only``, ``*_changes_allowed``,
# ``*_decided_once``), of TRUNCATE (``*_never_truncated``), the ledger's
# own checks at each commit, or the database's account of an event's writer
# (``audit_auditevent_origin_stamped``).
PROTECTIONS: dict[str, tuple[str, ...]] = {
    "audit_auditevent": (
        "audit_auditevent_append_only", "audit_auditevent_never_truncated", "audit_auditevent_origin_stamped",
    ),
    "audit_chainhead": ("audit_chainhead_never_truncated",),
    "audit_tablecount": ("audit_tablecount_append_only", "audit_tablecount_never_truncated"),
    "audit_variancefinding": ("audit_variancefinding_changes_allowed", "audit_variancefinding_never_truncated"),
    "progressive_meteradjustmentrequest": (
        "progressive_meteradjustmentrequest_changes_allowed",
        "progressive_meteradjustmentrequest_decided_once",
        "progressive_meteradjustmentrequest_never_truncated",
    ),
    "progressive_meterevent": (
        "meter_event_moves_its_pool", "meter_events_follow_the_last",
        "progressive_meterevent_append_only", "progressive_meterevent_never_truncated",
    ),
    "progressive_meterreading": ("progressive_meterreading_append_only", "progressive_meterreading_never_truncated"),
    "progressive_pool": ("pool_meter_is_its_ledger", "progressive_pool_never_truncated"),
    "progressive_poolversion": ("progressive_poolversion_append_only", "progressive_poolversion_never_truncated"),
    "progressive_poolversionrequest": (
        "progressive_poolversionrequest_changes_allowed",
        "progressive_poolversionrequest_decided_once",
        "progressive_poolversionrequest_never_truncated",
    ),
    "rounds_configversionrequest": (
        "rounds_configversionrequest_changes_allowed",
        "rounds_configversionrequest_decided_once",
        "rounds_configversionrequest_never_truncated",
    ),
    "rounds_finding": ("rounds_finding_changes_allowed", "rounds_finding_never_truncated"),
    "rounds_round": ("rounds_round_changes_allowed", "rounds_round_never_truncated"),
    "rounds_lateround": ("rounds_lateround_append_only", "rounds_lateround_never_truncated"),
    "rounds_roundkey": ("rounds_roundkey_append_only", "rounds_roundkey_never_truncated"),
    "rounds_seat": ("rounds_seat_changes_allowed", "rounds_seat_never_truncated"),
    "rounds_submission": ("rounds_submission_append_only", "rounds_submission_never_truncated"),
    "rounds_tableconfigversion": (
        "rounds_tableconfigversion_append_only", "rounds_tableconfigversion_never_truncated",
    ),
}

# Partitioned tables: each partition (each month's and the default) carries
# its parent's row trigger, cloned by PostgreSQL, and a TRUNCATE refusal of
# its own (``infra.partitioning`` makes it), since emptying one partition
# directly passes the parent's.
PARTITIONED = {
    "rounds_round": "rounds_round_changes_allowed",
    "rounds_seat": "rounds_seat_changes_allowed",
}
# The default partitions also refuse a row of an archived month (rounds migration 0017).
DEFAULT_PARTITION = {
    "rounds_round_default": ("rounds_round_default_not_archived",),
    "rounds_seat_default": ("rounds_seat_default_not_archived",),
}
_DETACHED_MONTH = re.compile(rf"(?:{'|'.join(PARTITIONED)})_p[0-9]{{6}}")


@dataclass(frozen=True, slots=True)
class MissingProtection:
    table: str
    trigger: str
    problem: str  # "missing" or "disabled"

    def __str__(self) -> str:
        return f"{self.table}: trigger {self.trigger} is {self.problem}"


def protections_expected(cursor) -> dict[str, tuple[str, ...]]:
    """Every table that must be protected, partitions as they are now included, and its triggers."""
    expected = dict(PROTECTIONS)
    for parent, row_trigger in PARTITIONED.items():
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = to_regclass(%s) ORDER BY c.relname", [parent])
        for (partition,) in cursor.fetchall():
            expected[partition] = (row_trigger, f"{partition}_never_truncated", *DEFAULT_PARTITION.get(partition, ()))
    return expected


def protections_missing(connection) -> list[MissingProtection]:
    """Each declared trigger that is not there, or is there but disabled; empty when all hold.

    ``tgenabled = 'D'`` is ``ALTER TABLE … DISABLE TRIGGER``. A session that
    sets ``session_replication_role = replica`` (a restore, the tests' flush)
    passes the triggers for itself only and changes nothing here: the
    catalog is what every other session will meet.
    """
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        expected = protections_expected(cursor)
        found = _triggers(cursor)
    missing = []
    for table, triggers in sorted(expected.items()):
        for trigger in triggers:
            enabled = found.get((table, trigger))
            if enabled is None:
                missing.append(MissingProtection(table, trigger, "missing"))
            elif enabled == "D":
                missing.append(MissingProtection(table, trigger, "disabled"))
    return missing


def protections_undeclared(connection) -> list[tuple[str, str]]:
    """Triggers of the database that ``PROTECTIONS`` does not name: a protection nobody checks.

    A month's table detached for archiving (``rounds.services.archives``)
    keeps its own TRUNCATE refusal and is no partition any more: not counted.
    """
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        expected = protections_expected(cursor)
        found = _triggers(cursor)
    return [(table, trigger) for table, trigger in sorted(found)
            if trigger not in expected.get(table, ())
            and not (table not in expected and _DETACHED_MONTH.fullmatch(table))]


def _triggers(cursor) -> dict[tuple[str, str], str]:
    """Every trigger of this schema's tables but PostgreSQL's own: ``(table, trigger) -> tgenabled``."""
    cursor.execute(
        "SELECT c.relname, t.tgname, t.tgenabled FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace")
    return {(table, trigger): enabled for table, trigger, enabled in cursor.fetchall()}
