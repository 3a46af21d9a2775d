"""A pool version request is decided once, and what was asked never changes.

On PostgreSQL, as a meter adjustment request (0012) and a configuration
version request (rounds 0020): before the decision only the decision's own
columns may change (the generic guard of audit 0010 keeps the pool, the
numbers, the start and who asked); after it nothing does; it is never
deleted, and its table is never truncated.
"""

from django.db import migrations

TABLE = "progressive_poolversionrequest"
DECISION = ("state", "decided_by_id", "decided_by_name", "decided_at", "decision_note", "version_id")

DECIDED_ONCE = """
CREATE OR REPLACE FUNCTION progressive_pool_version_request_decided_once() RETURNS trigger AS $$
BEGIN
    IF OLD.state <> 'pending' THEN
        RAISE EXCEPTION 'pool version request % was % already: a decision is never changed',
            OLD.id, OLD.state
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(DECIDED_ONCE, params=None)
    arguments = ", ".join(f"'{column}'" for column in DECISION)
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_changes_allowed BEFORE UPDATE OR DELETE ON {TABLE} "
        f"FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_other_changes({arguments})", params=None)
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_decided_once BEFORE UPDATE ON {TABLE} "
        "FOR EACH ROW EXECUTE FUNCTION progressive_pool_version_request_decided_once()", params=None)
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_never_truncated BEFORE TRUNCATE ON {TABLE} "
        "FOR EACH STATEMENT EXECUTE FUNCTION table_audit_refuse_change()", params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in ("changes_allowed", "decided_once", "never_truncated"):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_{name} ON {TABLE}", params=None)
    schema_editor.execute("DROP FUNCTION IF EXISTS progressive_pool_version_request_decided_once()", params=None)


class Migration(migrations.Migration):

    dependencies = [
        ("progressive", "0013_pool_version_requests"),
        # table_audit_refuse_other_changes and table_audit_refuse_change
        ("audit", "0010_records_protected"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
