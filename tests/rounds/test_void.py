"""A supervisor voids a stored round: all-zero settlement, meter events reversed, audited."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db.models import Sum

from casino.services import user_roles_set
from progressive.models import MeterEvent, Pool
from rounds.models import Round
from rounds.services import VoidError, round_void
from tests import examples
from trail.models import AuditEvent
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


@pytest.fixture
def person(django_user_model):
    def make(role: str):
        user = django_user_model.objects.create_user(f"{role}-1")
        user_roles_set(user=user, roles=[role], actor=SYSTEM)
        return django_user_model.objects.get(pk=user.pk)  # fresh permission cache

    return make


@pytest.fixture
def jackpot_round(table_client):
    """us-30k example 1: a 10 % and a 100 % award and a reseed in one round."""
    client = table_client("U01", "us-30k")
    response = client.post("/api/v1/rounds/", examples.load("us-30k.jsonl")[0]["record"], format="json")
    assert response.status_code == 201
    return Round.objects.get(pk=response.json()["id"]), client


def test_voiding_zeroes_the_settlement_and_reverses_the_meter(jackpot_round, person):
    round_, _ = jackpot_round
    pool = Pool.objects.get(code="us-progressive")
    events_before = MeterEvent.objects.filter(round=round_).count()

    round_void(round_pk=round_.pk, user=person("supervisor"), reason="shuffler jammed mid-round")

    round_.refresh_from_db()
    assert round_.status == "void" and round_.void_reason == "shuffler jammed mid-round"
    assert all(v == 0 for seat in round_.seats.all() for v in seat.settled().values())
    reversals = list(MeterEvent.objects.filter(round=round_, kind="reversal").order_by("seq"))
    assert len(reversals) == events_before
    pool.refresh_from_db()
    # The meter is back where it stood before the round, and still the sum of its ledger.
    assert pool.meter == Decimal("10000.00")
    assert pool.meter == MeterEvent.objects.filter(pool=pool).aggregate(s=Sum("delta"))["s"]
    event = AuditEvent.objects.get(action="round.voided")
    assert event.before["settled"]["2"]["blind"] != "0.00" and event.actor_name == "supervisor-1"


def test_a_void_needs_a_reason_and_a_supervisor(jackpot_round, person):
    round_, _ = jackpot_round
    with pytest.raises(VoidError, match="reason"):
        round_void(round_pk=round_.pk, user=person("supervisor"), reason="  ")
    with pytest.raises(VoidError, match="supervisor"):
        round_void(round_pk=round_.pk, user=person("auditor"), reason="I think so")
    round_.refresh_from_db()
    assert round_.status != "void"
    assert not MeterEvent.objects.filter(kind="reversal").exists()


def test_a_round_is_voided_once_and_a_resubmission_returns_it_void(jackpot_round, person):
    round_, client = jackpot_round
    supervisor = person("supervisor")
    round_void(round_pk=round_.pk, user=supervisor, reason="malfunction")
    with pytest.raises(VoidError, match="already void"):
        round_void(round_pk=round_.pk, user=supervisor, reason="again")
    again = client.post("/api/v1/rounds/", examples.load("us-30k.jsonl")[0]["record"], format="json")
    assert again.status_code == 200 and again.json()["status"] == "void"
    assert MeterEvent.objects.filter(kind="reversal").count() == 6
