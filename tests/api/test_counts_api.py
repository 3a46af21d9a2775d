"""The cage's counts through the API: sent, corrected with why, listed, refused field by field; only a
person who may enter counts sends one."""

from __future__ import annotations

from decimal import Decimal

import pytest

from audit.models import TableCount
from tests.security.people import person_client
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db

URL = "/api/v1/counts/"
COUNT = {"table": "S01", "gaming_day": "2026-11-28", "drop": "12500.00", "fills": "3000.00", "credits": "500.00",
         "opening_inventory": "100000.00", "closing_inventory": "98000.00"}


@pytest.fixture
def s01(table_client):
    return table_client("S01", "se-50kr")


def test_a_count_sent_corrected_with_why_and_listed(s01):
    cage = person_client("supervisor", "cage-api")
    first = cage.post(URL, COUNT, format="json")
    assert first.status_code == 201, first.json()
    answer = first.json()
    assert (answer["table"], answer["currency"], answer["drop"], answer["current"]) == ("S01", "SEK", "12500.00", True)
    # drop + credits − fills + closing − opening chip tray
    assert Decimal(answer["count_win"]) == Decimal("12500") + 500 - 3000 + 98000 - 100000

    again = cage.post(URL, {**COUNT, "drop": "12600.00"}, format="json")
    assert again.status_code == 400 and "note" in again.json()["errors"]
    corrected = cage.post(URL, {**COUNT, "drop": "12600.00", "note": "a box counted twice"}, format="json")
    assert corrected.status_code == 201 and corrected.json()["replaces"] == answer["id"]

    listed = cage.get(URL).json()["results"]
    assert [(c["id"], c["current"]) for c in listed] == [(corrected.json()["id"], True), (answer["id"], False)]
    assert [c["drop"] for c in cage.get(URL, {"current": "true"}).json()["results"]] == ["12600.00"]
    assert cage.get(URL, {"table": "S02"}).json()["results"] == []
    assert [e.action for e in AuditEvent.objects.filter(object_type="audit.tablecount").order_by("seq")] == [
        "count.entered", "count.corrected"]


@pytest.mark.parametrize("field,value", [
    ("drop", 12500.0),  # a float is never money
    ("drop", "-1.00"),
    ("fills", "10.005"),
    ("table", "NO-SUCH"),
    ("gaming_day", "2999-01-01"),
    ("gaming_day", "28/11/2026"),
])
def test_refusals_are_field_errors_and_keep_nothing(s01, field, value):
    answer = person_client("supervisor", "cage-refused").post(URL, {**COUNT, field: value}, format="json")
    assert answer.status_code == 400 and field in answer.json()["errors"], answer.json()
    assert not TableCount.objects.exists()


def test_only_a_person_who_may_enter_counts_sends_one(s01):
    auditor = person_client("auditor", "count-reader")
    assert auditor.post(URL, COUNT, format="json").status_code == 403
    assert auditor.get(URL).status_code == 200
    assert s01.post(URL, COUNT, format="json").status_code == 403
    assert s01.get(URL).status_code == 403
    assert person_client(None, "count-nobody").get(URL).status_code == 403
    assert not TableCount.objects.exists()
