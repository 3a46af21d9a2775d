"""On PostgreSQL the database refuses a pool whose meter differs from its ledger.

``progressive.ledger`` is the one code path that moves a meter, and it moves
it by appending events; these deferred constraint triggers hold every other
path to the same rule. At the commit of any transaction that changed a pool
or appended to its ledger, the pool's ``meter``, ``overflow``, ``reserve`` and
``last_event_seq`` must equal its last event's figures (or all be zero for a
pool that has no event yet); otherwise the commit fails and nothing of the
transaction lands. Deferred, because the events and the pool's new figures
are written by two statements of one transaction.
"""

from django.db import migrations

FUNCTION = """
CREATE FUNCTION progressive_meter_is_its_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pool_key bigint;
    pool record;
    last_seq bigint := 0;
    last_meter numeric := 0;
    last_overflow numeric := 0;
    last_reserve numeric := 0;
BEGIN
    -- Two statements, not one CASE: each names a column only the row of its own table has.
    IF TG_TABLE_NAME = 'progressive_pool' THEN
        pool_key := NEW.id;
    ELSE
        pool_key := NEW.pool_id;
    END IF;
    SELECT meter, overflow, reserve, last_event_seq INTO pool FROM progressive_pool WHERE id = pool_key;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT seq, meter_after, overflow_after, reserve_after INTO last_seq, last_meter, last_overflow, last_reserve
        FROM progressive_meterevent WHERE pool_id = pool_key ORDER BY seq DESC LIMIT 1;
    IF NOT FOUND THEN
        last_seq := 0; last_meter := 0; last_overflow := 0; last_reserve := 0;
    END IF;
    IF (pool.meter, pool.overflow, pool.reserve, pool.last_event_seq)
            IS DISTINCT FROM (last_meter, last_overflow, last_reserve, last_seq) THEN
        RAISE EXCEPTION 'pool % holds meter %, overflow %, reserve % at event %, but its ledger ends at event % with meter %, overflow %, reserve %',
            pool_key, pool.meter, pool.overflow, pool.reserve, pool.last_event_seq,
            last_seq, last_meter, last_overflow, last_reserve
            USING ERRCODE = 'integrity_constraint_violation',
                  HINT = 'a meter moves only through progressive.ledger';
    END IF;
    RETURN NULL;
END
$$;
"""

TRIGGERS = """
CREATE CONSTRAINT TRIGGER pool_meter_is_its_ledger
    AFTER INSERT OR UPDATE ON progressive_pool DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION progressive_meter_is_its_ledger();
CREATE CONSTRAINT TRIGGER meter_event_moves_its_pool
    AFTER INSERT ON progressive_meterevent DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION progressive_meter_is_its_ledger();
"""

DROP = """
DROP TRIGGER IF EXISTS meter_event_moves_its_pool ON progressive_meterevent;
DROP TRIGGER IF EXISTS pool_meter_is_its_ledger ON progressive_pool;
DROP FUNCTION IF EXISTS progressive_meter_is_its_ledger();
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FUNCTION, params=None)
    schema_editor.execute(TRIGGERS, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("progressive", "0007_index_economy")]
    operations = [migrations.RunPython(forwards, backwards)]
