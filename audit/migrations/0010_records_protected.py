"""On PostgreSQL what happened can change only where a documented service changes it.

Rows of rounds, seats and findings may change only in the columns a service
changes (a round's status and void on a void or a conflict; a seat's
settlement on a void; a finding's state as auditors work it); every other
column, and every column of a configuration version, is refused, and so is
DELETE. TRUNCATE, which passes row triggers, is refused on every table that
holds what happened, the ledgers and the audit chain included (each
partition of rounds and seats too: ``infra.partitioning`` gives new ones
the same trigger). Whoever must get past this (a restore, an archive) does
so as a superuser, knowingly, and the verifications (``verify_audit``, the
nightly report) are what catch it.
"""

from django.db import migrations

# The columns each table's documented writes change; anything else is refused.
CHANGES_ALLOWED = {
    "rounds_round": ("status", "voided_at", "voided_by_id", "voided_by_name", "void_reason", "meter_after"),
    "rounds_seat": ("settled_ante", "settled_blind", "settled_play", "settled_trips", "settled_progressive"),
    "rounds_finding": ("state", "state_changed_at", "state_changed_by_id", "state_changed_by_name", "state_note"),
    "audit_variancefinding": (
        "state", "state_changed_at", "state_changed_by_id", "state_changed_by_name", "state_note",
    ),
}
APPEND_ONLY = ("rounds_tableconfigversion",)
# Every table whose rows are what happened: none is ever emptied by TRUNCATE.
TRUNCATE_REFUSED = (
    "rounds_round", "rounds_seat", "rounds_finding", "rounds_roundkey", "rounds_submission",
    "rounds_tableconfigversion", "progressive_pool", "progressive_poolversion", "progressive_meterevent",
    "progressive_meterreading", "audit_auditevent", "audit_chainhead", "audit_variancefinding",
)

FUNCTION = """
CREATE OR REPLACE FUNCTION table_audit_refuse_other_changes() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'DELETE on % refused: rows of this table are never deleted', TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    -- Every column but the ones a documented service changes (the trigger's arguments).
    IF (to_jsonb(NEW) - TG_ARGV) IS DISTINCT FROM (to_jsonb(OLD) - TG_ARGV) THEN
        RAISE EXCEPTION 'UPDATE on % refused: only % may change', TG_TABLE_NAME, array_to_string(TG_ARGV, ', ')
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def _partitions(cursor, table: str) -> list[str]:
    cursor.execute(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = %s", [table])
    return [name for (name,) in cursor.fetchall()]


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FUNCTION, params=None)
    for table, allowed in CHANGES_ALLOWED.items():
        arguments = ", ".join(f"'{column}'" for column in allowed)
        schema_editor.execute(
            f"CREATE TRIGGER {table}_changes_allowed BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_other_changes({arguments})", params=None)
    for table in APPEND_ONLY:
        schema_editor.execute(
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_change()", params=None)
    with schema_editor.connection.cursor() as cursor:
        for table in TRUNCATE_REFUSED:
            for name in (table, *_partitions(cursor, table)):
                schema_editor.execute(
                    f"CREATE TRIGGER {name}_never_truncated BEFORE TRUNCATE ON {name} "
                    "FOR EACH STATEMENT EXECUTE FUNCTION table_audit_refuse_change()", params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for table in TRUNCATE_REFUSED:
            for name in (table, *_partitions(cursor, table)):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}_never_truncated ON {name}", params=None)
    for table in APPEND_ONLY:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}", params=None)
    for table in CHANGES_ALLOWED:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_changes_allowed ON {table}", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0009_variance_test_settings"),
        ("rounds", "0013_void_wins_over_flagged"),
        ("progressive", "0010_each_event_follows_the_last"),
    ]
    operations = [migrations.RunPython(forwards, backwards)]
