"""API4 Unrestricted resource consumption, in what is kept: one table cannot make the
service keep without bound.

Every body a table sends is kept, and unknown fields are welcome (the contract
lets tables add them), so the bound is on size: a round's body past
``ROUND_BODY_MAX_BYTES`` is refused 413 and only its first bytes are kept, with
its size; a batch's items each on the same limit; and each table has an hourly
budget of kept bytes, past which it is answered 429 with Retry-After. A chunked
body (no Content-Length) is read to its end where the server can say where
that is, and refused 411 where it cannot.
"""

from __future__ import annotations

import io
import json
import os

import pytest
import yaml

from api import throttling
from rounds.models import Round, Submission
from tests.api.records import BATCH, ROUNDS, record

pytestmark = pytest.mark.django_db
LIMIT = 64 * 1024
KEPT = 4 * 1024


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.ROUND_BODY_MAX_BYTES = LIMIT
    settings.ROUND_BODY_KEPT_BYTES = KEPT
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024
    settings.TABLE_KEPT_BYTES_PER_HOUR = 16 * 1024 * 1024


def encoded(data) -> bytes:
    return json.dumps(data).encode()


def padded(round_id: str, size: int) -> bytes:
    """A valid round whose body is exactly ``size`` bytes, by an unknown field the contract allows."""
    bare = encoded(record(round_id, padding=""))
    body = encoded(record(round_id, padding="x" * (size - len(bare))))
    assert len(body) == size
    return body


def post(client, path: str, body: bytes, **extra):
    return client.generic("POST", path, body, content_type="application/json", **extra)


def kept() -> list[Submission]:
    return list(Submission.objects.order_by("id"))


# ---- one round past the limit -------------------------------------------------------------


def test_a_round_padded_past_the_limit_is_413_and_only_its_first_bytes_kept(table_client):
    client = table_client("S01", "se-50kr")
    body = padded("R-big", LIMIT + 1)
    response = post(client, ROUNDS, body)
    assert response.status_code == 413
    answer = response.json()
    assert answer["code"] == "body_too_large" and answer["request_id"] and answer["errors"]["body"]
    (submission,) = kept()
    assert (submission.outcome, submission.http_status) == ("rejected", 413)
    assert bytes(submission.body) == body[:KEPT]
    assert submission.original_size == len(body)
    assert not Round.objects.exists()


def test_a_round_at_the_limit_is_stored_whole(table_client):
    client = table_client("S01", "se-50kr")
    body = padded("R-edge", LIMIT)
    assert post(client, ROUNDS, body).status_code == 201
    (submission,) = kept()
    assert bytes(submission.body) == body and submission.original_size is None


def test_megabytes_of_random_data_keep_kilobytes(table_client):
    """What one table could once add: five bodies of 8 MiB of random bytes, kept whole."""
    client = table_client("S01", "se-50kr")
    junk = os.urandom(1024 * 1024)
    for path in (ROUNDS, BATCH):
        for _ in range(3):
            assert post(client, path, junk).status_code in {400, 413}
    bodies = kept()
    assert len(bodies) == 6
    assert all(len(s.body) <= KEPT and s.original_size == len(junk) for s in bodies)
    assert all(bytes(s.body) == junk[:KEPT] for s in bodies)


def test_a_batch_that_is_not_json_keeps_its_first_bytes_and_size(table_client):
    client = table_client("S01", "se-50kr")
    body = b'{"rounds": [' + b"9" * (2 * LIMIT)
    response = post(client, BATCH, body)
    assert response.status_code == 400 and response.json()["code"] == "invalid"
    (submission,) = kept()
    assert bytes(submission.body) == body[:KEPT] and submission.original_size == len(body)


def test_a_small_unreadable_body_is_still_kept_whole(table_client):
    client = table_client("S01", "se-50kr")
    for path in (ROUNDS, BATCH):
        assert post(client, path, b'{"table": ').status_code == 400
    assert [(bytes(s.body), s.original_size) for s in kept()] == [(b'{"table": ', None)] * 2


def test_the_whole_request_limit_still_applies_and_keeps_the_first_bytes(table_client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 32 * 1024
    client = table_client("S01", "se-50kr")
    body = encoded({"rounds": [record(f"R-{n}", padding="x" * 2000) for n in range(20)]})
    response = post(client, BATCH, body)
    assert response.status_code == 413 and response.json()["code"] == "body_too_large"
    (submission,) = kept()
    assert bytes(submission.body) == body[:KEPT] and submission.original_size == len(body)


# ---- a batch: the limit is each item's ----------------------------------------------------


def test_a_batch_item_past_the_limit_is_413_in_its_place_and_the_rest_stored(table_client):
    client = table_client("S01", "se-50kr")
    items = [record("R-1"), record("R-big", padding="x" * (LIMIT + 1)), record("R-3")]
    response = client.post(BATCH, {"rounds": items}, format="json")
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 413, 201]
    assert results[1]["body"]["code"] == "body_too_large"
    assert set(Round.objects.values_list("round_id", flat=True)) == {"R-1", "R-3"}
    first, big, third = kept()  # in the order sent
    assert (big.claimed_round, big.http_status, len(big.body)) == ("R-big", 413, KEPT)
    assert big.original_size > LIMIT
    assert (first.claimed_round, third.claimed_round) == ("R-1", "R-3")


def test_a_batch_of_many_ordinary_rounds_is_within_every_limit(table_client):
    client = table_client("S01", "se-50kr")
    response = client.post(BATCH, {"rounds": [record(f"R-{n}") for n in range(200)]}, format="json")
    assert [r["status"] for r in response.json()["results"]] == [201] * 200


# ---- the hourly budget of kept bytes ------------------------------------------------------


@pytest.fixture
def clock(monkeypatch):
    moment = {"now": 1_800_000_000.0}
    monkeypatch.setattr(throttling, "_now", lambda: moment["now"], raising=False)
    return moment


def test_a_table_past_its_hourly_budget_is_429_with_retry_after(table_client, settings, clock):
    settings.TABLE_KEPT_BYTES_PER_HOUR = 3 * LIMIT
    client = table_client("S01", "se-50kr")
    other = table_client("S02", "se-50kr")
    for n in range(3):
        assert post(client, ROUNDS, padded(f"R-{n}", LIMIT)).status_code == 201
    spent = Submission.objects.count()

    response = post(client, ROUNDS, encoded(record("R-next")))
    assert response.status_code == 429
    answer = response.json()
    assert answer["code"] == "kept_bytes_exhausted" and answer["request_id"]
    assert 0 < int(response["Retry-After"]) <= 3600
    assert post(client, BATCH, encoded({"rounds": [record("R-next")]})).status_code == 429
    assert Submission.objects.count() == spent  # a refused post keeps nothing
    # Another table's budget is its own.
    assert post(other, ROUNDS, encoded(record("R-1", table="S02"))).status_code == 201

    clock["now"] += int(response["Retry-After"])
    assert post(client, ROUNDS, encoded(record("R-next"))).status_code == 201


def test_the_budget_opens_as_the_oldest_minute_leaves_the_hour(table_client, settings, clock):
    settings.TABLE_KEPT_BYTES_PER_HOUR = 2 * LIMIT
    client = table_client("S01", "se-50kr")
    clock["now"] = 1_800_000_000.0 - 1_800_000_000.0 % 60  # the start of a minute
    assert post(client, ROUNDS, padded("R-1", LIMIT)).status_code == 201
    clock["now"] += 600
    assert post(client, ROUNDS, padded("R-2", LIMIT)).status_code == 201
    clock["now"] += 1
    response = post(client, ROUNDS, encoded(record("R-3")))
    assert response.status_code == 429
    # The first round's minute leaves the hour 3600 s after it began.
    assert int(response["Retry-After"]) == 3600 - 601
    clock["now"] += 3600 - 601 - 1
    assert post(client, ROUNDS, encoded(record("R-3"))).status_code == 429
    clock["now"] += 1
    assert post(client, ROUNDS, encoded(record("R-3"))).status_code == 201


def test_refusals_count_against_the_budget_too(table_client, settings, clock):
    settings.TABLE_KEPT_BYTES_PER_HOUR = 3 * KEPT
    client = table_client("S01", "se-50kr")
    for _ in range(3):
        assert post(client, ROUNDS, os.urandom(LIMIT + 1)).status_code == 413
    assert post(client, ROUNDS, encoded(record())).status_code == 429


def test_no_budget_when_it_is_zero(table_client, settings, clock):
    settings.TABLE_KEPT_BYTES_PER_HOUR = 0
    client = table_client("S01", "se-50kr")
    for n in range(4):
        assert post(client, ROUNDS, padded(f"R-{n}", LIMIT)).status_code == 201


# ---- a chunked body -----------------------------------------------------------------------


def chunked(client, path: str, body: bytes, *, terminated: bool = True):
    """As gunicorn hands a chunked body on: no Content-Length, an input that ends with the body."""
    extra = {"CONTENT_LENGTH": "", "HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": io.BytesIO(body)}
    if terminated:
        extra["wsgi.input_terminated"] = True
    return client.generic("POST", path, b"", content_type="application/json", **extra)


def test_a_chunked_round_is_read_whole_and_stored(table_client):
    client = table_client("S01", "se-50kr")
    body = encoded(record("R-chunked"))
    assert chunked(client, ROUNDS, body).status_code == 201
    (submission,) = kept()
    assert bytes(submission.body) == body
    assert chunked(client, BATCH, encoded({"rounds": [record("R-2")]})).json()["results"][0]["status"] == 201


def test_a_chunked_round_past_the_limit_is_413_without_being_read_whole(table_client):
    client = table_client("S01", "se-50kr")
    body = padded("R-big", 10 * LIMIT)
    response = chunked(client, ROUNDS, body)
    assert response.status_code == 413 and response.json()["code"] == "body_too_large"
    (submission,) = kept()
    assert bytes(submission.body) == body[:KEPT]
    assert submission.original_size == LIMIT + 1  # read only to just past the limit


def test_a_chunked_body_a_server_cannot_end_is_411(table_client):
    client = table_client("S01", "se-50kr")
    response = chunked(client, ROUNDS, encoded(record()), terminated=False)
    assert response.status_code == 411 and response.json()["code"] == "length_required"
    (submission,) = kept()
    assert submission.http_status == 411


# ---- documented ---------------------------------------------------------------------------


def test_the_schema_documents_every_refusal_of_a_tables_post():
    from django.conf import settings

    schema = yaml.safe_load((settings.BASE_DIR / "docs" / "openapi.yaml").read_text())
    for path in ("/api/v1/rounds/", "/api/v1/rounds/batch"):
        responses = schema["paths"][path]["post"]["responses"]
        assert {"411", "413", "429"} <= set(responses), path
