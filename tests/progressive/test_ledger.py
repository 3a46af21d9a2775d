"""The ledger proves its meter, the database keeps it append-only, and hits are kept."""

from __future__ import annotations

from contextlib import contextmanager
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError

from progressive.models import MeterEvent, Pool, PoolVersion
from progressive.selectors import HIT_HISTORY_MINIMUM, pool_hit_history, pool_ledger_check
from progressive.services import meter_adjust
from tests import examples
from tests.progressive.records import ROUNDS, us_rounds
from trail.services import SYSTEM
from tests.insider import as_owner, meter_triggers_off

pytestmark = pytest.mark.django_db
TRIGGER = "progressive_meterevent_append_only"


PLAYED = 12  # enough worked rounds for awards, a reseed and a few dozen events


@pytest.fixture
def played(db, table_client) -> Pool:
    """us-progressive after the first worked us-30k rounds, as table U01 posted them."""
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:PLAYED]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    return Pool.objects.get(code="us-progressive")


def _hits(example: dict, kinds=("award", "fixed_award")) -> int:
    return sum(1 for event in example["expect"]["events"] or () if event[0] in kinds)


def _tamper(sql: str, params=()) -> None:
    """Change the ledger behind the service's back, trigger off, as the table's owner could."""
    with _trigger_off():
        with connection.cursor() as cursor:
            cursor.execute(sql, params)


@contextmanager
def _trigger_off():
    with as_owner():
        with _owners_trigger_off():
            yield


@contextmanager
def _owners_trigger_off():
    with connection.cursor() as cursor:
        # Rows written in this test's transaction still have deferred foreign key
        # checks pending, and PostgreSQL alters no table with pending trigger events.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"ALTER TABLE progressive_meterevent DISABLE TRIGGER {TRIGGER}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE progressive_meterevent ENABLE TRIGGER {TRIGGER}")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def test_the_worked_rounds_leave_a_ledger_that_proves_the_meter(played):
    check = pool_ledger_check(pool=played)
    assert check.ok, check.problem
    assert check.events == played.last_event_seq == MeterEvent.objects.filter(pool=played).count()
    assert check.meter == check.delta_sum == Decimal(examples.load("us-30k.jsonl")[PLAYED - 1]["expect"]["meter"])
    assert MeterEvent.objects.filter(pool=played, kind="reseed", round__isnull=False).exists()


def test_a_changed_delta_is_found_at_its_row(played):
    target = MeterEvent.objects.filter(pool=played, kind="contribution").order_by("seq")[5]
    with pytest.raises(DatabaseError, match="refused"), transaction.atomic(), as_owner():
        MeterEvent.objects.filter(pk=target.pk).update(delta=Decimal("2.00"))

    with _trigger_off():
        MeterEvent.objects.filter(pk=target.pk).update(delta=Decimal("2.00"))

    check = pool_ledger_check(pool=played)
    assert not check.ok
    assert check.seq == target.seq and check.events == target.seq - 1
    assert "moves the meter by 2.00" in check.problem
    assert check.delta_sum == check.meter + 1


def test_a_changed_running_balance_is_found_at_its_row(played):
    target = MeterEvent.objects.filter(pool=played).order_by("seq")[20]
    _tamper("UPDATE progressive_meterevent SET meter_after = meter_after + 1 WHERE id = %s", [target.pk])
    check = pool_ledger_check(pool=played)
    assert (check.ok, check.seq) == (False, target.seq)
    assert "is not its meter_after" in check.problem


def test_a_removed_row_is_found(played):
    target = MeterEvent.objects.filter(pool=played).order_by("seq")[10]
    _tamper("DELETE FROM progressive_meterevent WHERE id = %s", [target.pk])
    check = pool_ledger_check(pool=played)
    assert (check.ok, check.seq) == (False, target.seq)
    assert "missing" in check.problem


def test_a_meter_moved_without_an_event_is_found(played):
    with meter_triggers_off():  # the database refuses it otherwise (test_meter_trigger.py)
        Pool.objects.filter(pk=played.pk).update(meter=played.meter + Decimal("100.00"))
    check = pool_ledger_check(pool=played)
    assert not check.ok and check.seq is None
    assert "not the sum of its events" in check.problem


def test_adjustments_keep_the_ledger_provable(played):
    meter_adjust(pool=played, delta=Decimal("-3.00"), actor=SYSTEM, reason="test")
    meter_adjust(pool=played, delta=Decimal("7.25"), actor=SYSTEM, reason="test")
    assert pool_ledger_check(pool=played).ok


@pytest.mark.parametrize("table", ["progressive_meterevent", "progressive_poolversion"])
@pytest.mark.parametrize("sql", ["UPDATE {table} SET id = id WHERE id = %s", "DELETE FROM {table} WHERE id = %s"])
def test_the_database_refuses_to_change_ledger_rows_and_versions(db, table, sql):
    row = (MeterEvent if table.endswith("meterevent") else PoolVersion).objects.order_by("id").first()
    with pytest.raises(DatabaseError, match="refused"), transaction.atomic():
        with as_owner(), connection.cursor() as cursor:
            cursor.execute(sql.format(table=table), [row.pk])


def test_the_hit_history_keeps_every_hit_with_round_seat_and_hand(db, table_client):
    worked = examples.load("us-30k.jsonl")
    hitting = [n for n, example in enumerate(worked) if _hits(example)]
    # Every worked round with a hit, posted once as dealt and again on another table
    # of the pool, takes the history past the last 25.
    first, second = table_client("U01", "us-30k"), table_client("U02", "us-30k")
    for n in hitting:
        assert first.post(ROUNDS, worked[n]["record"], format="json").status_code == 201
    for n in hitting:
        record = us_rounds("U02", "again", 1, start=n)[0]
        assert second.post(ROUNDS, record, format="json").status_code == 201
    pool = Pool.objects.get(code="us-progressive")

    hits = list(pool_hit_history(pool=pool, include_reseeds=False))
    expected = 2 * sum(_hits(worked[n]) for n in hitting)
    assert len(hits) == expected > HIT_HISTORY_MINIMUM
    assert [h.id for h in hits] == sorted((h.id for h in hits), reverse=True)
    newest = hits[0]
    assert newest.round.table.code == "U02" and newest.seat is not None and newest.hand
    royal = [h for h in hits if h.kind == "award" and h.round.round_id == "c-us-01"]
    assert {(h.seat, h.hand, h.amount) for h in royal} == {
        (6, "straight_flush", Decimal("1000.30")), (2, "royal_flush", Decimal("9002.70"))}

    with_reseeds = pool_hit_history(pool=pool)
    assert with_reseeds.filter(kind="reseed").count() == 2 * sum(_hits(e, ("reseed",)) for e in worked)
    assert not with_reseeds.filter(round__isnull=True).exists()  # the opening reseed is no hit


def test_a_voided_round_is_reversed_in_the_ledger_and_its_hits_marked(played, django_user_model):
    from rounds.models import Round
    from rounds.services import round_void

    boss = django_user_model.objects.create_superuser("boss", password="a-long-test-password")
    hit_round = Round.objects.get(round_id="c-us-03")  # an award and a fixed award
    round_void(round_pk=hit_round.pk, user=boss, reason="shuffler fault")

    check = pool_ledger_check(pool=played)
    assert check.ok, check.problem
    reversals = MeterEvent.objects.filter(round=hit_round, kind="reversal")
    assert reversals.count() == MeterEvent.objects.filter(round=hit_round).exclude(kind="reversal").count()
    marked = {(h.round.round_id, h.reversed) for h in pool_hit_history(pool=played, include_reseeds=False)}
    assert ("c-us-03", True) in marked and ("c-us-01", False) in marked
