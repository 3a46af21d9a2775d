"""Archived months: a month's rounds and seats detached from their tables, and refused while they are away.

On PostgreSQL the default partition of rounds and of seats refuses a row
whose gaming day lies in an archived month. Without this, a late round of a
month whose partition was detached would land in the default partition,
unseen by anyone reading the month, and would then stop the month's
partition from being attached again (PostgreSQL refuses to attach a range
the default partition holds rows of). The check runs on the default
partitions only, so a round of a month that has its partition pays nothing.

The refusal is a check violation naming ``ARCHIVED_MONTH_REFUSED``, which the
ingest turns into a clear answer (``rounds.partitions.MonthArchived``).
SQLite (the development default) is not partitioned: nothing to refuse.
"""

import django.utils.timezone
from django.db import migrations, models

ARCHIVED_MONTH_REFUSED = "rounds_archived_month_refused"
DEFAULTS = ("rounds_round_default", "rounds_seat_default")

FUNCTION = f"""
CREATE OR REPLACE FUNCTION rounds_refuse_archived_month() RETURNS trigger AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM rounds_archivedmonth WHERE month = date_trunc('month', NEW.gaming_day)::date) THEN
        RAISE EXCEPTION 'gaming day % lies in %, an archived month', NEW.gaming_day, to_char(NEW.gaming_day, 'YYYY-MM')
            USING ERRCODE = 'check_violation', CONSTRAINT = '{ARCHIVED_MONTH_REFUSED}',
                  DETAIL = to_char(NEW.gaming_day, 'YYYY-MM');
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def _partitioned(cursor) -> bool:
    cursor.execute("SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass('rounds_round')")
    return cursor.fetchone() is not None


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if not _partitioned(cursor):
            return
    schema_editor.execute(FUNCTION, params=None)
    for table in DEFAULTS:
        schema_editor.execute(
            f"CREATE TRIGGER {table}_not_archived BEFORE INSERT OR UPDATE OF gaming_day ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION rounds_refuse_archived_month()", params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in DEFAULTS:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_not_archived ON {table}", params=None)
    schema_editor.execute("DROP FUNCTION IF EXISTS rounds_refuse_archived_month()", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("rounds", "0016_dealt_in_future"),
    ]

    operations = [
        migrations.CreateModel(
            name="ArchivedMonth",
            fields=[
                ("month", models.DateField(primary_key=True, serialize=False)),
                ("detached_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("rounds", models.PositiveBigIntegerField(blank=True, null=True)),
                ("seats", models.PositiveBigIntegerField(blank=True, null=True)),
                ("manifest_sha256", models.CharField(blank=True, max_length=64)),
                ("dumped_to", models.CharField(blank=True, max_length=1024)),
            ],
            options={"ordering": ["month"]},
        ),
        migrations.RunPython(forwards, backwards),
    ]
