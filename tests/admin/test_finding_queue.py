"""Auditors work findings in the admin; refused changes are themselves logged."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from rounds.models import Finding, Round
from tests import examples, mistakes
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
QUEUE = "/admin/rounds/finding/"


@pytest.fixture
def flagged(table_client):
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl"):
        if example["expect"]["codes"]:
            client.post("/api/v1/rounds/", example["record"], format="json")
    return list(Finding.objects.order_by("pk"))


def test_an_auditor_sees_the_queue_with_its_filters(flagged, staff):
    client = staff("auditor")
    page = client.get(QUEUE, {"state": "open", "stake": "100"})
    assert page.status_code == 200
    listed = page.context["cl"].result_list
    assert listed and all(abs(f.expected - f.claimed) >= 100 for f in listed)
    assert len(listed) < len(client.get(QUEUE, {"state": "open"}).context["cl"].result_list)
    content = page.content.decode()
    assert "payout_mismatch" in content and "Acknowledge selected findings" in content
    assert client.get(QUEUE, {"age": "7d"}).status_code == 200


def test_the_queue_says_when_each_round_was_dealt_not_only_when_it_came(flagged, staff):
    content = staff("auditor").get(QUEUE, {"state": "all"}).content.decode()
    assert "Dealt at" in content
    for finding in Finding.objects.select_related("round__table"):
        round_ = finding.round
        # On the casino's clock, as the rounds list writes it (one clock: tests/admin/test_one_clock.py).
        assert f"{timezone.localtime(round_.dealt_at):%Y-%m-%d %H:%M}" in content
        assert f"{round_.table.code}/{round_.round_id}" in content


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


@pytest.fixture
def with_awards(flagged, table_client):
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl"):
        client.post("/api/v1/rounds/", example["record"], format="json")
    informational = Finding.objects.filter(informational=True)
    assert informational.exists() and Finding.objects.filter(informational=False, state="open").exists()
    return informational


def _listed(page) -> list[int]:
    return [finding.pk for finding in page.context["cl"].result_list]


def test_the_queue_opens_on_open_actionable_findings_newest_first(with_awards, staff):
    client = staff("auditor")
    Finding.objects.filter(pk=Finding.objects.filter(informational=False).order_by("pk").first().pk).update(
        state="acknowledged")
    page = client.get(QUEUE)
    work = Finding.objects.filter(state="open", informational=False).order_by("-created_at", "-id")
    # A row for each mistake: the off-unit seat's findings are one row, its first.
    assert _listed(page) == mistakes.keys(work) and len(_listed(page)) < work.count()
    # ?state=open is the same list: informational findings never sit in "open".
    assert _listed(client.get(QUEUE, {"state": "open"})) == _listed(page)
    assert set(_listed(client.get(QUEUE, {"state": "informational"}))) == set(with_awards.values_list("pk", flat=True))
    assert len(_listed(client.get(QUEUE, {"state": "all"}))) == len(mistakes.keys(Finding.objects.all()))
    assert _listed(client.get(QUEUE, {"state": "acknowledged"})) == [
        Finding.objects.get(state="acknowledged").pk]


def test_an_unknown_state_is_refused_not_ignored(flagged, staff):
    page = staff("auditor").get(QUEUE, {"state": "bogus"})
    # Django's answer to a lookup it cannot make: the unfiltered list's address with ?e=1.
    assert page.status_code == 302 and page["Location"].endswith("?e=1")


def test_a_queue_row_shows_the_money_at_stake_the_round_and_the_dealer(flagged, staff):
    finding = next(f for f in Finding.objects.select_related("round__table", "round__config_version")
                   if f.expected is not None and f.claimed is not None and f.expected != f.claimed)
    content = staff("auditor").get(QUEUE, {"state": "all"}).content.decode()
    row = content[content.index(f'value="{finding.pk}"'):]
    row = row[:row.index("</tr>")]
    stake = abs(finding.expected - finding.claimed)
    assert f"{stake:,.2f} {finding.round.config_version.currency}" in row
    assert f">{finding.round.table.code}/{finding.round.round_id}</a>" in row
    assert f"/admin/rounds/round/{finding.round_id}/change/" in row
    assert finding.round.dealer in row


def test_the_findings_of_one_gaming_day(flagged, staff):
    day = Round.objects.order_by("gaming_day").values_list("gaming_day", flat=True).first()
    listed = _listed(staff("auditor").get(QUEUE, {"state": "all", "gaming_day": day.isoformat()}))
    assert listed and set(listed) == set(mistakes.keys(Finding.objects.filter(round__gaming_day=day)))
    assert staff("supervisor").get(QUEUE, {"gaming_day": "not-a-day"}).status_code == 302


def test_an_informational_finding_is_not_moved(with_awards, staff):
    award = with_awards.first()
    client = staff("auditor")
    answer = client.post(f"{QUEUE}?state=informational", {"action": "acknowledge", "_selected_action": [award.pk]})
    assert answer.status_code == 302
    assert Finding.objects.get(pk=award.pk).state == "open"
    assert "a record, not work" in [str(m) for m in client.get(QUEUE).context["messages"]][0]
