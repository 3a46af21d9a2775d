"""Migration operations: changes Django would make at a cost the change does not need, and the
database's guard of a dual-control request, written once for every kind of request."""

from __future__ import annotations

from django.db import migrations


class DropFieldIndex(migrations.AlterField):
    """A foreign key loses its own index (``db_index=False``) and nothing else.

    Django's AlterField drops a foreign key's constraint and adds it again for
    any change of the field, and adding it checks every row of the table while
    writers wait. On PostgreSQL this drops only the index (a partitioned
    table's with its partitions'); elsewhere (SQLite, which rebuilds the table
    anyway) it is Django's AlterField.
    """

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        model = from_state.apps.get_model(app_label, self.model_name)
        column = model._meta.get_field(self.name).column
        name = schema_editor._create_index_name(model._meta.db_table, [column])
        # Without IF EXISTS: an index not where this expects it is a mistake to see.
        schema_editor.execute(
            schema_editor._delete_index_sql(model, name, sql="DROP INDEX %(name)s")
        )
        return None

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            return super().database_backwards(app_label, schema_editor, from_state, to_state)
        model = to_state.apps.get_model(app_label, self.model_name)
        field = model._meta.get_field(self.name)
        schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))
        return None


def decided_once(*, table: str, function: str, what: str, decision: tuple[str, ...]) -> migrations.RunPython:
    """The guard of a dual-control request (``infra.models.SecondApproval``) on PostgreSQL.

    Before the decision only the decision's own columns (``decision``) may change (the generic
    guard of audit 0010, ``table_audit_refuse_other_changes``, keeps what was asked and who asked);
    after it nothing does (``function``, whose refusal names the request as ``what``); it is never
    deleted, and its table is never truncated. Elsewhere (SQLite) nothing.
    """
    decided_once_sql = f"""
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
BEGIN
    IF OLD.state <> 'pending' THEN
        RAISE EXCEPTION '{what} % was % already: a decision is never changed', OLD.id, OLD.state
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

    def forwards(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        schema_editor.execute(decided_once_sql, params=None)
        arguments = ", ".join(f"'{column}'" for column in decision)
        schema_editor.execute(
            f"CREATE TRIGGER {table}_changes_allowed BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_other_changes({arguments})", params=None)
        schema_editor.execute(
            f"CREATE TRIGGER {table}_decided_once BEFORE UPDATE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()", params=None)
        schema_editor.execute(
            f"CREATE TRIGGER {table}_never_truncated BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION table_audit_refuse_change()", params=None)

    def backwards(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for name in ("changes_allowed", "decided_once", "never_truncated"):
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_{name} ON {table}", params=None)
        schema_editor.execute(f"DROP FUNCTION IF EXISTS {function}()", params=None)

    return migrations.RunPython(forwards, backwards)
