"""The database refuses to commit a pool whose meter differs from its ledger (PostgreSQL)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from progressive.models import MeterEvent, Pool
from progressive.services import meter_adjust
from tests import examples
from trail.services import SYSTEM

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the trigger is PostgreSQL's"),
]


@pytest.fixture
def pool(table_client) -> Pool:
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:3]:
        assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    return Pool.objects.get(code="us-progressive")


def _committed(sql: str, params=()) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.mark.parametrize("column", ["meter", "overflow", "reserve", "last_event_seq"])
def test_a_raw_update_of_a_pools_figures_is_refused_at_commit(pool, column):
    before = Pool.objects.values_list(column, flat=True).get(pk=pool.pk)
    with pytest.raises(IntegrityError, match="its ledger ends at event"):
        _committed(f"UPDATE progressive_pool SET {column} = {column} + 1 WHERE id = %s", [pool.pk])
    assert Pool.objects.values_list(column, flat=True).get(pk=pool.pk) == before


def test_an_event_written_without_moving_its_pool_is_refused(pool):
    last = MeterEvent.objects.filter(pool=pool).order_by("-seq").first()
    with pytest.raises(IntegrityError, match="its ledger ends at event"):
        _committed(
            "INSERT INTO progressive_meterevent (pool_id, seq, kind, amount, delta, overflow_delta, reserve_delta, "
            "meter_after, overflow_after, reserve_after, seat, actor_name, reason, created_at) "
            "VALUES (%s, %s, 'adjustment', 5, 5, 0, 0, %s, 0, 0, NULL, 'insider', 'x', now())",
            [pool.pk, last.seq + 1, last.meter_after + 5],
        )
    assert MeterEvent.objects.filter(pool=pool).count() == last.seq


@pytest.mark.parametrize("figure", ["meter_after", "overflow_after", "reserve_after", "seq"])
def test_an_event_with_made_up_figures_and_its_pool_set_to_match_is_refused(pool, figure):
    """The pool's last event is no proof by itself: each event must follow from the one before."""
    last = MeterEvent.objects.filter(pool=pool).order_by("-seq").first()
    after = {"meter_after": last.meter_after + 5, "overflow_after": last.overflow_after,
             "reserve_after": last.reserve_after, "seq": last.seq + 1}
    after[figure] += 100  # what a delta of 5 on the meter (and 0 on the others) cannot give
    with pytest.raises(IntegrityError, match="event before it|no event"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO progressive_meterevent (pool_id, seq, kind, amount, delta, overflow_delta, "
                "reserve_delta, meter_after, overflow_after, reserve_after, seat, actor_name, reason, created_at) "
                "VALUES (%s, %s, 'adjustment', 5, 5, 0, 0, %s, %s, %s, NULL, 'insider', 'x', now())",
                [pool.pk, after["seq"], after["meter_after"], after["overflow_after"], after["reserve_after"]],
            )
            cursor.execute(
                "UPDATE progressive_pool SET meter = %s, overflow = %s, reserve = %s, last_event_seq = %s "
                "WHERE id = %s",
                [after["meter_after"], after["overflow_after"], after["reserve_after"], after["seq"], pool.pk],
            )
    assert MeterEvent.objects.filter(pool=pool).count() == last.seq


def test_an_event_and_its_pool_moved_together_commit(pool):
    """The rule holds at the commit, not statement by statement: a writer moves both in one transaction."""
    event = meter_adjust(pool=pool, delta=Decimal("2.00"), actor=SYSTEM, reason="display fault")
    pool.refresh_from_db()
    assert (pool.meter, pool.last_event_seq) == (event.meter_after, event.seq)


def test_a_new_pool_without_events_must_hold_nothing():
    with pytest.raises(IntegrityError, match="its ledger ends at event 0"):
        _committed("INSERT INTO progressive_pool (code, name, currency, minor_unit, meter, overflow, reserve, "
                   "last_event_seq, created_at, updated_at) VALUES ('ghost', '', 'USD', 0.01, 100, 0, 0, 0, now(), now())")
    assert not Pool.objects.filter(code="ghost").exists()
