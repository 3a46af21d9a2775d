"""On PostgreSQL, rounds and seats become tables partitioned by gaming day.

Each keeps its rows, columns, indexes and foreign keys; its primary key
becomes (id, gaming_day), as PostgreSQL requires of a partitioned table. A
partition holds a month of gaming days (``infra.partitioning`` says why);
one is made for every month that has rounds, and for yesterday to
``ROUND_PARTITIONS_AHEAD_DAYS`` ahead; a default partition takes any round of
a month without one. The keys between them:

- a round's (id, table, round id, gaming day) must be its ``RoundKey``'s, so
  a table's round id is unique across all days;
- a seat points at its round by (id, gaming day);
- findings, kept bodies and meter events point at the round's key by id;
- round keys, like other stored facts, refuse UPDATE and DELETE.

SQLite (the development default) is left as it is.
"""

from datetime import timedelta

from django.conf import settings
from django.db import migrations
from django.utils import timezone

from infra.gaming_day import gaming_day_of
from infra.partitioning import partition_by_month

KEYS = """
ALTER TABLE rounds_roundkey ADD CONSTRAINT rounds_roundkey_whole
    UNIQUE (id, table_id, round_id, gaming_day);
ALTER TABLE rounds_round ADD CONSTRAINT rounds_round_key_fk
    FOREIGN KEY (id, table_id, round_id, gaming_day)
    REFERENCES rounds_roundkey (id, table_id, round_id, gaming_day) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE rounds_seat ADD CONSTRAINT rounds_seat_round_fk
    FOREIGN KEY (round_id, gaming_day) REFERENCES rounds_round (id, gaming_day) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE rounds_finding ADD CONSTRAINT rounds_finding_round_key_fk
    FOREIGN KEY (round_id) REFERENCES rounds_roundkey (id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE rounds_submission ADD CONSTRAINT rounds_submission_round_key_fk
    FOREIGN KEY (round_id) REFERENCES rounds_roundkey (id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE progressive_meterevent ADD CONSTRAINT progressive_meterevent_round_key_fk
    FOREIGN KEY (round_id) REFERENCES rounds_roundkey (id) DEFERRABLE INITIALLY DEFERRED;
CREATE TRIGGER rounds_roundkey_append_only BEFORE UPDATE OR DELETE ON rounds_roundkey
    FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_change();
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    today = gaming_day_of(timezone.now())
    ahead = [today + timedelta(days=n) for n in range(-1, settings.ROUND_PARTITIONS_AHEAD_DAYS + 1)]
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT gaming_day FROM rounds_round")
        days = {*ahead, *(day for (day,) in cursor.fetchall())}
        partition_by_month(cursor, "rounds_round", "gaming_day", days=days)
        partition_by_month(cursor, "rounds_seat", "gaming_day", days=days)
        cursor.execute(KEYS)


class Migration(migrations.Migration):
    # Turning a table into a partitioned one cannot be undone by a migration.
    dependencies = [
        ("rounds", "0008_round_keys"),
        ("progressive", "0006_meter_event_round_key"),
        ("audit", "0003_append_only_triggers"),
    ]
    operations = [migrations.RunPython(forwards)]
