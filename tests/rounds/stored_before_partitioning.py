"""Run by tests/rounds/test_partition_migration.py in a database of its own (``python -m``).

Migrates an empty database to just before partitioning, stores rounds there
with the models as they were then, migrates to the end, and prints what the
partitioned tables hold as JSON.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import django

django.setup()

from django.db import connection  # noqa: E402
from django.db.migrations.executor import MigrationExecutor  # noqa: E402

BEFORE = [("rounds", "0007_void_after_the_fact"), ("progressive", "0005_append_only_triggers")]
DAYS = [date(2024, 1, 31), date(2024, 2, 1), date(2024, 2, 29)]


def store_old_rounds() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Table, Version = apps.get_model("rounds", "Table"), apps.get_model("rounds", "TableConfigVersion")
    Round, Seat = apps.get_model("rounds", "Round"), apps.get_model("rounds", "Seat")
    Finding, Submission = apps.get_model("rounds", "Finding"), apps.get_model("rounds", "Submission")
    version = Version.objects.get(config__name="se-50kr")
    table = Table.objects.create(code="S01", config=version.config)
    for number, day in enumerate(DAYS, start=1):
        round_ = Round.objects.create(
            table=table, round_id=f"R-{number}", dealt_at=datetime(day.year, day.month, day.day, 20, tzinfo=UTC),
            gaming_day=day, status="flagged", config_version=version, record={"round": f"R-{number}"},
            record_hash="0" * 64,
        )
        for seat in (1, 2):
            Seat.objects.create(round=round_, seat=seat, ante=100, blind=100, trips=0, play=0, progressive=0,
                                decision="fold", settled_ante=-100, settled_blind=-100, settled_play=0,
                                settled_trips=0, settled_progressive=0)
        Finding.objects.create(round=round_, code="payout_mismatch")
        Submission.objects.create(table=table, body=b"{}", body_sha256="0" * 64, outcome="accepted",
                                  http_status=201, round=round_, claimed_round=round_.round_id)


def migrate_to_the_end() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def holdings() -> dict:
    with connection.cursor() as cursor:
        def rows(query):
            cursor.execute(query)
            return [list(map(str, row)) for row in cursor.fetchall()]

        return {
            "rounds": rows("SELECT round_id, gaming_day, tableoid::regclass FROM rounds_round ORDER BY id"),
            "seats": rows("SELECT r.round_id, s.seat, s.gaming_day, s.tableoid::regclass FROM rounds_seat s "
                          "JOIN rounds_round r ON r.id = s.round_id ORDER BY s.id"),
            "keys": rows("SELECT k.id = r.id, k.round_id, k.gaming_day FROM rounds_roundkey k "
                         "JOIN rounds_round r ON r.round_id = k.round_id ORDER BY k.id"),
            "findings": rows("SELECT count(*) FROM rounds_finding f JOIN rounds_roundkey k ON k.id = f.round_id"),
            "submissions": rows("SELECT count(*) FROM rounds_submission s "
                                "JOIN rounds_roundkey k ON k.id = s.round_id"),
            "next_id_after_max": rows("SELECT nextval(pg_get_serial_sequence('rounds_round', 'id')) "
                                      "> (SELECT max(id) FROM rounds_round)"),
            "foreign_keys": rows("SELECT conname FROM pg_constraint WHERE contype = 'f' AND conparentid = 0 AND conname IN "
                                 "('rounds_round_key_fk', 'rounds_seat_round_fk', 'rounds_finding_round_key_fk', "
                                 "'rounds_submission_round_key_fk', 'progressive_meterevent_round_key_fk') "
                                 "ORDER BY 1"),
        }


if __name__ == "__main__":
    store_old_rounds()
    migrate_to_the_end()
    print(json.dumps(holdings()))
