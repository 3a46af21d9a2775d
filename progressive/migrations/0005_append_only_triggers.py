"""On PostgreSQL the database itself refuses UPDATE and DELETE of ledger rows,
pool versions and meter readings (``audit``'s shared refusal function).

The pool row is not among them: its meter is the ledger's running total and
moves with every event. SQLite, the development default, relies on the
models' own refusal.
"""

from django.db import migrations

TABLES = ("progressive_meterevent", "progressive_poolversion", "progressive_meterreading")


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        schema_editor.execute(
            f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_change();",
            params=None,
        )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table};", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("progressive", "0004_readings_tolerance_adjust_permission"),
        ("audit", "0003_append_only_triggers"),
    ]
    operations = [migrations.RunPython(forwards, backwards)]
