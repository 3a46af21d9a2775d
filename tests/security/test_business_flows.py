"""API6 Unrestricted access to sensitive business flows: what a dishonest table would try.

A dealer who paid wrongly would like the round to disappear or its payout to
change after the fact; a table would like the meter to grow without wagers.
None of that is possible through the API: a stored round is changed by
nothing a table sends, replays move no money, and a reading moves no meter.
"""

from __future__ import annotations

import pytest

from progressive.models import MeterEvent, Pool
from rounds.models import Finding, Round, Seat
from tests.api.records import ROUNDS, us_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def caught(table_client):
    """U01's round in which the dealer paid a folded seat's Ante: stored, flagged."""
    client = table_client("U01", "us-30k")
    sent = us_record("U-1")
    sent["seats"][0]["paid"]["ante"] = "25"
    assert client.post(ROUNDS, sent, format="json").status_code == 201
    client.sent = sent
    return client


def books() -> tuple:
    return (
        list(Round.objects.values_list("pk", "status", "record_hash", "voided_at")),
        list(Seat.objects.order_by("pk").values_list("settled_ante", "paid_ante")),
        list(MeterEvent.objects.order_by("pk").values_list("pk", "delta")),
        Pool.objects.get(code="us-progressive").meter,
    )


@pytest.mark.parametrize("cover_up", ["void", "paid", "fewer seats", "other cards"])
def test_a_table_cannot_rewrite_a_stored_round(caught, cover_up):
    before = books()
    rewritten = dict(caught.sent)
    if cover_up == "void":
        rewritten = {**rewritten, "void": True}
    elif cover_up == "paid":
        rewritten["seats"] = [dict(s, paid={**s["paid"], "ante": "-25"}) for s in rewritten["seats"]]
    elif cover_up == "fewer seats":
        rewritten["seats"] = rewritten["seats"][1:]
    else:
        rewritten["dealer_cards"] = ["Ac", "Ad"]

    response = caught.post(ROUNDS, rewritten, format="json")

    assert response.status_code == 409
    assert books() == before
    stored = Round.objects.get(round_id="U-1")
    assert stored.status == Round.Status.FLAGGED
    assert set(Finding.objects.filter(round=stored).values_list("code", flat=True)) >= {
        "payout_mismatch", "conflicting_resubmission"}


def test_replaying_a_round_moves_no_money(caught):
    before = books()
    for _ in range(20):
        assert caught.post(ROUNDS, caught.sent, format="json").status_code == 200
    assert books() == before


def test_a_meter_reading_moves_no_meter(caught):
    before = books()
    response = caught.post("/api/v1/meter-readings/", {
        "displayed": "999999.00", "reported_at": "2026-11-29T21:30:00+01:00"}, format="json")
    assert response.status_code == 201 and response.json()["flagged"] is True
    assert books() == before


def test_a_table_cannot_void_through_the_supervisors_door(caught):
    pk = Round.objects.get(round_id="U-1").pk
    response = caught.post(f"/api/v1/rounds/{pk}/void", {"reason": "malfunction, honest"}, format="json")
    assert response.status_code == 403
    assert Round.objects.get(pk=pk).voided_at is None
