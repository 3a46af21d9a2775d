"""Indexes two lists need to stay fast as rounds accumulate (docs/SCALING.md, "Lists at a
million rounds"):

- findings newest first (the API's findings list and the admin's queue), by
  (created_at, id): the (code, created_at) and (state, created_at) indexes serve a
  list filtered by one of those only, and an unfiltered one sorted every finding;
- kept bodies newest first (the admin's submissions), by (received_at, id), for the
  same reason beside (table, received_at) and (outcome, received_at);
- a round id by its start (the admin's search), by round_id with pattern operators
  (PostgreSQL only; SQLite's LIKE folds case and uses no index anyway): the
  (table, round_id) index leads with the table.

Created on the partitioned rounds table, the index is made on each partition and
on every partition made later (infra.partitioning), so all partitions keep the
same indexes. Plain SQL, so that Django's model state is unchanged.
"""

from django.db import migrations

FINDING_INDEX = "finding_created_at_id_idx"
SUBMISSION_INDEX = "submission_received_at_id_idx"
ROUND_ID_INDEX = "round_round_id_prefix_idx"


def create(apps, schema_editor):
    schema_editor.execute(
        f"CREATE INDEX {FINDING_INDEX} ON rounds_finding (created_at, id)", params=None
    )
    schema_editor.execute(
        f"CREATE INDEX {SUBMISSION_INDEX} ON rounds_submission (received_at, id)", params=None
    )
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX {ROUND_ID_INDEX} ON rounds_round (round_id varchar_pattern_ops)",
            params=None,
        )


def drop(apps, schema_editor):
    schema_editor.execute(f"DROP INDEX IF EXISTS {FINDING_INDEX}", params=None)
    schema_editor.execute(f"DROP INDEX IF EXISTS {SUBMISSION_INDEX}", params=None)
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {ROUND_ID_INDEX}", params=None)


class Migration(migrations.Migration):
    dependencies = [("rounds", "0014_submission_original_size")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
