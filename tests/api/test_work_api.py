"""Working findings and voiding rounds through the API: each role allowed or refused."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from casino.services import user_roles_set
from progressive.models import MeterEvent
from rounds.models import Finding, Round
from tests import examples
from trail.models import AuditEvent
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_role(django_user_model):
    def make(role: str) -> APIClient:
        user = django_user_model.objects.create_user(f"{role}-w")
        user_roles_set(user=user, roles=[role], actor=SYSTEM)
        client = APIClient()
        client.force_authenticate(django_user_model.objects.get(pk=user.pk))
        return client

    return make


@pytest.fixture
def table(table_client):
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:14]:
        assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    return client


def _mismatch() -> Finding:
    return Finding.objects.filter(code="payout_mismatch").first()


@pytest.mark.parametrize("role,status", [("auditor", 200), ("supervisor", 200), ("admin", 200), ("table", 403)])
def test_who_may_acknowledge_findings(table, as_role, role, status):
    finding = _mismatch()
    response = as_role(role).post("/api/v1/findings/transition",
                                  {"findings": [finding.pk], "state": "acknowledged"}, format="json")
    assert response.status_code == status
    finding.refresh_from_db()
    assert finding.state == ("acknowledged" if status == 200 else "open")


def test_a_table_key_cannot_work_findings(table):
    response = table.post("/api/v1/findings/transition",
                          {"findings": [_mismatch().pk], "state": "dismissed", "note": "mine"}, format="json")
    assert response.status_code == 403
    assert _mismatch().state == "open"


def test_refusals_are_field_errors(table, as_role):
    client = as_role("auditor")
    finding = _mismatch()
    no_note = client.post("/api/v1/findings/transition", {"findings": [finding.pk], "state": "resolved"},
                          format="json")
    assert no_note.status_code == 400 and "note" in no_note.json()["errors"]
    unknown = client.post("/api/v1/findings/transition", {"findings": [10**9], "state": "acknowledged"},
                          format="json")
    assert unknown.status_code == 400 and "findings" in unknown.json()["errors"]
    bad_state = client.post("/api/v1/findings/transition", {"findings": [finding.pk], "state": "gone"},
                            format="json")
    assert bad_state.status_code == 400 and "state" in bad_state.json()["errors"]


@pytest.mark.parametrize("role,status", [("supervisor", 200), ("admin", 200), ("auditor", 403), ("table", 403)])
def test_who_may_void_a_round(table, as_role, role, status):
    round_ = Round.objects.filter(meter_events__isnull=False).distinct().first()
    response = as_role(role).post(f"/api/v1/rounds/{round_.pk}/void", {"reason": "card reader fault"},
                                  format="json")
    assert response.status_code == status
    round_.refresh_from_db()
    if status == 200:
        assert response.json()["status"] == "void" and round_.void_reason == "card reader fault"
        assert MeterEvent.objects.filter(round=round_, kind="reversal").exists()
    else:
        assert round_.status != "void"
        assert not MeterEvent.objects.filter(kind="reversal").exists()


def test_a_void_without_a_reason_or_twice_is_refused(table, as_role):
    client = as_role("supervisor")
    round_ = Round.objects.first()
    assert client.post(f"/api/v1/rounds/{round_.pk}/void", {"reason": ""}, format="json").status_code == 400
    assert client.post(f"/api/v1/rounds/{round_.pk}/void", {"reason": "fault"}, format="json").status_code == 200
    again = client.post(f"/api/v1/rounds/{round_.pk}/void", {"reason": "fault"}, format="json")
    assert again.status_code == 400 and "round" in again.json()["errors"]
    assert client.post("/api/v1/rounds/999999/void", {"reason": "x"}, format="json").status_code == 404
    assert AuditEvent.objects.filter(action="round.voided").count() == 1


def test_a_table_cannot_void_its_own_round(table):
    round_ = Round.objects.first()
    assert table.post(f"/api/v1/rounds/{round_.pk}/void", {"reason": "oops"}, format="json").status_code == 403
