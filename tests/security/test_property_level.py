"""API3 Broken object property level authorization: mass assignment and overexposure.

A caller may send any property it likes; only those its operation documents
are read, and what the service decides (a verdict, a settlement, a meter, who
did it) can never be set from outside. Answers expose no secret: no key hash,
no password hash, no raw body of another table.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from progressive.models import MeterEvent, MeterReading, Pool
from rounds.models import Round, Seat
from tests.api.records import ROUNDS, us_record

from .people import person_client

pytestmark = pytest.mark.django_db


def test_a_table_cannot_set_what_the_service_decides_about_its_round(table_client):
    client = table_client("U01", "us-30k")
    sent = us_record("U-1")
    sent["seats"][0]["paid"]["ante"] = "25"  # a wrong payout: the round must come out flagged
    sent.update(
        status="verified", id=1, findings=[], record_hash="0" * 64, config={"name": "se-50kr", "version": 9},
        gaming_day="2000-01-01", progressive={"pool": "other", "meter_after": "0.00", "events": []},
        voided_at="2026-11-29T21:14:03+01:00",
    )
    sent["seats"][0].update(settled={"ante": "1000000"}, hand="royal_flush", settled_ante="1000000")

    response = client.post(ROUNDS, sent, format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    stored = Round.objects.get(round_id="U-1")
    assert body["status"] == stored.status == "flagged"
    assert body["id"] == stored.pk and stored.record_hash != "0" * 64
    assert body["config"]["name"] == "us-30k" and str(stored.gaming_day) == "2026-11-29"
    assert body["progressive"]["pool"] == "us-progressive" and stored.voided_at is None
    seat = Seat.objects.get(round=stored, seat=1)
    assert seat.settled_ante == Decimal("-25.00") and seat.hand != "royal_flush"
    # The canonical record kept is the contract's fields only.
    assert "status" not in stored.record and "settled" not in stored.record["seats"][0]


def test_a_person_cannot_choose_the_kind_actor_or_balance_of_a_meter_event(db):
    supervisor = person_client("supervisor", "sam")
    response = supervisor.post("/api/v1/pools/us-progressive/adjustments", {
        "delta": "5.00", "reason": "count correction", "kind": "reseed", "amount": "10000.00",
        "actor": "someone-else", "meter_after": "1.00", "seq": 1, "pool": "other-pool",
    }, format="json")

    assert response.status_code == 201, response.json()
    event = MeterEvent.objects.get(pk=response.json()["id"])
    assert (event.kind, event.amount, event.delta, event.actor_name) == ("adjustment", Decimal("5.00"),
                                                                        Decimal("5.00"), "sam")
    assert event.seq == 2 and event.meter_after == Decimal("10005.00")
    assert Pool.objects.get(code="us-progressive").meter == Decimal("10005.00")


def test_a_table_cannot_choose_the_service_meter_a_reading_is_compared_with(table_client):
    client = table_client("U01", "us-30k")
    response = client.post("/api/v1/meter-readings/", {
        "displayed": "9000.00", "reported_at": "2026-11-29T21:00:00+01:00",
        "service_meter": "9000.00", "flagged": False, "difference": "0.00", "table": "U02",
    }, format="json")

    assert response.status_code == 201, response.json()
    reading = MeterReading.objects.get()
    assert reading.service_meter == Decimal("10000.00") and reading.flagged
    assert reading.table.code == "U01"


def test_no_answer_exposes_a_key_hash_a_password_hash_or_a_raw_body(table_client):
    client = table_client("U01", "us-30k")
    assert client.post(ROUNDS, us_record("U-1"), format="json").status_code == 201
    auditor = person_client("auditor")
    answers = [
        auditor.get(path).content.decode()
        for path in ("/api/v1/rounds/", "/api/v1/findings/", "/api/v1/meter-events/", "/api/v1/hits/",
                     "/api/v1/pools/", "/api/v1/pool-versions/", "/api/v1/meter-readings/",
                     f"/api/v1/rounds/{Round.objects.get().pk}/")
    ]
    from django.contrib.auth import get_user_model

    from rounds.models import TableKey

    secrets_ = [k for k in TableKey.objects.values_list("key_hash", flat=True)]
    secrets_ += list(get_user_model().objects.values_list("password", flat=True))
    for answer in answers:
        assert json.loads(answer)
        for secret in secrets_:
            assert secret not in answer
        assert "key_hash" not in answer and '"body"' not in answer and "password" not in answer
