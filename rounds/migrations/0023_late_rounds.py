"""Rounds stored after their gaming day ended, written with them: what makes a day's report stale.

Append-only on PostgreSQL, and never truncated: a row deleted would hide that
a report undercounts its day.
"""

import django.db.models.deletion
from django.db import migrations, models

TABLE = "rounds_lateround"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_append_only BEFORE UPDATE OR DELETE ON {TABLE} "
        "FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_change()", params=None)
    schema_editor.execute(
        f"CREATE TRIGGER {TABLE}_never_truncated BEFORE TRUNCATE ON {TABLE} "
        "FOR EACH STATEMENT EXECUTE FUNCTION table_audit_refuse_change()", params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in ("append_only", "never_truncated"):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_{name} ON {TABLE}", params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('rounds', '0022_finding_pool_off_ledger'),
        ('audit', '0010_records_protected'),
    ]

    operations = [
        migrations.CreateModel(
            name='LateRound',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('round_pk', models.BigIntegerField()),
                ('gaming_day', models.DateField()),
                ('received_at', models.DateTimeField()),
                ('table', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='rounds.table')),
            ],
            options={
                'ordering': ['gaming_day', 'received_at'],
                'indexes': [models.Index(fields=['gaming_day', 'received_at'], name='late_round_day_idx')],
            },
        ),
        migrations.RunPython(forwards, backwards),
    ]
