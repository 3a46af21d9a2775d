"""Every write takes text as JSON strings only: a number is not a reason, nor a dealer.

DRF's text fields read ``0`` as ``"0"``; the schema says string, so anything
else is a field-level 400 and nothing is written (a table's round record is
kept as the refusal, as every refused record is).
"""

from __future__ import annotations

import pytest

from progressive.models import MeterEvent
from rounds.models import Finding, Round, Submission
from tests import examples
from tests.api.records import BATCH, ROUNDS, us_record
from tests.security.people import person_client

pytestmark = pytest.mark.django_db
NOT_TEXT = [0, 1.5, True, ["a reason"], {"why": "fault"}]
ADJUST = "/api/v1/pools/us-progressive/adjustments"
TRANSFER = "/api/v1/pools/us-progressive/overflow-transfers"


@pytest.fixture
def table(table_client):
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:6]:
        assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    return client


def refused_at(response, field: str) -> None:
    assert response.status_code == 400, (response.status_code, response.content)
    answer = response.json()
    assert answer["code"] == "invalid" and field in answer["errors"], answer
    assert answer["request_id"]


@pytest.mark.parametrize("reason", NOT_TEXT, ids=repr)
def test_a_void_reason_that_is_not_a_string_is_refused(table, reason):
    round_ = Round.objects.first()
    response = person_client("supervisor").post(f"/api/v1/rounds/{round_.pk}/void", {"reason": reason},
                                                format="json")
    refused_at(response, "reason")
    round_.refresh_from_db()
    assert not round_.void and round_.status != "void"


def test_a_void_reason_that_is_a_string_of_digits_is_still_a_reason(table):
    round_ = Round.objects.first()
    response = person_client("supervisor").post(f"/api/v1/rounds/{round_.pk}/void", {"reason": "0"},
                                                format="json")
    assert response.status_code == 200
    round_.refresh_from_db()
    assert round_.void_reason == "0"


@pytest.mark.parametrize("note", NOT_TEXT, ids=repr)
def test_a_finding_note_that_is_not_a_string_is_refused(table, note):
    finding = Finding.objects.first()
    assert finding is not None
    response = person_client("auditor").post("/api/v1/findings/transition", {
        "findings": [finding.pk], "state": "acknowledged", "note": note,
    }, format="json")
    refused_at(response, "note")
    finding.refresh_from_db()
    assert finding.state == "open"


@pytest.mark.parametrize("path, body", [
    (ADJUST, {"delta": "1.00"}),
    (TRANSFER, {"amount": "1.00"}),
], ids=["adjustment", "overflow-transfer"])
@pytest.mark.parametrize("reason", NOT_TEXT, ids=repr)
def test_a_meter_reason_that_is_not_a_string_is_refused(table, path, body, reason):
    before = MeterEvent.objects.count()
    refused_at(person_client("supervisor").post(path, {**body, "reason": reason}, format="json"), "reason")
    assert MeterEvent.objects.count() == before


@pytest.mark.parametrize("pool", [7, True, ["us-progressive"]], ids=repr)
def test_a_reading_pool_that_is_not_a_string_is_refused(table, pool):
    response = table.post("/api/v1/meter-readings/", {
        "pool": pool, "displayed": "1.00", "reported_at": "2026-11-29T21:00:00+01:00",
    }, format="json")
    refused_at(response, "pool")


@pytest.mark.parametrize("name", ["table", "round", "dealer"])
@pytest.mark.parametrize("text", NOT_TEXT, ids=repr)
def test_a_round_records_text_that_is_not_a_string_is_refused_and_kept(table_client, name, text):
    client = table_client("U01", "us-30k")
    response = client.post(ROUNDS, us_record(**{name: text}), format="json")
    refused_at(response, name)
    assert not Round.objects.exists()
    assert Submission.objects.get().outcome == Submission.Outcome.REJECTED


@pytest.mark.parametrize("text", NOT_TEXT, ids=repr)
def test_a_seats_player_that_is_not_a_string_is_refused_in_its_place_in_a_batch(table_client, text):
    client = table_client("U01", "us-30k")
    broken = us_record("U-2")
    broken["seats"][0]["player"] = text
    response = client.post(BATCH, {"rounds": [us_record("U-1"), broken]}, format="json")
    assert response.status_code == 200
    first, second = response.json()["results"]
    assert first["status"] == 201 and second["status"] == 400, response.json()
    assert "player" in second["body"]["errors"]["seats"]["0"], second["body"]
    assert list(Round.objects.values_list("round_id", flat=True)) == ["U-1"]
