"""What the fuzzer found, each kept as a test that asks for what the contract says.

Fixed ones are regression tests. Those still open are pinned as strict
xfails: each fails today; when its fix lands it passes, which ``strict=True``
reports as a failure (XPASS), so that whoever fixed it removes the marker here
and the matching exemption in tests/fuzz/test_openapi_fuzz.py.
"""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from progressive.models import Pool
from rounds.models import Round, Submission
from tests import examples
from tests.api.records import ROUNDS, us_record
from tests.fuzz.schema import OPERATIONS
from tests.security.people import person_client

pytestmark = pytest.mark.django_db

FAR_OFFSET = "2026-11-29T21:14:03+23:30"  # Python allows ±23:59, PostgreSQL ±15:59
RFC_3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def answering_500s(client: APIClient) -> APIClient:
    """The test client re-raises a view's exception; see the 500 a client would get instead."""
    client.raise_request_exception = False
    return client


@pytest.fixture
def person(db):
    return person_client


def test_a_round_dealt_at_a_far_utc_offset_is_a_400_and_kept(table_client):
    """Was a 500 (PostgreSQL refuses offsets past ±15:59), and the body was not kept."""
    client = answering_500s(table_client("U01", "us-30k"))
    response = client.post(ROUNDS, us_record(dealt_at=FAR_OFFSET), format="json")
    assert response.status_code in (201, 400), response.status_code
    if response.status_code == 400:
        assert "dealt_at" in response.json()["errors"]
    assert Submission.objects.count() == 1


@pytest.mark.parametrize("path, name", [
    ("/api/v1/rounds/", "dealt_after"),
    ("/api/v1/findings/", "dealt_before"),
    ("/api/v1/meter-events/", "created_after"),
    ("/api/v1/hits/", "created_before"),
    ("/api/v1/meter-readings/", "reported_after"),
    ("/api/v1/pool-versions/", "in_force_at"),
])
def test_a_filter_at_a_far_utc_offset_is_a_400_naming_it(person, path, name):
    """Was a 500: the filter passed the offset on to PostgreSQL."""
    response = person("auditor").get(path, {name: "2026-11-29T21:14:03+20:00"})
    assert response.status_code == 400, response.status_code
    assert name in response.json()["errors"]


def test_voiding_a_round_the_meter_cannot_give_back_is_refused_not_a_500(table_client, person):
    """Was a 500: the reversal's refusal escaped round_void as a bare ValueError."""
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:4]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    meter = Pool.objects.get(code="us-progressive").meter
    royal = Round.objects.get(round_id=examples.load("us-30k.jsonl")[0]["record"]["round"])

    response = person("supervisor").post(f"/api/v1/rounds/{royal.pk}/void", {"reason": "machine fault"},
                                         format="json")

    assert response.status_code in (400, 409), response.status_code
    assert {"code", "message", "request_id"} <= set(response.json())
    assert Pool.objects.get(code="us-progressive").meter == meter
    royal.refresh_from_db()
    assert royal.status != Round.Status.VOID


@pytest.mark.parametrize("path", ["/api/v1/pools/not a slug!/ledger-check", "/api/v1/no-such-thing/"])
def test_a_path_no_route_matches_is_a_404_in_the_error_shape(person, path):
    """Was Django's HTML page."""
    response = person("auditor").get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert {"code", "message", "request_id"} <= set(response.json())


@pytest.mark.parametrize("moment", ["0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01"])
@pytest.mark.parametrize("path, name", [("/api/v1/findings/", "dealt_after"), ("/api/v1/hits/", "created_before")])
def test_a_filter_moment_outside_pythons_years_in_utc_is_a_400_naming_it(person, path, name, moment):
    """Was a 500: a moment of year 1 (or 9999) in its own offset is year 0 (or 10000) in UTC."""
    response = person("auditor").get(path, {name: moment})
    assert response.status_code == 400, response.status_code
    assert name in response.json()["errors"]


@pytest.mark.parametrize("path, name", [
    ("/api/v1/meter-readings/", "flagged"),
    ("/api/v1/findings/", "informational"),
])
def test_a_boolean_filter_refuses_what_is_not_a_boolean(person, path, name):
    """Was read as no filter at all: every reading, flagged or not, with a 200."""
    response = person("auditor").get(path, {name: "maybe"})
    assert response.status_code == 400, response.status_code
    assert name in response.json()["errors"]


def test_every_time_the_api_answers_is_rfc_3339(table_client):
    """Was answered in local mean time ('+01:12:12'), which breaks the schema's date-time."""
    client = table_client("U01", "us-30k")
    response = client.post(ROUNDS, us_record(dealt_at="1044-04-24T20:59:28Z"), format="json")
    assert response.status_code in (201, 400)
    if response.status_code == 201:
        assert RFC_3339.match(response.json()["dealt_at"]), response.json()["dealt_at"]
    reading = client.post("/api/v1/meter-readings/", {"displayed": "10", "reported_at": "1044-04-24T20:59:28Z"},
                          format="json")
    assert reading.status_code in (201, 400)
    if reading.status_code == 201:
        assert RFC_3339.match(reading.json()["reported_at"]), reading.json()["reported_at"]


@pytest.mark.parametrize("label", ["POST /api/v1/rounds/", "POST /api/v1/rounds/batch"])
def test_the_round_endpoints_document_only_the_json_they_read(label):
    content = OPERATIONS[label].definition.raw["requestBody"]["content"]
    assert set(content) == {"application/json"}


def test_an_adjustment_past_what_a_meter_can_hold_is_refused_not_a_500(person):
    meter = Pool.objects.get(code="us-progressive").meter
    response = person("supervisor").post(
        "/api/v1/pools/us-progressive/adjustments", {"delta": "999999999999", "reason": "fat finger"},
        format="json",
    )
    assert response.status_code == 400, response.status_code
    assert "delta" in response.json()["errors"]
    assert Pool.objects.get(code="us-progressive").meter == meter
