"""The progressive read endpoints, their filters, and who may adjust a meter."""

from __future__ import annotations

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from progressive.models import MeterEvent, Pool
from rounds.models import Round
from tests import examples
from tests.progressive.records import ROUNDS

pytestmark = pytest.mark.django_db
POOLS = "/api/v1/pools/"
ADJUST = "/api/v1/pools/us-progressive/adjustments"
TRANSFER = "/api/v1/pools/us-progressive/overflow-transfers"
EVENTS = "/api/v1/meter-events/"
HITS = "/api/v1/hits/"


@pytest.fixture
def played(db, table_client):
    """The first six worked us-30k rounds (two 100 % awards and their reseeds among them)."""
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:6]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    return client


def test_pools_show_meter_overflow_reserve_and_the_version_in_force(played, auditor_client):
    body = auditor_client.get(POOLS).json()
    pool = next(p for p in body["results"] if p["code"] == "us-progressive")
    stored = Pool.objects.get(code="us-progressive")
    assert (pool["meter"], pool["overflow"], pool["reserve"]) == (str(stored.meter), "0.00", "0.00")
    assert pool["last_event_seq"] == stored.last_event_seq
    version = pool["version"]
    assert (version["version"], version["wager"], version["rate"], version["reseed"]) == (
        1, "5.00", "0.2000", "10000.00")
    assert version["lines"][0] == {"category": "royal_flush", "qualifier": "hole", "kind": "percent", "amount": "100"}

    detail = auditor_client.get(f"{POOLS}us-progressive/").json()
    assert detail["meter"] == pool["meter"]
    assert auditor_client.get(POOLS, {"currency": "SEK"}).json()["results"] == []
    assert auditor_client.get(f"{POOLS}nope/").status_code == 404


def test_pool_versions_list_by_pool(played, auditor_client):
    body = auditor_client.get("/api/v1/pool-versions/", {"pool": "us-progressive"}).json()
    assert [(v["pool"], v["version"], v["currency"]) for v in body["results"]] == [("us-progressive", 1, "USD")]
    assert auditor_client.get("/api/v1/pool-versions/", {"pool": "other"}).json()["results"] == []


def test_the_ledger_filters_by_kind_round_seat_table_and_time(played, auditor_client):
    everything = auditor_client.get(EVENTS, {"pool": "us-progressive"}).json()["results"]
    assert [e["seq"] for e in everything] == list(range(len(everything), 0, -1))

    awards = auditor_client.get(EVENTS, {"kind": ["award", "reseed"]}).json()["results"]
    assert {e["kind"] for e in awards} == {"award", "reseed"}
    assert len(awards) == MeterEvent.objects.filter(kind__in=["award", "reseed"]).count()

    first = Round.objects.get(round_id="c-us-01")
    of_round = auditor_client.get(EVENTS, {"round": first.pk}).json()["results"]
    assert [(e["kind"], e["seat"], e["amount"]) for e in reversed(of_round)] == [
        # In the contract's order: examples.expected_events puts the contributions highest seat first.
        (kind, seat, f"{amount:.2f}") for kind, seat, amount, _ in examples.expected_events(examples.load("us-30k.jsonl")[0])
    ]
    assert of_round[0]["round"] == {"id": first.pk, "table": "U01", "round": "c-us-01",
                                    "dealt_at": first.dealt_at.isoformat()}
    assert auditor_client.get(EVENTS, {"round_id": "c-us-01", "table": "U01"}).json()["results"] == of_round
    seat_6 = auditor_client.get(EVENTS, {"round": first.pk, "seat": 6}).json()["results"]
    assert {e["seat"] for e in seat_6} == {6} and len(seat_6) == 2

    first_received = Round.objects.order_by("received_at").first().received_at.isoformat()
    before_play = auditor_client.get(EVENTS, {"pool": "us-progressive", "created_before": first_received})
    assert [e["seq"] for e in before_play.json()["results"]] == [1]  # the opening reseed
    during_play = auditor_client.get(EVENTS, {"pool": "us-progressive", "created_after": first_received})
    assert [e["seq"] for e in during_play.json()["results"]] == [e["seq"] for e in everything[:-1]]
    assert auditor_client.get(EVENTS, {"kind": "jackpot"}).status_code == 400


def test_hits_are_awards_with_round_seat_and_hand(played, auditor_client):
    hits = auditor_client.get(HITS, {"pool": "us-progressive", "kind": ["award", "fixed_award"]}).json()["results"]
    expected = [
        (example["record"]["round"], seat, kind)
        for example in examples.load("us-30k.jsonl")[:6]
        for kind, seat, _, _ in example["expect"]["events"] if kind in ("award", "fixed_award")
    ]
    assert sorted((h["round"]["round"], h["seat"], h["kind"]) for h in hits) == sorted(expected)
    assert all(h["hand"] for h in hits)


def test_the_ledger_check_endpoint(played, auditor_client):
    body = auditor_client.get(f"{POOLS}us-progressive/ledger-check").json()
    assert body["ok"] is True and body["problem"] == ""
    assert body["events"] == Pool.objects.get(code="us-progressive").last_event_seq


def test_reads_are_for_casino_staff_only(played):
    anonymous = APIClient()
    for url in (POOLS, EVENTS, HITS, "/api/v1/pool-versions/", f"{POOLS}us-progressive/ledger-check"):
        assert anonymous.get(url).status_code == 401, url
        assert played.get(url).status_code == 403, url  # a table key


# ---- adjustments -------------------------------------------------------------------------


def test_a_supervisor_adjusts_with_a_reason(played, supervisor_client, supervisor):
    meter = Pool.objects.get(code="us-progressive").meter
    response = supervisor_client.post(ADJUST, {"delta": "-2.50", "reason": "display fault"}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["kind"], body["amount"], body["delta"], body["meter_after"], body["actor"], body["reason"]) == (
        "adjustment", "2.50", "-2.50", str(meter - Decimal("2.50")), "supervisor", "display fault")
    event = MeterEvent.objects.get(pk=body["id"])
    assert event.actor_id == supervisor.pk


def test_a_table_key_or_a_person_without_the_permission_gets_403(played, auditor_client):
    before = MeterEvent.objects.count()
    for client in (played, auditor_client):
        response = client.post(ADJUST, {"delta": "5.00", "reason": "no"}, format="json")
        assert response.status_code == 403
        assert response.json()["code"] == "permission_denied"
    assert APIClient().post(ADJUST, {"delta": "5.00", "reason": "no"}, format="json").status_code == 401
    assert MeterEvent.objects.count() == before


@pytest.mark.parametrize(
    "body,field",
    [
        ({"delta": "5.00"}, "reason"),
        ({"delta": "5.00", "reason": "   "}, "reason"),
        ({"delta": "-99999.00", "reason": "too much"}, "delta"),
        ({"delta": "0", "reason": "nothing"}, "delta"),
        ({"delta": 5.5, "reason": "float"}, "delta"),
        ({"reason": "no delta"}, "delta"),
    ],
)
def test_a_refused_adjustment_names_its_field(played, supervisor_client, body, field):
    before = MeterEvent.objects.count()
    response = supervisor_client.post(ADJUST, body, format="json")
    assert response.status_code == 400
    answer = response.json()
    assert answer["code"] == "invalid" and field in answer["errors"], answer
    assert answer["request_id"]
    assert MeterEvent.objects.count() == before


def test_an_adjustment_of_an_unknown_pool_is_404(supervisor_client):
    response = supervisor_client.post("/api/v1/pools/nope/adjustments", {"delta": "1", "reason": "x"}, format="json")
    assert response.status_code == 404


def test_an_overflow_transfer_without_overflow_is_refused(played, supervisor_client):
    response = supervisor_client.post(TRANSFER, {"reason": "after the limit change"}, format="json")
    assert response.status_code == 400
    assert "nothing to transfer" in response.json()["errors"]["amount"][0]
    assert played.post(TRANSFER, {"reason": "table"}, format="json").status_code == 403


def test_the_schema_describes_the_progressive_endpoints(auditor_client, django_user_model):
    staff = django_user_model.objects.create_user("staff", password="a-long-test-password", is_staff=True)
    client = APIClient()
    client.force_authenticate(staff)
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in ("/api/v1/pools/", "/api/v1/pools/{code}/adjustments", "/api/v1/meter-readings/", "/api/v1/hits/"):
        assert path in paths, path
