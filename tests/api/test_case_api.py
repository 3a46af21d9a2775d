"""A finding's case through the API: given, commented, escalated and told, for a round's finding and a
game-protection finding; the mistake's other findings reached, each with its own event; refusals are
field errors and a table or a reader who may not work findings changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Permission
from django.core import mail
from rest_framework.test import APIClient

from audit.models import ProtectionFinding
from rounds.models import Finding
from api.cases import COMMENTS_SHOWN
from tests.api.test_protection_api import finding as protection_finding
from tests.mistakes import off_unit
from tests.security.people import person, person_client
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db

DUE = datetime(2026, 12, 24, 18, 0, tzinfo=UTC)


def _case(finding) -> str:
    return f"/api/v1/findings/{finding.pk}/case"


def _events(finding, action: str) -> list[AuditEvent]:
    model = type(finding)
    return list(AuditEvent.objects.filter(object_type=model._meta.label_lower, object_id=str(finding.pk),
                                          action=f"{model.work_name}.{action}").order_by("seq"))


def test_a_case_given_commented_and_escalated_reaches_every_finding_of_the_mistake(table_client, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    ante, blind, play = off_unit(table_client)
    worker = person("auditor", "case-worker")
    boss = person("supervisor", "case-boss")
    boss.email = "boss@casino.test"
    boss.save(update_fields=["email"])
    client = person_client("auditor", "case-api")

    read = client.get(_case(blind))
    assert read.status_code == 200
    assert read.json() == {"finding": blind.pk, "findings": [ante.pk, blind.pk, play.pk], "state": "open",
                           "assignee": None, "priority": "normal", "due_at": None, "escalated_at": None,
                           "comments": [], "comments_total": 0}

    given = client.patch(_case(blind), {"assignee": worker.username, "priority": "high",
                                        "due_at": DUE.isoformat()}, format="json")
    assert given.status_code == 200, given.json()
    assert (given.json()["assignee"], given.json()["priority"]) == ("case-worker", "high")
    for one in (ante, blind, play):
        one.refresh_from_db()
        assert (one.assignee_id, one.priority, one.due_at) == (worker.pk, 2, DUE)
        (event,) = _events(one, "case")
        assert event.actor_name == "case-api" and event.after["assignee"] == "case-worker"

    # Only what is given changes: the due time cleared, the person and priority kept.
    cleared = client.patch(_case(ante), {"due_at": None}, format="json").json()
    assert (cleared["assignee"], cleared["priority"], cleared["due_at"]) == ("case-worker", "high", None)

    commented = client.post(f"{_case(play)}/comments", {"comment": "seen on camera 4"}, format="json")
    assert commented.status_code == 201
    assert [(c["by"], c["text"]) for c in commented.json()["comments"]] == [("case-api", "seen on camera 4")]
    assert all(len(_events(one, "comment")) == 1 for one in (ante, blind, play))

    escalated = client.post(f"{_case(ante)}/escalation", {"note": "third time this week"}, format="json")
    assert escalated.status_code == 200, escalated.json()
    assert escalated.json()["told"] is True and escalated.json()["escalated_at"] is not None
    (told,) = mail.outbox
    assert "boss@casino.test" in told.to and f"#{blind.pk} (blind), #{play.pk} (play)" in told.body
    assert all(len(_events(one, "escalated")) == 1 for one in (ante, blind, play))

    again = client.post(f"{_case(blind)}/escalation", {"note": "again"}, format="json")
    assert again.status_code == 400 and "findings" in again.json()["errors"]
    assert len(mail.outbox) == 1


def test_refusals_are_field_errors_and_change_nothing(table_client):
    finding, *_ = off_unit(table_client)
    client = person_client("auditor", "case-refused")
    refused = {
        "assignee": client.patch(_case(finding), {"assignee": "nobody-here"}, format="json"),
        "priority": client.patch(_case(finding), {"priority": "whenever"}, format="json"),
        "due_at": client.patch(_case(finding), {"due_at": "tomorrow"}, format="json"),
        "case": client.patch(_case(finding), {}, format="json"),
        "comment": client.post(f"{_case(finding)}/comments", {"comment": ""}, format="json"),
        "note": client.post(f"{_case(finding)}/escalation", {}, format="json"),
    }
    for field, answer in refused.items():
        assert answer.status_code == 400, (field, answer.content)
        assert field in answer.json()["errors"], (field, answer.json())
    # The priority it has already: nothing to change, said as such.
    same = client.patch(_case(finding), {"priority": "normal"}, format="json")
    assert same.status_code == 400 and "findings" in same.json()["errors"]
    assert client.get(f"/api/v1/findings/{finding.pk + 1000}/case").status_code == 404
    # No such finding is said first, whatever the body holds.
    assert client.patch(f"/api/v1/findings/{finding.pk + 1000}/case", {}, format="json").status_code == 404
    assert not AuditEvent.objects.filter(object_type="rounds.finding", action__startswith="finding.").exists()


def test_a_table_and_a_reader_who_may_not_work_findings_change_nothing(table_client):
    finding, *_ = off_unit(table_client)
    table = table_client("S01", "se-50kr")
    assert table.get(_case(finding)).status_code == 403
    assert table.patch(_case(finding), {"priority": "urgent"}, format="json").status_code == 403
    reader = person(None, "case-reader")
    reader.is_staff = True
    reader.save(update_fields=["is_staff"])
    reader.user_permissions.add(Permission.objects.get(codename="view_finding", content_type__app_label="rounds"))
    client = APIClient()
    client.force_authenticate(type(reader).objects.get(pk=reader.pk))  # fetched again: its permissions anew
    assert client.get(_case(finding)).status_code == 200
    for answer in (client.patch(_case(finding), {"priority": "urgent"}, format="json"),
                   client.post(f"{_case(finding)}/comments", {"comment": "mine"}, format="json"),
                   client.post(f"{_case(finding)}/escalation", {"note": "mine"}, format="json")):
        assert answer.status_code == 403
    assert Finding.objects.get(pk=finding.pk).priority == 3
    assert person_client(None, "case-nobody").get(_case(finding)).status_code == 403


def test_a_game_protection_findings_case_is_worked_the_same_way(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    suspicion = protection_finding("hole_carding", "P-0001")
    client = person_client("supervisor", "case-surveillance")
    url = f"/api/v1/protection/findings/{suspicion.pk}/case"
    given = client.patch(url, {"assignee": "case-surveillance", "priority": "urgent"}, format="json")
    assert given.status_code == 200, given.json()
    assert given.json()["findings"] == [suspicion.pk]
    assert ProtectionFinding.objects.get(pk=suspicion.pk).priority == 1
    assert client.post(f"{url}/escalation", {"note": "pattern over three nights"}, format="json").status_code == 200
    assert len(_events(suspicion, "escalated")) == 1
    assert client.get(f"/api/v1/protection/findings/{suspicion.pk + 1000}/case").status_code == 404


def test_a_case_with_many_comments_carries_its_newest_and_pages_through_them_all(table_client):
    _, blind, _ = off_unit(table_client)
    client = person_client("auditor", "case-api")
    for n in range(COMMENTS_SHOWN + 35):
        assert client.post(f"{_case(blind)}/comments", {"comment": f"note {n}"}, format="json").status_code == 201
    total = COMMENTS_SHOWN + 35
    case = client.get(_case(blind)).json()
    assert case["comments_total"] == total
    assert [c["text"] for c in case["comments"]] == [f"note {n}" for n in range(35, total)]
    read, url = [], f"{_case(blind)}/comments"
    while url:
        page = client.get(url)
        assert page.status_code == 200, page.json()
        read += [c["text"] for c in page.json()["results"]]
        url = page.json()["next"]
    assert read == [f"note {n}" for n in range(total)]
    assert client.get("/api/v1/findings/999999/case/comments").status_code == 404
    assert client.get(f"{_case(blind)}/comments", {"cursor": "not-one"}).status_code == 404
