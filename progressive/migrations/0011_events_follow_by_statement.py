"""Each ledger event follows the one before it, checked once per INSERT statement.

``0010_each_event_follows_the_last`` checked it with a deferred trigger per
event row, and every row's check ran at the commit with the pools' and the
audit head's locks held; a batch writes hundreds of events. The same rule as
one query over the statement's new rows (a transition table), as soon as the
statement ends: its events are written in ``seq`` order, so each one's
predecessor is in the table by then, stored before or written by the same
statement.
"""

from django.db import migrations

FORWARD = """
DROP TRIGGER IF EXISTS meter_event_follows_the_last ON progressive_meterevent;
DROP FUNCTION IF EXISTS progressive_meter_event_follows_the_last();
CREATE FUNCTION progressive_meter_events_follow_the_last() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    wrong record;
BEGIN
    SELECT added.pool_id, added.seq INTO wrong
        FROM added LEFT JOIN progressive_meterevent before
            ON before.pool_id = added.pool_id AND before.seq = added.seq - 1
        WHERE added.seq < 1
           OR (added.seq > 1 AND before.seq IS NULL)
           OR (added.meter_after, added.overflow_after, added.reserve_after) IS DISTINCT FROM
              (COALESCE(before.meter_after, 0) + added.delta,
               COALESCE(before.overflow_after, 0) + added.overflow_delta,
               COALESCE(before.reserve_after, 0) + added.reserve_delta)
        LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'event % of pool % does not follow from the event before it and its deltas',
            wrong.seq, wrong.pool_id
            USING ERRCODE = 'integrity_constraint_violation',
                  HINT = 'a meter moves only through progressive.ledger';
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER meter_events_follow_the_last
    AFTER INSERT ON progressive_meterevent REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION progressive_meter_events_follow_the_last();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS meter_events_follow_the_last ON progressive_meterevent;
DROP FUNCTION IF EXISTS progressive_meter_events_follow_the_last();
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FORWARD, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BACKWARD, params=None)
        # The row-by-row check of 0010 back.
        module = __import__("progressive.migrations.0010_each_event_follows_the_last", fromlist=["FUNCTION"])
        schema_editor.execute(module.FUNCTION, params=None)


class Migration(migrations.Migration):
    dependencies = [("progressive", "0010_each_event_follows_the_last")]
    operations = [migrations.RunPython(forwards, backwards)]
