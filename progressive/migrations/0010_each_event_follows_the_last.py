"""On PostgreSQL each ledger event must follow from the one before it.

``0008_meter_is_its_ledger`` holds a pool to its last event; this holds each
event to the event before it, so that the last event, and so the meter, is
the sum of every event: at the commit, an event's ``seq`` is one more than
the one before it (the first is 1), and its meter, overflow and reserve after
are the figures after the one before (zero before the first) plus its deltas.
An event with made-up figures, and the pool set to match them, never lands.
"""

from django.db import migrations

FUNCTION = """
CREATE FUNCTION progressive_meter_event_follows_the_last() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    before_meter numeric := 0;
    before_overflow numeric := 0;
    before_reserve numeric := 0;
BEGIN
    IF NEW.seq > 1 THEN
        SELECT meter_after, overflow_after, reserve_after INTO before_meter, before_overflow, before_reserve
            FROM progressive_meterevent WHERE pool_id = NEW.pool_id AND seq = NEW.seq - 1;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'event % of pool % has no event % before it', NEW.seq, NEW.pool_id, NEW.seq - 1
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
    ELSIF NEW.seq <> 1 THEN
        RAISE EXCEPTION 'the first event of pool % is %, not 1', NEW.pool_id, NEW.seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (NEW.meter_after, NEW.overflow_after, NEW.reserve_after) IS DISTINCT FROM
            (before_meter + NEW.delta, before_overflow + NEW.overflow_delta, before_reserve + NEW.reserve_delta) THEN
        RAISE EXCEPTION 'event % of pool % ends at meter %, overflow %, reserve %, but the event before it and its deltas give %, %, %',
            NEW.seq, NEW.pool_id, NEW.meter_after, NEW.overflow_after, NEW.reserve_after,
            before_meter + NEW.delta, before_overflow + NEW.overflow_delta, before_reserve + NEW.reserve_delta
            USING ERRCODE = 'integrity_constraint_violation',
                  HINT = 'a meter moves only through progressive.ledger';
    END IF;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER meter_event_follows_the_last
    AFTER INSERT ON progressive_meterevent DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION progressive_meter_event_follows_the_last();
"""

DROP = """
DROP TRIGGER IF EXISTS meter_event_follows_the_last ON progressive_meterevent;
DROP FUNCTION IF EXISTS progressive_meter_event_follows_the_last();
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FUNCTION, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("progressive", "0009_money_20_digits")]
    operations = [migrations.RunPython(forwards, backwards)]
