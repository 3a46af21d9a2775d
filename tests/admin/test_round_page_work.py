"""Working a round's findings from the round's own page, and the round's whole audit trail there.

Each finding on the page links to its own; one a user may work is offered the moves its
state allows (``infra.work.ALLOWED``), each through ``finding_transition``, with the state
the page showed sent back, so that a finding someone else moved meanwhile is not moved on
unseen. The trail lists every audit event of the round and of its findings.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from rounds.models import Finding, Round
from rounds.selectors import round_trail
from rounds.services import finding_transition
from tests import examples
from trail.models import AuditEvent
from trail.services import SYSTEM, audit_record

pytestmark = pytest.mark.django_db
NOTE = "paid the player the 50.00 short, slip 4411"
# How the messages name the fixture's finding.
LABEL = "payout_mismatch, seat 7 (blind)"


@pytest.fixture
def flagged(table_client) -> Round:
    """A round with one payout_mismatch: seat 7's blind paid 100.00 where the rules give 150.00."""
    client = table_client("S01", "se-50kr")
    example = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == ["payout_mismatch"])
    assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    return Round.objects.get(round_id=example["record"]["round"])


@pytest.fixture
def awarded(table_client) -> Round:
    """us-30k.jsonl line 1: a progressive award and the aggregate limit, both informational."""
    record = examples.load("us-30k.jsonl")[0]["record"]
    assert table_client("U01", "us-30k").post("/api/v1/rounds/", record, format="json").status_code == 201
    return Round.objects.get(round_id=record["round"])


@pytest.fixture
def viewer(django_user_model) -> Client:
    """Staff who may read every round and finding but not work them."""
    user = django_user_model.objects.create_user("viewer", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(
        codename__startswith="view_", content_type__app_label__in=["trail", "rounds", "progressive", "audit"],
    ))
    client = Client()
    client.force_login(user)
    return client


def page_of(round_: Round) -> str:
    return reverse("admin:rounds_round_change", args=[round_.pk])


def move_url(finding: Finding) -> str:
    return reverse("admin:rounds_round_finding_move", args=[finding.round_id, finding.pk])


def finding_row(html: str, finding: Finding) -> str:
    start = html.index(f'<tr id="finding-{finding.pk}"')
    return html[start:html.index("</tr>", start)]


def trail(html: str) -> str:
    """The trail's rows: the body of the table under its heading."""
    start = html.index("<tbody>", html.index('id="audit-trail"'))
    return html[start:html.index("</tbody>", start)]


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def move(client: Client, finding: Finding, to_state: str, *, shown: str | None = None,
         note: str = ""):
    return client.post(move_url(finding), {
        "to_state": to_state, "from_state": finding.state if shown is None else shown, "note": note,
    }, follow=True)


# ---- findings on the page ---------------------------------------------------------------------


def test_each_finding_links_to_its_own_page_with_its_state_mover_and_note(flagged, staff):
    finding = Finding.objects.get(round=flagged)
    supervisor = staff("supervisor", "sofia")
    finding_transition(finding_ids=[finding.pk], to_state="acknowledged", user=supervisor.user,
                       note="looking at the camera")
    row = finding_row(supervisor.get(page_of(flagged)).content.decode(), finding)
    assert f'<a href="/admin/rounds/finding/{finding.pk}/change/">payout_mismatch</a>' in row
    assert "Acknowledged" in row and "sofia" in row and "looking at the camera" in row


def test_an_open_finding_offers_the_moves_it_allows_with_the_state_the_page_showed(flagged, staff):
    finding = Finding.objects.get(round=flagged)
    html = staff("auditor").get(page_of(flagged)).content.decode()
    row = finding_row(html, finding)
    offered = re.findall(r'name="to_state" value="(\w+)"', row)
    assert offered == ["acknowledged", "resolved", "dismissed"]  # infra.work.ALLOWED["open"]
    assert "Resolve and Dismiss need a note." in row
    # The form sits outside the admin's own (a form cannot hold another) and carries its CSRF token.
    action = re.escape(move_url(finding))
    form = re.search(rf'<form id="move-{finding.pk}" method="post" action="{action}">(.*?)</form>', html, re.S)
    assert form and 'name="csrfmiddlewaretoken"' in form[1]
    assert '<input type="hidden" name="from_state" value="open">' in form[1]
    assert html.index(f'id="move-{finding.pk}"') > html.index("</form>")


# ---- moving one -------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["auditor", "supervisor"])
def test_a_finding_is_resolved_from_the_round_page_with_a_note(flagged, staff, role):
    client = staff(role)
    finding = Finding.objects.get(round=flagged)
    answer = move(client, finding, "resolved", note=NOTE)
    assert answer.redirect_chain == [(page_of(flagged), 302)]
    assert messages_of(answer) == [f"Finding {LABEL}: open → resolved, with your note."]
    finding.refresh_from_db()
    assert (finding.state, finding.state_note) == ("resolved", NOTE)
    assert finding.state_changed_by_name == f"{role}-a"
    event = AuditEvent.objects.get(action="finding.resolved")
    assert (event.object_id, event.before, event.after) == (
        str(finding.pk), {"state": "open"}, {"state": "resolved", "note": NOTE})
    # The page drawn again shows it resolved, and now offers only Reopen, which needs the note.
    row = finding_row(answer.content.decode(), finding)
    assert "Resolved" in row and NOTE in row
    assert re.findall(r'name="to_state" value="(\w+)"', row) == ["open"]
    assert f'name="note" rows="2" form="move-{finding.pk}" required>' in row


def test_acknowledging_needs_no_note(flagged, staff):
    finding = Finding.objects.get(round=flagged)
    answer = move(staff("auditor"), finding, "acknowledged")
    assert messages_of(answer) == [f"Finding {LABEL}: open → acknowledged."]
    assert Finding.objects.get(pk=finding.pk).state == "acknowledged"


@pytest.mark.parametrize("note", ["", "   \n "])
def test_a_move_that_needs_a_note_is_refused_without_one(flagged, staff, note):
    finding = Finding.objects.get(round=flagged)
    answer = move(staff("auditor"), finding, "resolved", note=note)
    assert answer.redirect_chain == [(page_of(flagged), 302)]
    assert messages_of(answer) == [f"Resolve needs a note saying why: finding {LABEL} was not moved."]
    assert Finding.objects.get(pk=finding.pk).state == "open"
    assert not AuditEvent.objects.filter(action__startswith="finding.").exists()


def test_a_finding_moved_by_someone_else_since_the_page_was_drawn_is_not_moved(flagged, staff):
    finding = Finding.objects.get(round=flagged)
    iris, sofia = staff("auditor", "iris"), staff("supervisor", "sofia")
    drawn = iris.get(page_of(flagged)).content.decode()
    assert '<input type="hidden" name="from_state" value="open">' in drawn
    # Meanwhile: sofia acknowledges it. From acknowledged, resolving is allowed, so only the
    # state the page showed tells that iris would resolve what she has not seen.
    finding_transition(finding_ids=[finding.pk], to_state="acknowledged", user=sofia.user)
    answer = move(iris, finding, "resolved", shown="open", note=NOTE)
    assert messages_of(answer) == [
        f"Finding {LABEL} is acknowledged now (moved by sofia since this page showed it open): "
        "it was not moved. See it as it is below."
    ]
    finding.refresh_from_db()
    assert (finding.state, finding.state_changed_by_name) == ("acknowledged", "sofia")
    assert finding.state_note == ""
    assert not AuditEvent.objects.filter(action="finding.resolved").exists()


def test_a_form_that_names_no_state_is_refused_too(flagged, staff):
    finding = Finding.objects.get(round=flagged)
    client = staff("auditor")
    answer = client.post(move_url(finding), {"to_state": "acknowledged"}, follow=True)
    assert "it was not moved" in messages_of(answer)[0]
    assert Finding.objects.get(pk=finding.pk).state == "open"


def test_a_move_its_state_does_not_allow_is_refused_by_the_service(flagged, staff):
    finding = Finding.objects.get(round=flagged)
    client = staff("auditor")
    move(client, finding, "resolved", note=NOTE)
    finding.refresh_from_db()
    answer = move(client, finding, "dismissed", note="crafted: resolved cannot be dismissed")
    assert messages_of(answer) == [
        f"Finding {LABEL}: finding {finding.pk} is resolved; it cannot become dismissed. "
        "Nothing changed."
    ]
    assert Finding.objects.get(pk=finding.pk).state == "resolved"


def test_an_unknown_move_is_refused(flagged, staff):
    finding = Finding.objects.get(round=flagged)
    answer = move(staff("auditor"), finding, "deleted", note="x")
    assert messages_of(answer) == [f"Finding {LABEL}: no such move. Nothing changed."]
    assert Finding.objects.get(pk=finding.pk).state == "open"


def test_informational_findings_are_shown_and_offered_no_move(awarded, staff):
    informational = list(Finding.objects.filter(round=awarded, informational=True))
    assert {f.code for f in informational} == {"progressive_award", "aggregate_limit_applied"}
    client = staff("supervisor")
    html = client.get(page_of(awarded)).content.decode()
    for finding in informational:
        row = finding_row(html, finding)
        assert f"{finding.code}</a> (informational)" in row and "a record, not work" in row
        assert "to_state" not in row and f'id="move-{finding.pk}"' not in html
        before = finding.state
        answer = move(client, finding, "dismissed", note="not work")
        assert "is informational: a record, not work. Nothing changed." in messages_of(answer)[0]
        assert Finding.objects.get(pk=finding.pk).state == before


def test_without_the_work_permission_there_is_no_form_and_the_move_is_forbidden(flagged, viewer):
    finding = Finding.objects.get(round=flagged)
    html = viewer.get(page_of(flagged)).content.decode()
    assert "payout_mismatch" in html  # the finding is shown
    assert "to_state" not in html and "/findings/" not in html and "Work</th>" not in html
    answer = viewer.post(move_url(finding), {"to_state": "acknowledged", "from_state": "open"})
    assert answer.status_code == 403
    assert viewer.get(move_url(finding)).status_code == 403
    assert Finding.objects.get(pk=finding.pk).state == "open"


def test_the_move_is_a_post_with_a_csrf_token(flagged, staff, django_user_model):
    finding = Finding.objects.get(round=flagged)
    assert staff("auditor").get(move_url(finding)).status_code == 405
    user = django_user_model.objects.get(username="auditor-a")
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(user)
    answer = checked.post(move_url(finding), {"to_state": "acknowledged", "from_state": "open"})
    assert answer.status_code == 403
    assert Finding.objects.get(pk=finding.pk).state == "open"


def test_a_finding_of_another_round_or_a_garbled_id_is_404(flagged, awarded, staff):
    client = staff("auditor")
    client.raise_request_exception = False
    other = Finding.objects.filter(round=awarded).first()
    mine = Finding.objects.get(round=flagged)
    wrong_round = reverse("admin:rounds_round_finding_move", args=[flagged.pk, other.pk])
    assert client.post(wrong_round, {"to_state": "acknowledged", "from_state": "open"}).status_code == 404
    for garbled in ("abc", "1.5", "-1", "99999999999999999999"):
        url = f"/admin/rounds/round/{flagged.pk}/findings/{garbled}/move/"
        assert client.post(url, {"to_state": "acknowledged"}).status_code == 404, garbled
        url = f"/admin/rounds/round/{garbled}/findings/{mine.pk}/move/"
        assert client.post(url, {"to_state": "acknowledged"}).status_code == 404, garbled


# ---- the audit trail --------------------------------------------------------------------------


def test_the_trail_lists_the_round_stored_and_every_move_of_its_findings_with_notes(flagged, staff):
    finding = Finding.objects.get(round=flagged)
    client = staff("auditor", "iris")
    move(client, finding, "resolved", note=NOTE)
    finding.refresh_from_db()
    answer = move(client, finding, "open", note="the slip was for another seat")
    listed = trail(answer.content.decode())
    events = list(AuditEvent.objects.filter(
        object_type__in=["rounds.round", "rounds.finding"]).order_by("seq"))
    assert [e.action for e in events] == ["round.stored", "finding.resolved", "finding.open"]
    rows = re.findall(r"<tr>(.*?)</tr>", listed, re.S)
    assert len(rows) == 3
    stored, resolved, reopened = rows
    assert "round.stored" in stored and "S01" in stored and "the round" in stored
    finding_link = f'<a href="/admin/rounds/finding/{finding.pk}/change/">payout_mismatch, seat 7</a>'
    assert "finding.resolved" in resolved and "open → resolved" in resolved and NOTE in resolved
    assert "iris" in resolved and finding_link in resolved
    assert "finding.open" in reopened and "resolved → open" in reopened
    assert "the slip was for another seat" in reopened and finding_link in reopened
    for event, row in zip(events, rows, strict=True):
        assert f'href="/admin/trail/auditevent/{event.pk}/change/"' in row


def test_the_trail_shows_the_casinos_local_time(flagged, staff, settings):
    event = AuditEvent.objects.get(action="round.stored")
    listed = trail(staff("auditor").get(page_of(flagged)).content.decode())
    from django.utils import timezone

    local = timezone.localtime(event.at)
    assert settings.TIME_ZONE == "Europe/Stockholm"
    assert f"<td>{local:%Y-%m-%d %H:%M}</td>" in listed


def test_the_trail_is_one_query_in_time_order_and_holds_no_other_rounds(
    flagged, awarded, staff, django_assert_num_queries,
):
    mine = Finding.objects.get(round=flagged)
    theirs = Finding.objects.filter(round=awarded).first()
    user = staff("supervisor").user
    # An event about another round's finding (informational findings are not moved).
    audit_record(actor=SYSTEM, action="finding.noted", obj=theirs)
    finding_transition(finding_ids=[mine.pk], to_state="acknowledged", user=user)
    with django_assert_num_queries(1):
        events = list(round_trail(round_=flagged, finding_ids=[mine.pk]))
    assert [(e.object_type, e.object_id, e.action) for e in events] == [
        ("rounds.round", str(flagged.pk), "round.stored"),
        ("rounds.finding", str(mine.pk), "finding.acknowledged"),
    ]
    assert [e.at for e in events] == sorted(e.at for e in events)


# ---- Django's own History ---------------------------------------------------------------------


def test_the_history_link_is_gone_and_history_leads_to_the_trail(flagged, staff):
    client = staff("auditor")
    html = client.get(page_of(flagged)).content.decode()
    assert "historylink" not in html and "/history/" not in html
    assert '<li><a href="#audit-trail">Audit trail</a></li>' in html
    history = client.get(reverse("admin:rounds_round_history", args=[flagged.pk]))
    assert (history.status_code, history["Location"]) == (302, f"{page_of(flagged)}#audit-trail")


def test_every_read_only_admins_history_is_the_audit_log_of_the_object(flagged, staff):
    client = staff("auditor")
    finding = Finding.objects.get(round=flagged)
    history = client.get(reverse("admin:rounds_finding_history", args=[finding.pk]))
    assert history.status_code == 302
    log = f"/admin/trail/auditevent/?object_type=rounds.finding&object_id={finding.pk}"
    assert history["Location"] == log
    assert client.get(history["Location"]).status_code == 200
    client.raise_request_exception = False
    assert client.get(reverse("admin:rounds_finding_history", args=["99999999"])).status_code == 404
