"""A batch is stored a run at a time; every item is still kept and answered as if sent alone."""

from __future__ import annotations

import pytest

from api.rounds import intake
from rounds.models import Round, Submission
from rounds.services import ingest
from trail.selectors import audit_chain_verify

from .records import BATCH, record

pytestmark = pytest.mark.django_db


def test_runs_split_by_size_and_by_refusals_keep_every_body_in_order(table_client, monkeypatch):
    monkeypatch.setattr(intake, "CHUNK", 3)
    client = table_client("S01", "se-50kr")
    broken = record("R-5")
    broken["seats"][0]["ante"] = "-1"
    items = [record(f"R-{n}") for n in range(1, 5)] + [broken] + [record(f"R-{n}") for n in range(6, 10)]
    items.append(record("R-2"))  # a replay of a round stored two runs earlier
    items.append(record("R-7", dealer="D0001"))  # a conflict with a round stored earlier in the batch

    results = client.post(BATCH, {"rounds": items}, format="json").json()["results"]

    assert [r["status"] for r in results] == [201] * 4 + [400] + [201] * 4 + [200, 409]
    assert results[9]["body"] == results[1]["body"]
    assert list(Submission.objects.order_by("pk").values_list("claimed_round", "http_status")) == [
        (item["round"], r["status"]) for item, r in zip(items, results)
    ]
    assert Round.objects.count() == 8
    assert audit_chain_verify().ok


def test_a_record_that_breaks_its_runs_transaction_sinks_alone(table_client, monkeypatch):
    real = ingest.round_from_wire

    def read(wire):
        if wire["round"] == "R-2":
            raise RuntimeError("an engine bug that only this record meets")
        return real(wire)

    monkeypatch.setattr(ingest, "round_from_wire", read)
    client = table_client("S01", "se-50kr")
    client.raise_request_exception = False

    results = client.post(BATCH, {"rounds": [record(f"R-{n}") for n in range(1, 5)]}, format="json")

    assert results.status_code == 200
    statuses = [r["status"] for r in results.json()["results"]]
    assert statuses == [201, 500, 201, 201]
    assert results.json()["results"][1]["body"]["code"] == "server_error"
    assert sorted(Round.objects.values_list("round_id", flat=True)) == ["R-1", "R-3", "R-4"]
    # Nothing lost: the body the service failed to store is kept, with what became of it.
    kept = Submission.objects.get(claimed_round="R-2")
    assert (kept.http_status, kept.outcome, kept.round_id) == (500, Submission.Outcome.REJECTED, None)
    assert b'"R-2"' in bytes(kept.body)
    assert audit_chain_verify().ok


def test_a_single_post_the_service_fails_to_store_keeps_its_body(table_client, monkeypatch):
    def read(wire):
        raise RuntimeError("an engine bug")

    monkeypatch.setattr(ingest, "round_from_wire", read)
    client = table_client("S01", "se-50kr")
    client.raise_request_exception = False
    response = client.post("/api/v1/rounds/", record("R-9"), format="json")
    assert response.status_code == 500
    assert response.json()["code"] == "server_error"
    kept = Submission.objects.get(claimed_round="R-9")
    assert (kept.http_status, kept.outcome) == (500, Submission.Outcome.REJECTED)
    assert not Round.objects.exists()
