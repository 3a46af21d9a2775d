"""Migration operations for changes Django would make at a cost the change does not need."""

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
