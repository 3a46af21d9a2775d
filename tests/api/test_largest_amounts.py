"""The largest amounts the contract allows are settled, stored, answered and read back exactly.

ROUND_RECORD.md: a wager has at most 12 integer digits, a ``paid`` amount at
most 15 (a 500:1 Blind on the largest wager). Run on PostgreSQL and, by
``scripts/test``, on SQLite too: single posts and batches, resubmitted, read
back; past the limits a 400 that names the field, and the body kept.
"""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from rounds.models import Seat, Submission

pytestmark = pytest.mark.django_db
ROUNDS = "/api/v1/rounds/"

LARGEST = "999999999950"  # the largest whole number of 50 kr units with 12 digits
ROYAL_BLIND = "499999999975000.00"  # 500:1 on it: 15 digits
ROYAL_TRIPS = "49999999997500.00"  # 50:1


def _record(round_id: str, seats: int = 7) -> dict:
    """Seat 1 holds a royal flush with the board; every seat wagers the most the wire allows."""
    holes = [["Ah", "Kh"], ["2c", "3c"], ["2d", "3d"], ["4c", "5c"], ["4d", "5d"], ["6c", "7c"], ["6d", "7d"]]
    return {
        "table": "S01", "round": round_id, "dealt_at": "2026-11-28T21:00:00+01:00", "dealer": "D1",
        "board": ["Qh", "Jh", "Th", "2s", "3s"], "dealer_cards": ["9s", "8s"],
        "seats": [
            {"seat": n + 1, "hole": holes[n], "ante": LARGEST, "blind": LARGEST, "trips": LARGEST,
             "decision": "river_1x", "play": LARGEST}
            for n in range(seats)
        ],
    }


def _paid_right(record: dict, answer: dict) -> dict:
    """The record with every seat's ``paid`` exactly what the service settled."""
    paid = copy.deepcopy(record)
    settled = {s["seat"]: s["settled"] for s in answer["seats"]}
    for seat in paid["seats"]:
        seat["paid"] = dict(settled[seat["seat"]])
    paid["round"] = record["round"] + "-paid"
    return paid


def test_the_largest_wagers_settle_and_read_back_exactly(table_client):
    client = table_client("S01", "se-50kr")
    record = _record("BIG-1")
    response = client.post(ROUNDS, record, format="json")
    assert response.status_code == 201, response.json()
    answer = response.json()
    royal = answer["seats"][0]
    assert royal["hand"] == "royal_flush"
    assert (royal["settled"]["blind"], royal["settled"]["trips"]) == (ROYAL_BLIND, ROYAL_TRIPS)
    assert royal["ante"] == f"{LARGEST}.00"

    read = _staff_read(answer["id"])
    assert read["seats"] == answer["seats"]
    stored = Seat.objects.get(round_id=answer["id"], seat=1)
    assert stored.settled_blind == Decimal(ROYAL_BLIND)

    again = table_client("S01", "se-50kr").post(ROUNDS, record, format="json")
    assert again.status_code == 200, again.json()
    assert again.json()["seats"] == answer["seats"]

    # The right claims for it (15-digit paid amounts) verify.
    paid = _paid_right(record, answer)
    verified = table_client("S01", "se-50kr").post(ROUNDS, paid, format="json")
    assert verified.status_code == 201, verified.json()
    assert {f["code"] for f in verified.json()["findings"]} <= {"bet_above_maximum", "bet_off_unit"}
    assert not [f for f in verified.json()["findings"] if f["code"] == "payout_mismatch"]


def test_the_largest_wagers_in_a_batch_resubmitted_in_a_batch(table_client):
    client = table_client("S01", "se-50kr")
    records = [_record(f"BIG-B{n}") for n in range(3)]
    first = client.post(f"{ROUNDS}batch", {"rounds": records}, format="json")
    assert first.status_code == 200
    assert [item["status"] for item in first.json()["results"]] == [201, 201, 201]
    again = client.post(f"{ROUNDS}batch", {"rounds": records}, format="json")
    assert [item["status"] for item in again.json()["results"]] == [200, 200, 200]
    for one, other in zip(first.json()["results"], again.json()["results"], strict=True):
        assert one["body"]["seats"] == other["body"]["seats"]
        assert one["body"]["seats"][0]["settled"]["blind"] == ROYAL_BLIND


@pytest.mark.parametrize("where,value,field", [
    ("ante", "1000000000000", "ante"),  # 13 integer digits
    ("paid", "-1000000000000000", "blind"),  # 16 integer digits
])
def test_an_amount_past_the_limits_is_a_400_naming_its_field_and_the_body_is_kept(table_client, where, value, field):
    client = table_client("S01", "se-50kr")
    record = _record(f"BIG-X-{where}", seats=1)
    if where == "paid":
        record["seats"][0]["paid"] = {"blind": value}
    else:
        record["seats"][0]["ante"] = value
    response = client.post(ROUNDS, record, format="json")
    assert response.status_code == 400, response.json()
    errors = response.json()["errors"]["seats"]["0"]
    assert field in (errors["paid"] if where == "paid" else errors), errors
    assert Submission.objects.filter(claimed_round=record["round"], http_status=400).exists()


def _staff_read(pk: int) -> dict:
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    user = get_user_model().objects.create_superuser("big-reader", password="a-long-test-password")
    client = APIClient()
    client.force_authenticate(user)
    response = client.get(f"{ROUNDS}{pk}/")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_day_of_the_largest_wagers_reconciles(table_client):
    """A nightly report carries the largest amounts through every figure (handle, win, the
    variance of the theoretical win, the seat counts), without overflow, and completes."""
    from datetime import date

    from audit.reconciliation.services import report_run

    client = table_client("S01", "se-50kr")
    answers = [client.post(ROUNDS, _record(f"BIG-R{n}"), format="json").json() for n in range(3)]
    client.post(ROUNDS, _paid_right(_record("BIG-R0"), answers[0]), format="json")

    report = report_run(day_from=date(2026, 11, 28))

    assert report.status == "complete", report.error
    table = report.figures["tables"]["S01"]["SEK"]
    # Four rounds of seven seats, each wagering the largest Ante, Blind, Trips and Play.
    assert Decimal(table["handle_total"]) == 4 * 7 * 4 * Decimal(LARGEST)
    assert Decimal(table["var_base"]) > 0 and table["bands"]["total"]["sd"]
