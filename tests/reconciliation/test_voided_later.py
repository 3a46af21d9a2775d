"""A round a supervisor voids after the fact counts as void, and is not drift."""

from __future__ import annotations

from decimal import Decimal

import pytest

from audit.reconciliation.services import report_run
from rounds.models import Round
from tests import examples

from .days import DAY

pytestmark = pytest.mark.django_db
voids = pytest.importorskip("rounds.services.voids")


def test_a_round_voided_later_is_void_in_the_report_and_its_reversal_balances(table_client, django_user_model):
    client = table_client("U01", "us-30k")
    rounds = examples.load("us-30k.jsonl")[:8]
    for example in rounds:
        assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    before = report_run(day_from=DAY).figures["casino"]["USD"]

    # A round with lit Progressive wagers, so the void reverses meter events.
    target = next(e["record"] for e in rounds
                  if not e["record"].get("void") and any(s.get("progressive_lit") for s in e["record"]["seats"]))
    supervisor = django_user_model.objects.create_superuser("super", password="a-long-test-password")
    voided = voids.round_void(
        round_pk=Round.objects.get(round_id=target["round"]).pk, user=supervisor, reason="shuffler jammed",
    )
    after = report_run(day_from=DAY).figures

    assert after["casino"]["USD"]["void_rounds"] == before["void_rounds"] + 1
    assert after["casino"]["USD"]["hands"] == before["hands"] - len(target["seats"])
    ante = sum(Decimal(str(s["ante"])) for s in target["seats"])
    assert Decimal(after["casino"]["USD"]["handle"]["ante"]) == Decimal(before["handle"]["ante"]) - ante
    assert after["reverification"]["drift"] == 0, after["reverification"]["examples"]
    assert after["pools"]["us-progressive"]["balanced"] is True
    assert voided.status == Round.Status.VOID
