"""Meter readings: kept beside the service's meter, flagged beyond the pool's tolerance."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from progressive.models import MeterReading, Pool
from progressive.services import (
    NotLinkedError,
    ReadingError,
    meter_adjust,
    pool_version_create,
    reading_record,
)
from tests.progressive.records import ROUNDS, us_rounds
from trail.models import AuditEvent
from trail.services import SYSTEM, Actor

pytestmark = pytest.mark.django_db
READINGS = "/api/v1/meter-readings/"


@pytest.fixture
def pool(db) -> Pool:
    return Pool.objects.get(code="us-progressive")


def _tolerance(pool: Pool, amount: str) -> None:
    current = pool.versions.order_by("-version").first()
    pool_version_create(
        pool=pool, effective_from=timezone.now() - timedelta(minutes=1), wager=current.wager,
        rate=current.rate, reseed=current.reseed, lines=current.lines, reading_tolerance=amount,
        actor=SYSTEM,
    )


def test_a_reading_equal_to_the_meter_is_kept_unflagged(pool):
    read_at = timezone.now()
    reading = reading_record(pool=pool, displayed=Decimal("10000.00"), reported_at=read_at,
                             reporter=SYSTEM, request_id="r-1")
    assert (reading.service_meter, reading.difference, reading.tolerance, reading.flagged) == (
        Decimal("10000.00"), Decimal("0.00"), Decimal("0.00"), False)
    assert reading.meter_seq == pool.last_event_seq and reading.reported_at == read_at
    assert AuditEvent.objects.filter(action="meter.reading_recorded", object_id=str(reading.pk)).exists()


def test_with_no_tolerance_a_cent_off_is_flagged(pool):
    reading = reading_record(pool=pool, displayed="9999.99", reported_at=timezone.now(), reporter=SYSTEM)
    assert (reading.difference, reading.flagged) == (Decimal("-0.01"), True)
    assert AuditEvent.objects.filter(action="meter.reading_flagged", object_id=str(reading.pk)).exists()


def test_the_tolerance_of_the_version_in_force_decides(pool):
    _tolerance(pool, "1.00")
    within = reading_record(pool=pool, displayed="10001.00", reported_at=timezone.now(), reporter=SYSTEM)
    beyond = reading_record(pool=pool, displayed="9998.99", reported_at=timezone.now(), reporter=SYSTEM)
    assert (within.tolerance, within.flagged) == (Decimal("1.00"), False)
    assert (beyond.difference, beyond.flagged) == (Decimal("-1.01"), True)


def test_the_service_meter_is_the_meter_when_the_reading_arrives(pool):
    meter_adjust(pool=pool, delta=Decimal("250.00"), actor=SYSTEM, reason="test float")
    reading = reading_record(pool=pool, displayed="10000.00", reported_at=timezone.now(), reporter=SYSTEM)
    pool.refresh_from_db()
    assert (reading.service_meter, reading.meter_seq) == (Decimal("10250.00"), pool.last_event_seq)
    assert reading.difference == Decimal("-250.00") and reading.flagged


def test_a_table_reports_for_its_own_pool_only(pool, table_client):
    us_table = table_client("U01", "us-30k").table
    se_table = table_client("S01", "se-50kr").table
    reading = reading_record(table=us_table, displayed="10000.00", reported_at=timezone.now(),
                             reporter=Actor.of_table(us_table))
    assert (reading.pool, reading.table, reading.reporter) == (pool, us_table, "U01")

    before = MeterReading.objects.count()
    with pytest.raises(NotLinkedError):
        reading_record(pool=pool, table=se_table, displayed="10000.00", reported_at=timezone.now(),
                       reporter=Actor.of_table(se_table))
    with pytest.raises(ReadingError) as refused:
        reading_record(table=se_table, displayed="10000.00", reported_at=timezone.now(),
                       reporter=Actor.of_table(se_table))
    assert "feeds no progressive pool" in refused.value.errors["pool"][0]
    assert MeterReading.objects.count() == before


@pytest.mark.parametrize(
    "displayed,moment,field",
    [
        ("-1.00", timedelta(0), "displayed"),
        ("10.001", timedelta(0), "displayed"),
        (10000.0, timedelta(0), "displayed"),
        ("10000.00", timedelta(hours=1), "reported_at"),
    ],
)
def test_a_reading_that_cannot_be_true_is_refused(pool, displayed, moment, field):
    with pytest.raises(ReadingError) as refused:
        reading_record(pool=pool, displayed=displayed, reported_at=timezone.now() + moment, reporter=SYSTEM)
    assert field in refused.value.errors
    assert not MeterReading.objects.exists()


# ---- over the API ----------------------------------------------------------------------


def test_a_table_posts_a_reading_and_hears_how_it_compares(pool, table_client):
    client = table_client("U01", "us-30k")
    assert client.post(ROUNDS, us_rounds("U01", "r", 1, start=3)[0], format="json").status_code == 201
    response = client.post(
        READINGS, {"displayed": "10000.00", "reported_at": "2026-11-29T20:00:00+01:00"}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["pool"], body["table"], body["service_meter"], body["difference"], body["flagged"]) == (
        "us-progressive", "U01", "10001.00", "-1.00", True)
    assert body["reported_at"].startswith("2026-11-29T")


def test_a_table_of_another_pool_gets_403(pool, table_client):
    client = table_client("S01", "se-50kr")
    response = client.post(
        READINGS, {"pool": "us-progressive", "displayed": "10000.00",
                   "reported_at": "2026-11-29T20:00:00+01:00"}, format="json",
    )
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    response = client.post(
        READINGS, {"displayed": "10000.00", "reported_at": "2026-11-29T20:00:00+01:00"}, format="json"
    )
    assert response.status_code == 400
    assert "pool" in response.json()["errors"]
    assert not MeterReading.objects.exists()


def test_a_malformed_reading_gets_field_errors(pool, table_client):
    client = table_client("U01", "us-30k")
    response = client.post(
        READINGS, {"pool": "nope", "displayed": 10000.5, "reported_at": "2026-11-29T20:00:00"},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert set(body["errors"]) == {"displayed", "reported_at"}
    response = client.post(
        READINGS, {"pool": "nope", "displayed": "1.00", "reported_at": "2026-11-29T20:00:00Z"},
        format="json",
    )
    assert response.status_code == 400 and "pool" in response.json()["errors"]


def test_people_read_readings_and_tables_do_not(pool, table_client, auditor_client):
    table = table_client("U01", "us-30k")
    for displayed in ("10000.00", "10003.00"):
        assert table.post(READINGS, {"displayed": displayed, "reported_at": "2026-11-29T20:00:00Z"},
                          format="json").status_code == 201
    assert table.get(READINGS).status_code == 403
    assert auditor_client.post(READINGS, {"displayed": "1.00", "reported_at": "2026-11-29T20:00:00Z"},
                               format="json").status_code == 403

    flagged = auditor_client.get(READINGS, {"flagged": "true", "pool": "us-progressive"}).json()["results"]
    assert [r["displayed"] for r in flagged] == ["10003.00"]
    assert len(auditor_client.get(READINGS, {"table": "U01"}).json()["results"]) == 2
