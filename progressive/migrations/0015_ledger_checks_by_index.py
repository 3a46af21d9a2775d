"""The ledger's checks read the ledger through its ``(pool, seq)`` index, whatever the statistics say.

The checks of 0008 (a pool's last event, per event at the commit) and 0011
(each new event's predecessor, per statement) are queries planned from the
ledger's statistics, and a session keeps a plan it made. Statistics taken when
the ledger was small (a fresh deployment, a bulk import, autovacuum off or
behind) let the planner read the whole ledger for each event stored: the cost
of storing a round grew with every event already stored. The functions now
run with the planner's whole-table paths (sequential and bitmap scans, hash
and merge joins) priced out, so each look-up is a probe of the unique index,
one per event, however large the ledger and whatever the planner was told.
``tests/progressive/test_ledger_check_plans.py`` reads the plans they run.
"""

from django.db import migrations

FUNCTIONS = ("progressive_meter_is_its_ledger()", "progressive_meter_events_follow_the_last()")
SETTINGS = ("enable_seqscan", "enable_bitmapscan", "enable_hashjoin", "enable_mergejoin")


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for function in FUNCTIONS:
        for setting in SETTINGS:
            schema_editor.execute(f"ALTER FUNCTION {function} SET {setting} = off", params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for function in FUNCTIONS:
        for setting in SETTINGS:
            schema_editor.execute(f"ALTER FUNCTION {function} RESET {setting}", params=None)


class Migration(migrations.Migration):
    dependencies = [("progressive", "0014_pool_version_requests_decided_once")]
    operations = [migrations.RunPython(forwards, backwards)]
