"""Auditors work findings in the admin; refused changes are themselves logged."""

from __future__ import annotations

import pytest
from django.test import Client

from audit.models import AuditEvent
from audit.services import SYSTEM
from casino.services import user_roles_set
from rounds.models import Finding, Round
from tests import examples

pytestmark = pytest.mark.django_db
QUEUE = "/admin/rounds/finding/"


@pytest.fixture
def flagged(table_client):
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl"):
        if example["expect"]["codes"]:
            client.post("/api/v1/rounds/", example["record"], format="json")
    return list(Finding.objects.order_by("pk"))


@pytest.fixture
def staff(django_user_model):
    def login(role: str) -> Client:
        user = django_user_model.objects.create_user(f"{role}-a", password="pw-for-tests-only")
        user_roles_set(user=user, roles=[role], actor=SYSTEM)
        client = Client()
        client.force_login(user)
        return client

    return login


def test_an_auditor_sees_the_queue_with_its_filters(flagged, staff):
    client = staff("auditor")
    page = client.get(QUEUE, {"state": "open", "stake": "100"})
    assert page.status_code == 200
    content = page.content.decode()
    assert "payout_mismatch" in content and "Acknowledge selected findings" in content
    assert client.get(QUEUE, {"age": "7d"}).status_code == 200


def test_bulk_acknowledge_moves_every_selected_finding(flagged, staff):
    client = staff("auditor")
    ids = [str(f.pk) for f in flagged[:3]]
    response = client.post(QUEUE, {"action": "acknowledge", "_selected_action": ids})
    assert response.status_code == 302
    assert set(Finding.objects.filter(pk__in=ids).values_list("state", flat=True)) == {"acknowledged"}
    assert AuditEvent.objects.filter(action="finding.acknowledged").count() == 3


def test_resolving_asks_for_a_note_first(flagged, staff):
    client = staff("auditor")
    target = str(flagged[0].pk)
    form = client.post(QUEUE, {"action": "resolve", "_selected_action": [target]})
    assert form.status_code == 200 and b'name="note"' in form.content
    assert Finding.objects.get(pk=target).state == "open"
    done = client.post(QUEUE, {"action": "resolve", "_selected_action": [target], "apply": "1",
                               "note": "paid the player the difference"})
    assert done.status_code == 302
    finding = Finding.objects.get(pk=target)
    assert (finding.state, finding.state_note) == ("resolved", "paid the player the difference")


def test_the_note_page_says_what_will_happen_and_can_be_cancelled(flagged, staff):
    client = staff("auditor")
    targets = flagged[:2]
    filtered = f"{QUEUE}?state=open"
    page = client.post(filtered, {"action": "dismiss", "_selected_action": [str(f.pk) for f in targets]})
    content = page.content.decode()
    # Asked, not told: nothing has happened yet, and it says so.
    assert "<title>Dismiss 2 findings?" in content and "Nothing has changed yet" in content
    for finding in targets:
        assert f"{finding.code} — {finding.round.table.code}/{finding.round.round_id}" in content
    assert f'href="{filtered}" class="button cancel-link">Cancel</a>' in content
    assert set(Finding.objects.filter(pk__in=[f.pk for f in targets]).values_list("state", flat=True)) == {"open"}
    assert client.get(filtered).status_code == 200  # where Cancel leads: the list as it was filtered


def test_without_the_work_permission_there_is_no_action(flagged, django_user_model):
    user = django_user_model.objects.create_user("viewer", is_staff=True)
    from django.contrib.auth.models import Permission

    user.user_permissions.add(Permission.objects.get(codename="view_finding"))
    client = Client()
    client.force_login(user)
    assert b"Acknowledge selected" not in client.get(QUEUE).content
    client.post(QUEUE, {"action": "acknowledge", "_selected_action": [str(flagged[0].pk)]})
    assert Finding.objects.get(pk=flagged[0].pk).state == "open"


def test_an_attempt_to_change_a_round_is_refused_and_logged(flagged, staff):
    client = staff("supervisor")
    round_ = Round.objects.first()
    response = client.post(f"/admin/rounds/round/{round_.pk}/change/", {"dealer": "D999"})
    assert response.status_code == 403
    assert Round.objects.get(pk=round_.pk).dealer == round_.dealer
    event = AuditEvent.objects.get(action="admin.change_refused")
    assert (event.object_type, event.object_id, event.actor_name) == (
        "rounds.round", str(round_.pk), "supervisor-a"
    )
