"""API4 Unrestricted resource consumption: every way in is bounded.

Already elsewhere: a round or batch body past the size limit is a 413
(tests/api), a batch of more than 1,000 records a 400 (tests/api/test_batch.py),
an export of more than 366 days a 400 (tests/audit/test_exports.py), each
table's throttle (tests/test_login_and_throttling.py). Here: the size limit
on every other write, bodies built to exhaust the parser, page sizes a
caller cannot raise, and the throttles of people and of strangers.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from api import throttling
from rounds.models import Submission
from tests.api.records import BATCH, ROUNDS, us_record

from .people import person_client

pytestmark = pytest.mark.django_db
LIMIT = 4096


@pytest.mark.parametrize("path, body", [
    ("/api/v1/pools/us-progressive/adjustments", {"delta": "1.00", "reason": "x" * 2 * LIMIT}),
    ("/api/v1/findings/transition", {"findings": list(range(1000, 2000)), "state": "acknowledged"}),
    ("/api/v1/rounds/1/void", {"reason": "x" * 2 * LIMIT}),
])
def test_every_write_refuses_a_body_past_the_limit_with_413(settings, path, body):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    response = person_client("supervisor").post(path, body, format="json")
    assert response.status_code == 413, response.status_code
    assert response.json()["code"] == "body_too_large"


def test_a_tables_reading_past_the_limit_is_413(table_client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = LIMIT
    client = table_client("U01", "us-30k")
    response = client.post("/api/v1/meter-readings/", {
        "displayed": "1.00", "reported_at": "2026-11-29T21:00:00+01:00", "note": "x" * 2 * LIMIT,
    }, format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "body_too_large"


@pytest.mark.parametrize("body", [
    b"[" * 100_000 + b"]" * 100_000,  # nested past the parser's recursion limit
    b'{"rounds": [' + b"1," * 200_000 + b"1]}",  # a long list, well within the size limit
    b'{"a": "' + b"\\u0000" * 100_000 + b'"}',
], ids=["deep", "long", "nul-escapes"])
def test_a_body_built_to_exhaust_the_round_intake_is_a_400_and_kept(table_client, body, settings):
    # Past the single round's limit such a body is a 413 unread (test_bounded_storage.py):
    # a higher limit here, so that the reader itself meets it.
    settings.ROUND_BODY_MAX_BYTES = 1024 * 1024
    client = table_client("U01", "us-30k")
    for path in (ROUNDS, BATCH):
        response = client.generic("POST", path, body, content_type="application/json")
        assert response.status_code == 400, (path, response.status_code)
        assert response.json()["errors"]
    assert Submission.objects.filter(outcome="rejected").count() == 2


def test_a_deeply_nested_body_to_any_other_write_is_a_400(db):
    supervisor = person_client("supervisor")
    response = supervisor.generic(
        "POST", "/api/v1/pools/us-progressive/adjustments", "[" * 100_000 + "]" * 100_000,
        content_type="application/json",
    )
    assert response.status_code == 400, response.status_code


def test_a_caller_cannot_raise_the_page_size(table_client):
    client = table_client("U01", "us-30k")
    for n in range(14):  # 4 lit wagers a round: 56 contributions, past one page
        assert client.post(ROUNDS, us_record(f"U-{n}"), format="json").status_code == 201
    auditor = person_client("auditor")
    for params in ({"page_size": 100_000}, {"limit": 100_000}, {"page_size": -1}):
        page = auditor.get("/api/v1/meter-events/", params).json()
        assert len(page["results"]) == 50 and page["next"], params


def test_each_person_has_a_budget_of_their_own(monkeypatch):
    monkeypatch.setattr(throttling.PersonRateThrottle, "THROTTLE_RATES", {"user": "3/min"})
    ann, bo = person_client("auditor", "ann"), person_client("auditor", "bo")
    assert [ann.get("/api/v1/pools/").status_code for _ in range(4)] == [200, 200, 200, 429]
    refused = ann.get("/api/v1/pools/")
    assert refused.json()["code"] == "throttled" and int(refused["Retry-After"]) > 0
    assert bo.get("/api/v1/pools/").status_code == 200


def test_strangers_share_one_small_budget_per_address(monkeypatch):
    # What a stranger may read at all (the schema); everything else refuses them before any work.
    monkeypatch.setattr(throttling.AnonRateThrottle, "THROTTLE_RATES", {"anon": "2/min"})
    stranger = APIClient()
    assert [stranger.get("/api/schema/").status_code for _ in range(3)] == [200, 200, 429]
    other_address = APIClient(REMOTE_ADDR="10.0.0.2")
    assert other_address.get("/api/schema/").status_code == 200
