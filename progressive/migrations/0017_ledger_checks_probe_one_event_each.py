"""Each new event's predecessor is found by one probe of the ``(pool, seq)`` index, whatever the
planner was told, and however many events one statement stores.

0015 priced whole-table paths out of the ledger's checks, but a session plans
a check once and keeps the plan (issue 50). A batch's first statement, planned
while the ledger was a page, was kept either as the batch's events joined to
the whole ledger read once into memory (a Materialize, every new event compared
with every stored one) or as a probe of the index by kind, pool and moment on
the pool alone (every event of the pool read for each new one): storing a
batch grew slower with every event stored. The predecessor is now asked for
as the pool's last event below the new one (``ORDER BY seq DESC LIMIT 1``, in
a subquery run once per new event), and the checks run with sorting and
materializing priced out too: the one index that gives a pool's events in
order of seq, probed once per event, is the only plan left. What is checked is
unchanged: the event found must be the one just before (seq − 1).
"""

from django.db import migrations

FUNCTIONS = ("progressive_meter_is_its_ledger()", "progressive_meter_events_follow_the_last()")
SETTINGS = ("enable_sort", "enable_material")

FOLLOWS = """
CREATE OR REPLACE FUNCTION progressive_meter_events_follow_the_last() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    wrong record;
BEGIN
    SELECT added.pool_id, added.seq INTO wrong
        FROM added LEFT JOIN LATERAL (
            SELECT e.seq, e.meter_after, e.overflow_after, e.reserve_after
                FROM progressive_meterevent e
                WHERE e.pool_id = added.pool_id AND e.seq < added.seq
                ORDER BY e.seq DESC LIMIT 1
        ) before ON true
        WHERE added.seq < 1
           OR (added.seq > 1 AND before.seq IS DISTINCT FROM added.seq - 1)
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
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(FOLLOWS, params=None)  # keeps the function's settings (0015's)
    for function in FUNCTIONS:
        for setting in SETTINGS:
            schema_editor.execute(f"ALTER FUNCTION {function} SET {setting} = off", params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for function in FUNCTIONS:
        for setting in SETTINGS:
            schema_editor.execute(f"ALTER FUNCTION {function} RESET {setting}", params=None)
    module = __import__("progressive.migrations.0011_events_follow_by_statement", fromlist=["FORWARD"])
    body = module.FORWARD.split("CREATE FUNCTION", 1)[1].split("CREATE TRIGGER", 1)[0]
    schema_editor.execute("CREATE OR REPLACE FUNCTION" + body, params=None)


class Migration(migrations.Migration):
    dependencies = [("progressive", "0016_ledger_checks_find_one_index")]
    operations = [migrations.RunPython(forwards, backwards)]
