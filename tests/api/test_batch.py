"""POST /api/v1/rounds/batch: a table catching up, each record judged on its own."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from progressive.models import Pool
from rounds.models import Round, Submission

from .records import BATCH, record, us_record

pytestmark = pytest.mark.django_db


def post_batch(client: APIClient, items):
    return client.post(BATCH, {"rounds": items}, format="json")


def test_each_item_gets_its_own_answer_in_order(table_client):
    table_client("S02", "se-50kr")
    client = table_client("S01", "se-50kr")
    broken = record("R-3")
    broken["seats"][0]["ante"] = "-100"
    items = [
        record("R-1"),
        record("R-2", dealer="D0002"),
        broken,
        record("R-4", table="S02"),
        "not a record",
        record("R-1"),
        record("R-1", dealer="D0009"),
    ]

    response = post_batch(client, items)

    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 201, 400, 403, 400, 200, 409]
    assert [r["body"].get("round") for r in results[:2]] == ["R-1", "R-2"]
    assert results[1]["body"]["dealer"] == "D0002"
    assert "ante" in results[2]["body"]["errors"]["seats"]["0"]
    assert results[3]["body"]["code"] == "permission_denied"
    assert "non_field_errors" in results[4]["body"]["errors"]
    assert results[5]["body"] == results[0]["body"]
    assert results[6]["body"]["code"] == "conflicting_resubmission"
    # The bad items sank nothing: the good rounds are stored, and every item was kept.
    assert sorted(Round.objects.values_list("round_id", flat=True)) == ["R-1", "R-2"]
    assert list(Submission.objects.order_by("pk").values_list("outcome", "http_status")) == [
        ("accepted", 201), ("accepted", 201), ("rejected", 400), ("forbidden", 403),
        ("rejected", 400), ("replayed", 200), ("conflict", 409),
    ]
    kept = Submission.objects.order_by("pk").first()
    assert json.loads(bytes(kept.body)) == items[0]


def test_a_batch_posted_twice_counts_nothing_twice(table_client):
    client = table_client("U01", "us-30k")
    items = [us_record(f"U-{n}") for n in range(1, 4)]
    first = post_batch(client, items)
    assert [r["status"] for r in first.json()["results"]] == [201, 201, 201]
    meter = Pool.objects.get(code="us-progressive").meter
    assert meter == Decimal("10012.00")

    again = post_batch(client, items)

    assert [r["status"] for r in again.json()["results"]] == [200, 200, 200]
    bodies = [r["body"] for r in first.json()["results"]]
    assert [r["body"] for r in again.json()["results"]] == bodies
    assert Pool.objects.get(code="us-progressive").meter == meter
    assert Round.objects.count() == 3


def test_a_batch_and_the_single_endpoint_agree_on_a_round(table_client):
    client = table_client("S01", "se-50kr")
    single = client.post("/api/v1/rounds/", record("R-1"), format="json")
    assert single.status_code == 201
    [result] = post_batch(client, [record("R-1")]).json()["results"]
    assert result == {"status": 200, "body": single.json()}


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[]",
        b'{"rounds": []}',
        b'{"rounds": "R-1"}',
        b'{"rounds": {"table": "S01"}}',
        b'{"round": []}',
        json.dumps({"rounds": [{}] * 1001}).encode(),
    ],
    ids=["not-json", "list", "empty", "string", "object", "misspelt", "over-1000"],
)
def test_a_malformed_envelope_is_400_and_kept(table_client, body):
    client = table_client("S01", "se-50kr")
    response = client.generic("POST", BATCH, body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert response.json()["errors"]["body"]
    kept = Submission.objects.get()
    assert (kept.outcome, kept.http_status, bytes(kept.body)) == ("rejected", 400, body)
    assert not Round.objects.exists()


def test_a_batch_needs_a_table_key(table_client, auditor_client):
    table_client("S01", "se-50kr")
    assert post_batch(APIClient(), [record()]).status_code == 401
    assert post_batch(auditor_client, [record()]).status_code in {401, 403}
    assert not Submission.objects.exists()


def test_a_batch_over_the_upload_limit_is_413(table_client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    client = table_client("S01", "se-50kr")
    response = post_batch(client, [record(f"R-{n}") for n in range(10)])
    assert response.status_code == 413
    assert Submission.objects.get().http_status == 413
    assert not Round.objects.exists()


def test_a_record_orjson_cannot_write_is_kept_as_json_that_reads_back_the_same(table_client):
    client = table_client("S01", "se-50kr")
    lone = record("R-1")
    lone["seats"][0]["player"] = "P\ud800"  # a lone surrogate: JSON can carry it escaped, UTF-8 cannot
    body = json.dumps({"rounds": [record("R-0"), lone]})  # ASCII, the surrogate escaped

    response = client.post(BATCH, body, content_type="application/json")

    assert response.status_code == 200
    # Refused as a player name, and kept (a UTF-8 body of it could not be made: it was a 500).
    assert [r["status"] for r in response.json()["results"]] == [201, 400]
    kept = Submission.objects.order_by("pk")
    assert [json.loads(bytes(s.body)) for s in kept] == [record("R-0"), lone]
    assert bytes(kept[0].body) == json.dumps(record("R-0"), ensure_ascii=False, separators=(",", ":")).encode()
