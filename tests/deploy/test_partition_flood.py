"""Issue 27's partition flood, as production runs: gunicorn with gunicorn.conf.py and the
production settings, a table posting batches of rounds dated in a different month each, from
2000 to 2099. Every round is stored and held apart, and the database gains no relation: a
table's clock can no longer fill the server's lock table with partitions and their indexes."""

from __future__ import annotations

import json

import psycopg

from tests.deploy.test_slow_clients import Table

MONTHS = [(2000 + n * 5 // 6, 1 + n % 12) for n in range(120)]  # 120 months from 2000 to 2099


def _relations(url: str) -> tuple[int, int]:
    with psycopg.connect(url) as connection:
        relations = connection.execute("SELECT count(*) FROM pg_class").fetchone()[0]
        partitions = connection.execute(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = 'rounds_round'::regclass").fetchone()[0]
    return relations, partitions


def test_a_century_of_months_in_ten_batches_adds_no_partition(gunicorn, floor, database):
    table = Table(gunicorn.address, floor, index=0)
    before = _relations(database.url)
    statuses, held = [], 0
    try:
        for start in range(0, len(MONTHS), 12):
            batch = []
            for year, month in MONTHS[start:start + 12]:
                record = table.simulator.deal().record
                record["round"] = f"flood-{year}-{month:02d}"
                record["dealt_at"] = f"{year}-{month:02d}-15T21:00:00+01:00"
                batch.append(record)
            table.connection.request("POST", "/api/v1/rounds/batch", json.dumps({"rounds": batch}).encode(), {
                "Authorization": f"Bearer {table.key}", "Content-Type": "application/json"})
            response = table.connection.getresponse()
            answer = json.loads(response.read())
            assert response.status == 200, answer
            for result in answer["results"]:
                statuses.append(result["status"])
                held += "dealt_outside_window" in {f["code"] for f in result["body"]["findings"]}
        after_flood = _relations(database.url)
        status, _ = table.post()  # the next round of the evening
    finally:
        table.close()

    assert len(set(MONTHS)) == 120 and statuses == [201] * 120
    assert held == 120
    assert after_flood == before, (before, after_flood)
    assert status == 201
