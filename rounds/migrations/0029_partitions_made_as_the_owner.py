"""A month's round partitions, made as the owner for a role that owns nothing.

The application's role holds no DDL (``trail.privileges``), and making a
partition is DDL, which PostgreSQL allows only a table's owner. The daily
schedule makes them (``rounds.partitions``), so it asks this function, which
runs with its owner's rights (SECURITY DEFINER) and can do one thing: give
rounds and seats a partition for the month of a date, where none exists,
with the TRUNCATE refusal every partition carries. Its search path is fixed,
so no object the caller makes can stand in for one it names.

Only the owner, and the role ``migrate`` grants it to, may call it.
"""

from django.db import migrations

FUNCTION = "table_audit_round_partitions_make"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT quote_ident(current_schema())")
        schema = cursor.fetchone()[0]
    # pg_temp named last: otherwise a caller's temporary table would be found first.
    schema_editor.execute(f"""
        CREATE FUNCTION {FUNCTION}(day date) RETURNS boolean
        LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = {schema}, pg_temp
        AS $$
        DECLARE
            first date := date_trunc('month', day)::date;
            after date := (date_trunc('month', day) + interval '1 month')::date;
            parent text;
            partition text;
            made boolean := false;
        BEGIN
            IF to_regclass('rounds_round_p' || to_char(first, 'YYYYMM')) IS NOT NULL
               AND to_regclass('rounds_seat_p' || to_char(first, 'YYYYMM')) IS NOT NULL THEN
                RETURN false;
            END IF;
            -- Makers take turns here (self-conflicting, not in readers' or writers' way);
            -- the lock also brings this session's catalog up to date.
            LOCK TABLE rounds_round IN SHARE UPDATE EXCLUSIVE MODE;
            FOREACH parent IN ARRAY ARRAY['rounds_round', 'rounds_seat'] LOOP
                partition := parent || '_p' || to_char(first, 'YYYYMM');
                IF to_regclass(partition) IS NULL THEN
                    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                                   partition, parent, first, after);
                    IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = parent || '_never_truncated'
                               AND NOT tgisinternal) THEN
                        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT '
                                       'EXECUTE FUNCTION table_audit_refuse_change()',
                                       partition || '_never_truncated', partition);
                    END IF;
                    made := true;
                END IF;
            END LOOP;
            RETURN made;
        END
        $$
    """, params=None)
    schema_editor.execute(f"REVOKE ALL ON FUNCTION {FUNCTION}(date) FROM PUBLIC", params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP FUNCTION IF EXISTS {FUNCTION}(date)", params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('rounds', '0028_late_rounds_by_receipt'),
        ('audit', '0010_records_protected'),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
