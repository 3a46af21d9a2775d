"""The ledger's checks probe its ``(pool, seq)`` index however stale the statistics (PostgreSQL).

A plan assertion, not a timing: the ledger is analyzed while it is small,
then grown past the planner's knowledge (no ANALYZE after, as with
autovacuum off or behind), and the plans of the queries the triggers run
when one more event is stored are read back through ``auto_explain``.
Before progressive migration 0015 they read the whole ledger for each event.
"""

from __future__ import annotations

import re

import pytest
from django.db import connection, transaction

from progressive.models import MeterEvent, Pool
from tests import examples
from tests.plans import STALE, other_session, plans_of, statistics_of_a_small_table

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the triggers are PostgreSQL's"),
]
GROWN = 20_000  # events added behind the planner's back


@pytest.fixture(params=["two rounds", "its opening only"])
def pool(request, table_client) -> Pool:
    """The pool, its ledger two rounds' events or (a fresh deployment's) its opening event alone."""
    if request.param == "two rounds":
        client = table_client("U01", "us-30k")
        for example in examples.load("us-30k.jsonl")[:2]:
            assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    return Pool.objects.get(code="us-progressive")


def _one_more(cursor, pool: Pool, last: MeterEvent, events: int = 1) -> None:
    """``events`` events stored in one statement as the ledger stores a batch's (the events, then
    their pool), their checks run now."""
    cursor.execute(
        "INSERT INTO progressive_meterevent (pool_id, seq, kind, amount, delta, overflow_delta, reserve_delta, "
        "meter_after, overflow_after, reserve_after, seat, actor_name, reason, created_at) "
        "SELECT %s, %s + n, 'adjustment', 1, 1, 0, 0, %s + n, %s, %s, NULL, 'test', 'one more', now() "
        "FROM generate_series(1, %s) AS n",
        [pool.pk, last.seq, last.meter_after, last.overflow_after, last.reserve_after, events])
    cursor.execute("UPDATE progressive_pool SET meter = meter + %s, last_event_seq = last_event_seq + %s "
                   "WHERE id = %s", [events, events, pool.pk])
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred check runs here, not after the block


def _grown_behind_the_planners_back(pool: Pool, statistics: str, events: int = 1) -> MeterEvent:
    """The ledger's statistics those of a small table and its checks run a few times in this
    session, ``events`` at a time (as a long-lived connection does: the session keeps the plans it
    made), then ``GROWN`` events more, written as a restore, a bulk import or the other web
    workers would, with no ANALYZE after."""
    statistics_of_a_small_table("progressive_meterevent", statistics)
    for _ in range(8):
        last = MeterEvent.objects.filter(pool=pool).order_by("-seq").first()
        with transaction.atomic(), connection.cursor() as cursor:
            _one_more(cursor, pool, last, events)
    last = MeterEvent.objects.filter(pool=pool).order_by("-seq").first()
    # From another session, as another process would: this one's plans are not told (and a
    # change of session_replication_role here would throw them away).
    with other_session() as other, other.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")  # the triggers stand aside, as in a restore
        cursor.execute(
            "INSERT INTO progressive_meterevent (pool_id, seq, kind, amount, delta, overflow_delta, reserve_delta, "
            "meter_after, overflow_after, reserve_after, seat, actor_name, reason, created_at) "
            "SELECT %s, %s + n, 'adjustment', 1, 1, 0, 0, %s + n, %s, %s, NULL, 'restore', 'grown', now() "
            "FROM generate_series(1, %s) AS n",
            [pool.pk, last.seq, last.meter_after, last.overflow_after, last.reserve_after, GROWN])
        cursor.execute("UPDATE progressive_pool SET meter = meter + %s, last_event_seq = last_event_seq + %s "
                       "WHERE id = %s", [GROWN, GROWN, pool.pk])
    return MeterEvent.objects.filter(pool=pool).order_by("-seq").first()


def _plans_of_one_more_event(pool: Pool, last: MeterEvent, events: int = 1) -> list[str]:
    """Store ``events`` events more and return every plan their statements and checks ran."""

    def one_more():
        with transaction.atomic(), connection.cursor() as cursor:
            _one_more(cursor, pool, last, events)

    return plans_of(one_more)


@pytest.mark.parametrize("events", [1, 400], ids=["one-by-one", "a-batch-s-events"])
@pytest.mark.parametrize("statistics", STALE)
def test_each_ledger_check_probes_the_pool_seq_index_however_stale_the_statistics(pool, statistics, events):
    """With a batch's events in one statement (issue 50: a web worker's batches slowed down with
    every event stored), the statement's check once joined them to the whole ledger, read through
    the index once and kept in memory (a Materialize), every event compared with every row of it;
    planned while the ledger was its opening event, it probed the index by kind, pool and moment
    on the pool alone. Before progressive 0017 both were plans a session could keep."""
    last = _grown_behind_the_planners_back(pool, statistics, events)
    plans = _plans_of_one_more_event(pool, last, events)
    ledger = [plan for plan in plans if re.search(r"(?:from|join)\s+progressive_meterevent\b", plan, re.IGNORECASE)
              and "INSERT INTO" not in plan]
    # The statement's check (the new event's predecessor) and the commit's (the pool's last event).
    assert any("added" in plan for plan in ledger) and any("ORDER BY seq DESC" in plan for plan in ledger), plans
    for plan in ledger:
        # One probe of the unique index per event: no whole-ledger scan, hash, merge or sort, and
        # no other index led by the pool (progressive 0016), which reads all of the pool's events.
        assert "meter_event_seq_unique" in plan, plan
        assert set(re.findall(r"Index (?:Only )?Scan(?: Backward)? using (\w+)", plan)) == {"meter_event_seq_unique"}, plan
        for whole in ("Seq Scan on progressive_meterevent", "Bitmap Heap Scan", "Hash", "Merge", "Sort",
                      "Materialize"):
            assert whole not in plan, plan
        if "added" in plan:  # each new event's predecessor: the pool's events below it, the last one
            assert re.search(r"Index Cond: \(\(pool_id = added\.pool_id\) AND \(seq < added\.seq\)\)", plan), plan
            assert "Index Scan Backward using meter_event_seq_unique" in plan, plan
        else:  # the pool's last event: the pool's end of the index, one row
            assert "Limit" in plan and "Index Scan Backward using meter_event_seq_unique" in plan, plan
    assert MeterEvent.objects.filter(pool=pool).count() == last.seq + events  # and the events were stored
