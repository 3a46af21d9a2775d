"""API1 Broken object level and API5 broken function level authorization.

Every operation of docs/openapi.yaml is tried by every kind of caller, with
path parameters that point at real objects of *another* table, so a refusal
cannot come from a 404. What each caller may do:

- a table: post its own rounds (single, batch) and its own pool's meter
  readings; nothing else, and no object of another table;
- an auditor: read everything, work findings; no meter adjustment, no void;
- a supervisor: also adjust meters and void rounds;
- a person without a role, or nobody: nothing.

tests/api and tests/progressive check the happy paths of each; this file
checks the refusals of all of them at once, so an endpoint added without its
permission is caught here.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from rounds.models import Finding, Round
from tests.api.records import ROUNDS, record, us_record
from tests.fuzz.schema import OPERATIONS, TABLE_OPERATIONS

from .people import person_client

pytestmark = pytest.mark.django_db

SUPERVISOR_OPERATIONS = {
    "POST /api/v1/pools/{code}/adjustments", "POST /api/v1/pools/{code}/overflow-transfers",
    "POST /api/v1/rounds/{id}/void", "POST /api/v1/rounds/{id}/place",
    "POST /api/v1/adjustment-requests/{id}/approve", "POST /api/v1/adjustment-requests/{id}/reject",
    "POST /api/v1/pools/{code}/versions",
    "POST /api/v1/pool-version-requests/{id}/approve", "POST /api/v1/pool-version-requests/{id}/reject",
    "POST /api/v1/counts/",
}
AUDITOR_WRITES = {"POST /api/v1/findings/transition"}
REFUSED = {401, 403}


@pytest.fixture
def floor(table_client):
    """Table U02's stored round and finding; tables U01 (same pool) and S01 (no pool) are the intruders."""
    owner = table_client("U02", "us-30k")
    paid_wrong = us_record("U02-1", table="U02")
    paid_wrong["seats"][0]["paid"]["ante"] = "25"
    assert owner.post(ROUNDS, paid_wrong, format="json").status_code == 201
    round_ = Round.objects.get(round_id="U02-1")
    return {
        "round": round_,
        "finding": Finding.objects.filter(round=round_).first(),
        "U01": table_client("U01", "us-30k"),
        "S01": table_client("S01", "se-50kr"),
    }


def call(client: APIClient, label: str, floor: dict, *, as_table: str | None = None):
    method, path = label.split(" ", 1)
    path = (path.replace("{id}", str(floor["round"].pk)).replace("{code}", "us-progressive")
            .replace("{what}", "rounds").replace("{key}", "abcdef"))
    bodies = {
        "/api/v1/rounds/": record("R-x", table="U02"),  # another table's round
        "/api/v1/rounds/batch": {"rounds": [record("R-y", table="U02")]},
        "/api/v1/meter-readings/": {"displayed": "10000.00", "reported_at": "2026-11-29T21:00:00+01:00"},
        "/api/v1/pools/us-progressive/adjustments": {"delta": "-5000.00", "reason": "take it"},
        "/api/v1/pools/us-progressive/overflow-transfers": {"reason": "take it"},
        "/api/v1/findings/transition": {"findings": [floor["finding"].pk], "state": "dismissed", "note": "gone"},
        f"/api/v1/rounds/{floor['round'].pk}/void": {"reason": "hide it"},
        f"/api/v1/rounds/{floor['round'].pk}/place": {"note": "count it"},
        f"/api/v1/adjustment-requests/{floor['round'].pk}/approve": {},
        f"/api/v1/adjustment-requests/{floor['round'].pk}/reject": {"note": "not needed"},
        "/api/v1/pools/us-progressive/versions": {
            "effective_from": "2030-01-01T00:00:00+00:00", "wager": "5.00", "rate": "0.90", "reseed": "1.00",
            "lines": [{"category": "flush", "qualifier": "any", "kind": "fixed", "amount": "9000"}],
        },
        f"/api/v1/pool-version-requests/{floor['round'].pk}/approve": {},
        f"/api/v1/pool-version-requests/{floor['round'].pk}/reject": {"note": "not needed"},
        "/api/v1/tokens/": {"days": 1, "name": "mine now"},
        "/api/v1/tokens/abcdef/": {},
        "/api/v1/counts/": {"table": "U02", "gaming_day": "2026-11-28", "drop": "1.00", "fills": "0.00",
                            "credits": "0.00", "opening_inventory": "0.00", "closing_inventory": "0.00"},
    }
    for kind in ("findings", "protection/findings"):
        case = f"/api/v1/{kind}/{floor['round'].pk}/case"
        bodies.update({case: {"priority": "urgent"}, f"{case}/comments": {"comment": "mine"},
                       f"{case}/escalation": {"note": "look"}})
    if method == "GET":
        query = {"first_day": "2026-11-29", "last_day": "2026-11-29"} if "exports" in path else {}
        return client.get(path, query)
    return getattr(client, method.lower())(path, bodies[path], format="json")


def assert_untouched(floor: dict):
    round_ = Round.objects.get(pk=floor["round"].pk)
    assert round_.status == Round.Status.FLAGGED and round_.voided_at is None
    assert Finding.objects.get(pk=floor["finding"].pk).state == "open"
    assert not Round.objects.filter(round_id__in=["R-x", "R-y"]).exists()


@pytest.mark.parametrize("label", sorted(set(OPERATIONS) - TABLE_OPERATIONS))
@pytest.mark.parametrize("intruder", ["U01", "S01"])
def test_a_table_reaches_no_staff_operation_not_even_for_its_own_pool(floor, label, intruder):
    response = call(floor[intruder], label, floor)
    assert response.status_code in REFUSED, (label, response.status_code)
    assert_untouched(floor)


def test_a_table_cannot_post_another_tables_round_single_or_batched(floor):
    single = call(floor["U01"], "POST /api/v1/rounds/", floor)
    batch = call(floor["U01"], "POST /api/v1/rounds/batch", floor)
    assert single.status_code == 403
    assert batch.status_code == 200 and [r["status"] for r in batch.json()["results"]] == [403]
    assert_untouched(floor)


def test_a_table_cannot_report_a_reading_for_a_pool_it_does_not_feed(floor):
    response = floor["S01"].post("/api/v1/meter-readings/", {
        "pool": "us-progressive", "displayed": "1.00", "reported_at": "2026-11-29T21:00:00+01:00",
    }, format="json")
    assert response.status_code == 403


def test_a_table_key_opens_no_admin_page(floor):
    for path in ("/admin/", "/admin/rounds/round/", f"/admin/rounds/round/{floor['round'].pk}/change/"):
        response = floor["U01"].get(path)
        assert response.status_code == 403, path
        assert b"Table keys are for the table API only" in response.content


@pytest.mark.parametrize("label", sorted(SUPERVISOR_OPERATIONS))
def test_an_auditor_cannot_do_a_supervisors_work(floor, label):
    response = call(person_client("auditor"), label, floor)
    assert response.status_code == 403, response.status_code
    assert_untouched(floor)


@pytest.mark.parametrize("label", sorted(TABLE_OPERATIONS))
@pytest.mark.parametrize("role", ["auditor", "supervisor", "admin"])
def test_people_cannot_post_as_a_table(floor, label, role):
    assert call(person_client(role, f"{role}-p"), label, floor).status_code in REFUSED
    assert_untouched(floor)


@pytest.mark.parametrize("label", sorted(OPERATIONS))
@pytest.mark.parametrize("who", ["nobody", "no role"])
def test_strangers_reach_nothing(floor, label, who):
    client = APIClient() if who == "nobody" else person_client(None, "stranger")
    assert call(client, label, floor).status_code in REFUSED, label
    assert_untouched(floor)


def test_a_supervisor_may_do_what_the_auditor_may_not(floor):
    supervisor = person_client("supervisor")
    assert call(supervisor, "POST /api/v1/pools/{code}/adjustments", floor).status_code == 201
    assert call(supervisor, "POST /api/v1/rounds/{id}/void", floor).status_code == 200
