"""Pool versions through the API: one that changes what is paid is a 202 request for a second supervisor."""

from __future__ import annotations

import pytest

from casino.services import user_roles_set
from progressive.models import Pool, PoolVersionRequest
from tests.security.people import person, person_client
from trail.services import Actor

pytestmark = pytest.mark.django_db

REQUESTS = "/api/v1/pool-version-requests/"


def _body(**change) -> dict:
    first = Pool.objects.get(code="us-progressive").versions.get(version=1)
    lines = [dict(line, amount="200") if line["category"] == "flush" else line for line in first.lines]
    body = {"effective_from": "2030-01-01T00:00:00+01:00", "wager": "5.00", "rate": "0.20",
            "reseed": "10000.00", "lines": lines, "note": "flush pays 200"}
    return body | change


def test_a_supervisors_award_line_waits_and_a_second_supervisor_approves_it():
    asker = person_client("supervisor", "asker")
    answer = asker.post("/api/v1/pools/us-progressive/versions", _body(), format="json")
    assert answer.status_code == 202, answer.json()
    asked = answer.json()
    assert asked["state"] == "pending" and asked["version"] is None and asked["requested_by"] == "asker"
    assert asked["numbers"]["lines"][5] == {"category": "flush", "qualifier": "any", "kind": "fixed",
                                           "amount": "200"}
    assert not Pool.objects.get(code="us-progressive").versions.filter(version=2).exists()

    own = asker.post(f"{REQUESTS}{asked['id']}/approve", format="json")
    assert own.status_code == 403
    auditor = person_client("auditor", "reader")
    assert auditor.post(f"{REQUESTS}{asked['id']}/approve", format="json").status_code == 403
    assert auditor.get(f"{REQUESTS}?state=pending").json()["results"][0]["id"] == asked["id"]

    second = person_client("supervisor", "second")
    approved = second.post(f"{REQUESTS}{asked['id']}/approve", format="json")
    assert approved.status_code == 200, approved.json()
    body = approved.json()
    assert body["state"] == "approved" and body["decided_by"] == "second" and body["version"]["version"] == 2
    again = second.post(f"{REQUESTS}{asked['id']}/reject", {"note": "late"}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "decided"


def test_a_puppet_is_refused_409_and_a_note_alone_is_made_at_once():
    boss = person("admin", "boss")
    puppet = person(None, "puppet")
    user_roles_set(user=puppet, roles=["supervisor"], actor=Actor.of_user(boss))
    client = person_client("supervisor", "other")
    client.force_authenticate(boss)
    asked = client.post("/api/v1/pools/us-progressive/versions", _body(), format="json").json()
    client.force_authenticate(puppet)
    refused = client.post(f"{REQUESTS}{asked['id']}/approve", format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "not_independent"

    first = Pool.objects.get(code="us-progressive").versions.get(version=1)
    same = person_client("supervisor", "asker").post(
        "/api/v1/pools/us-progressive/versions", _body(lines=first.lines, note="restated"), format="json")
    assert same.status_code == 201 and same.json()["version"] == 2 and same.json()["note"] == "restated"


def test_an_auditor_cannot_make_a_pool_version_and_a_bad_one_is_a_400():
    auditor = person_client("auditor", "reader")
    assert auditor.post("/api/v1/pools/us-progressive/versions", _body(), format="json").status_code == 403
    bad = person_client("supervisor").post("/api/v1/pools/us-progressive/versions",
                                           _body(rate="1.50"), format="json")
    assert bad.status_code == 400 and "rate" in bad.json()["errors"]
    assert not PoolVersionRequest.objects.exists()
