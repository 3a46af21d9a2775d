"""Every body an authenticated table sends is kept, whatever it holds and whatever fails on it."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError

from rounds.models import Submission
from rounds.services import ingest

from .records import BATCH, record

pytestmark = pytest.mark.django_db
ROUNDS = "/api/v1/rounds/"


def _with_lone_surrogate(where: str) -> dict:
    body = record("R-1")
    seat = body["seats"][0]
    if where == "round":
        body["round"] = "R-\ud800"
    elif where == "dealer":
        body["dealer"] = "D\ud800"
    elif where == "decision":
        seat["decision"] = "\ud800"
    elif where == "paid":
        seat["paid"] = {"\ud800": "1"}
    return body


@pytest.mark.parametrize("where", ["round", "dealer", "decision", "paid"])
def test_a_lone_surrogate_anywhere_is_a_400_and_the_body_is_kept(table_client, where):
    """JSON's \\ud800 escape makes text UTF-8 cannot hold; quoted in a refusal, it is kept escaped."""
    client = table_client("S01", "se-50kr")
    body = json.dumps(_with_lone_surrogate(where))  # ASCII on the wire: the escape itself
    response = client.post(ROUNDS, data=body, content_type="application/json")
    assert response.status_code == 400, response.content
    kept = Submission.objects.get()
    assert (bytes(kept.body), kept.http_status) == (body.encode(), 400)

    batch = json.dumps({"rounds": [record("R-2"), _with_lone_surrogate(where)]})
    response = client.post(BATCH, data=batch, content_type="application/json")
    assert [r["status"] for r in response.json()["results"]] == [201, 400]
    assert Submission.objects.count() == 3


def test_a_post_the_database_cannot_serve_is_a_503_and_its_body_is_kept(table_client, monkeypatch):
    def refuse(*args, **kwargs):
        raise OperationalError("deadlock detected")

    monkeypatch.setattr(ingest, "ingest_entries", refuse)
    client = table_client("S01", "se-50kr")
    client.raise_request_exception = False
    response = client.post(ROUNDS, record("R-3"), format="json")
    assert response.status_code == 503
    kept = Submission.objects.get(claimed_round="R-3")
    assert (kept.http_status, kept.outcome) == (503, Submission.Outcome.REJECTED)


def test_a_cache_that_fails_after_the_round_is_stored_does_not_make_it_a_500(table_client, monkeypatch):
    from api import throttling

    def down(*args, **kwargs):
        raise ConnectionError("the cache is down")

    client = table_client("S01", "se-50kr")
    monkeypatch.setattr(throttling.cache, "add", down)
    response = client.post(ROUNDS, record("R-4"), format="json")
    assert response.status_code == 201
    assert Submission.objects.filter(claimed_round="R-4", http_status=201).exists()


def test_a_store_that_fails_and_then_cannot_keep_its_body_is_still_answered_in_the_error_shape(
    table_client, monkeypatch,
):
    from api.rounds import intake

    def broken(*args, **kwargs):
        raise RuntimeError("an engine bug")

    monkeypatch.setattr(ingest, "round_from_wire", broken)
    monkeypatch.setattr(intake, "submission_refuse", broken)
    client = table_client("S01", "se-50kr")
    client.raise_request_exception = False
    response = client.post(ROUNDS, record("R-5"), format="json")
    assert response.status_code == 500
    assert response.json()["code"] == "server_error"
