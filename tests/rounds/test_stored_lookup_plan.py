"""The look-up of rounds already stored probes the round-id index however stale the statistics (PostgreSQL).

A plan assertion, not a timing. The look-up is a prepared statement
(``rounds.services.write_plan``): a connection plans it once and keeps the
plan. Made while the keys were a page or two (a fresh database, statistics
stale with autovacuum off), that plan was a hash join over a sequential scan
of every key ever stored, for every round posted after; with whole-table
reads priced out while it is planned, it is one probe of
``round_unique_per_table`` per round posted.
"""

from __future__ import annotations

import pytest
from django.db import connection

from tests import examples
from tests.api.records import ROUNDS
from tests.plans import STALE, other_session, plans_of, statistics_of_a_small_table

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL's plans"),
]
GROWN = 20_000  # keys added behind the planner's back
WARM = 8  # posts in this session before: past the five after which a prepared plan is kept


def _grown_from_another_session(table_id: int) -> None:
    with other_session() as other:
        other.execute("INSERT INTO rounds_roundkey (id, table_id, round_id, gaming_day) "
                      "SELECT 1000000 + n, %s, 'grown-' || n, DATE '2026-01-01' FROM generate_series(1, %s) AS n",
                      [table_id, GROWN])


@pytest.mark.parametrize("statistics", STALE)
def test_the_stored_rounds_are_looked_up_by_their_index_however_stale_the_statistics(
    table_client, settings, statistics,
):
    settings.INGEST_COMBINE = False  # this session's own transaction, not a combining thread's
    client = table_client("S01", "se-50kr")
    records = [dict(e["record"], round=f"R-{n}") for n, e in enumerate(examples.load("se-50kr.jsonl")[:WARM + 1])]
    statistics_of_a_small_table("rounds_roundkey", statistics)
    for record in records[:WARM]:
        assert client.post(ROUNDS, record, format="json").status_code == 201
    _grown_from_another_session(client.table.pk)

    plans = plans_of(lambda: client.post(ROUNDS, records[WARM], format="json"))
    # A plan's text after its statement's (which names every statement prepared with it).
    bodies = [plan.split("Query Text:", 1)[-1].split("\n", 1)[-1] for plan in plans]
    lookups = [body for body in bodies if "rounds_roundkey k" in body]
    assert lookups, plans
    for plan in lookups:
        assert "round_unique_per_table" in plan, plan
        for whole in ("Seq Scan on rounds_roundkey", "Bitmap Heap Scan", "Hash Join", "Merge Join"):
            assert whole not in plan, plan
