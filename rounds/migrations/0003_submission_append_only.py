"""On PostgreSQL the database refuses UPDATE and DELETE of stored request bodies."""

from django.db import migrations

CREATE_TRIGGER = """
CREATE TRIGGER rounds_submission_append_only BEFORE UPDATE OR DELETE ON rounds_submission
    FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_change();
"""
DROP = "DROP TRIGGER IF EXISTS rounds_submission_append_only ON rounds_submission;"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE_TRIGGER, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("rounds", "0002_shipped_configs"), ("audit", "0003_append_only_triggers")]
    operations = [migrations.RunPython(forwards, backwards)]
