"""On PostgreSQL the database itself refuses UPDATE and DELETE of audit events.

The refusal function is shared by every append-only table (rounds and
progressive add their own triggers with it). SQLite, the development default,
relies on the models' own refusal.
"""

from django.db import migrations

CREATE_FUNCTION = """
CREATE OR REPLACE FUNCTION table_audit_refuse_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% on % refused: rows of this table are never changed', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""
CREATE_TRIGGER = """
CREATE TRIGGER audit_auditevent_append_only BEFORE UPDATE OR DELETE ON audit_auditevent
    FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_change();
"""
DROP = """
DROP TRIGGER IF EXISTS audit_auditevent_append_only ON audit_auditevent;
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE_FUNCTION, params=None)
        schema_editor.execute(CREATE_TRIGGER, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("audit", "0002_chain_head")]
    operations = [migrations.RunPython(forwards, backwards)]
