"""The cage's counts of each table's day (audit.TableCount): written once, as every record of what happened.

On PostgreSQL no count is changed or deleted, and the table is never emptied:
a correction is a new count that replaces the last (audit.counts).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


TABLE = "audit_tablecount"


def protected(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"CREATE TRIGGER {TABLE}_append_only BEFORE UPDATE OR DELETE ON {TABLE} "
                          "FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_change()", params=None)
    schema_editor.execute(f"CREATE TRIGGER {TABLE}_never_truncated BEFORE TRUNCATE ON {TABLE} "
                          "FOR EACH STATEMENT EXECUTE FUNCTION table_audit_refuse_change()", params=None)


def unprotected(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in ("append_only", "never_truncated"):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_{name} ON {TABLE}", params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0022_notices_every_five_minutes'),
        ('rounds', '0025_finding_cases'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='TableCount',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('gaming_day', models.DateField()),
                ('currency', models.CharField(max_length=3)),
                ('drop', models.DecimalField(decimal_places=2, max_digits=20)),
                ('fills', models.DecimalField(decimal_places=2, max_digits=20)),
                ('credits', models.DecimalField(decimal_places=2, max_digits=20)),
                ('opening_inventory', models.DecimalField(decimal_places=2, max_digits=20)),
                ('closing_inventory', models.DecimalField(decimal_places=2, max_digits=20)),
                ('source', models.CharField(choices=[('entered', 'Entered'), ('imported', 'Imported')], max_length=8)),
                ('note', models.TextField(blank=True)),
                ('entered_by_name', models.CharField(max_length=150)),
                ('entered_at', models.DateTimeField(auto_now_add=True)),
                ('entered_by', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('replaces', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='replaced_by', to='audit.tablecount')),
                ('table', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='counts', to='rounds.table')),
            ],
            options={
                'ordering': ['-gaming_day', 'table', '-id'],
                'indexes': [models.Index(fields=['gaming_day', 'table'], name='count_day_table_idx')],
            },
        ),
        migrations.RunPython(protected, unprotected),
    ]
