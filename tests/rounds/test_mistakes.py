"""One mistake, one row: an Ante off the unit is worked, listed and told once, its findings kept each."""

from __future__ import annotations

import smtplib
from datetime import timedelta

import pytest
from django.core.mail.backends.base import BaseEmailBackend
from django.utils import timezone

from audit.notices import RETRY_AFTER, notices_send
from audit.proof_findings import finding_states_unrecorded
from audit.tonight import tonight
from rounds.models import Finding
from rounds.services import case_change, case_comment, case_escalate, finding_transition
from tests import examples, mistakes
from tests.security.people import person
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db

QUEUE = "/admin/rounds/finding/"


class RefusingBackend(BaseEmailBackend):
    def send_messages(self, email_messages):
        raise smtplib.SMTPServerDisconnected("the mail server went away")


def _events(finding: Finding, action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(object_type="rounds.finding", object_id=str(finding.pk),
                                          action=f"finding.{action}").order_by("seq"))


def test_the_queue_lists_a_seats_off_unit_bets_as_one_row_naming_each(table_client, staff):
    found = mistakes.off_unit(table_client, seats=(1, 4))
    page = staff("auditor").get(QUEUE, {"state": "all"})
    listed = page.context["cl"].result_list
    assert [f.pk for f in listed] == sorted(mistakes.keys(found), reverse=True)
    assert len(listed) == 2 and len(found) == 6
    content = page.content.decode()
    row = content[content.index(f'value="{found[0].pk}"'):]
    row = row[:row.index("</tr>")]
    assert "1 · ante, blind, play" in row and "75.00 · 75.00 · 225.00" in row
    assert page.context["cl"].result_count == 2


def test_a_move_of_one_moves_its_mates_each_with_its_event_and_no_other(table_client):
    ante, blind, play, *other_seat = mistakes.off_unit(table_client, seats=(1, 2))
    alice = person("auditor", "alice")
    moved = finding_transition(finding_ids=[blind.pk], to_state="acknowledged", user=alice)
    assert sorted(f.pk for f in moved) == [ante.pk, blind.pk, play.pk]
    states = dict(Finding.objects.values_list("pk", "state"))
    assert [states[f.pk] for f in (ante, blind, play)] == ["acknowledged"] * 3
    assert {states[f.pk] for f in other_seat} == {"open"}, "another seat's bets are another mistake"
    assert all(len(_events(f, "acknowledged")) == 1 for f in (ante, blind, play))
    assert list(finding_states_unrecorded()) == []


def test_a_mate_moved_apart_is_a_row_of_its_own_and_stays_where_it_is(table_client, staff):
    """A mistake whose findings stand in two states (moved apart before they were worked together)
    is a row for each state, and a move of one row leaves the other as it is."""
    ante, blind, play = mistakes.off_unit(table_client)
    Finding.objects.filter(pk=play.pk).update(state="acknowledged")
    listed = staff("auditor").get(QUEUE, {"state": "unresolved"}).context["cl"].result_list
    assert sorted(f.pk for f in listed) == [ante.pk, play.pk]
    finding_transition(finding_ids=[ante.pk], to_state="resolved", user=person("auditor", "alice"), note="a chip short")
    assert dict(Finding.objects.values_list("pk", "state")) == {
        ante.pk: "resolved", blind.pk: "resolved", play.pk: "acknowledged"}


def test_the_queues_action_asks_once_for_the_mistake_and_moves_all_three(table_client, staff):
    ante, blind, play = mistakes.off_unit(table_client)
    client = staff("auditor")
    asked = client.post(QUEUE, {"action": "resolve", "_selected_action": [str(ante.pk)]})
    assert asked.status_code == 200 and "ante, blind, play: moved together" in asked.content.decode()
    done = client.post(QUEUE, {"action": "resolve", "_selected_action": [str(ante.pk)], "apply": "1",
                               "note": "the player was paid to the rules"})
    assert done.status_code == 302
    assert set(Finding.objects.values_list("state", flat=True)) == {"resolved"}


def test_a_case_change_and_a_comment_reach_every_mate_and_the_proof_holds(table_client):
    ante, blind, play = mistakes.off_unit(table_client)
    alice = person("auditor", "alice")
    due = timezone.now() + timedelta(hours=2)
    case_change(model=Finding, finding_id=play.pk, user=alice, assignee=alice, due_at=due)
    case_comment(model=Finding, finding_id=ante.pk, user=alice, text="the chips were 25s")
    for finding in Finding.objects.filter(pk__in=[ante.pk, blind.pk, play.pk]):
        assert (finding.assignee_id, finding.due_at) == (alice.pk, due)
        assert len(_events(finding, "case")) == 1
        assert [e.after["comment"] for e in _events(finding, "comment")] == ["the chips were 25s"]
    assert list(finding_states_unrecorded()) == []
    # A mate whose case was made to differ by hand is named by the proof, as any finding.
    Finding.objects.filter(pk=blind.pk).update(assignee=None, assignee_name="")
    assert [(d.finding_pk, d.column) for d in finding_states_unrecorded()] == [(blind.pk, "case")]


def test_an_escalation_reaches_every_mate_and_is_told_once(table_client, mailoutbox, settings):
    settings.NOTICES_TO = ["floor@casino.example"]
    ante, blind, play = mistakes.off_unit(table_client)
    alice = person("auditor", "alice")
    escalated = case_escalate(model=Finding, finding_id=ante.pk, user=alice, note="three times tonight")
    assert escalated.told
    (mail,) = mailoutbox
    assert f"#{blind.pk} (blind), #{play.pk} (play)" in mail.body
    for finding in (ante, blind, play):
        assert Finding.objects.get(pk=finding.pk).escalated_at is not None
        assert [e.after["sent"] for e in _events(finding, "notified")] == [True]
    assert notices_send(now=timezone.now() + RETRY_AFTER * 2)["escalations"] == 0


def test_an_escalation_refused_is_told_again_once_for_the_mistake(table_client, mailoutbox, settings):
    settings.NOTICES_TO = ["floor@casino.example"]
    ante, blind, play = mistakes.off_unit(table_client)
    settings.EMAIL_BACKEND = f"{__name__}.RefusingBackend"
    alice = person("auditor", "alice")
    assert case_escalate(model=Finding, finding_id=blind.pk, user=alice, note="again").told is False
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert notices_send(now=timezone.now() + RETRY_AFTER + timedelta(minutes=1))["escalations"] == 1
    (mail,) = mailoutbox
    assert f"#{blind.pk} (blind), #{play.pk} (play)" in mail.body, "told by the first, the ante"
    assert all(len(_events(f, "notified")) == 2 for f in (ante, blind, play))


def test_the_finding_page_names_its_mates(table_client, staff):
    ante, blind, play = mistakes.off_unit(table_client)
    content = staff("auditor").get(f"{QUEUE}{blind.pk}/change/").content.decode()
    assert f'href="/admin/rounds/finding/{ante.pk}/change/">#{ante.pk}</a> (ante)' in content
    assert f'href="/admin/rounds/finding/{play.pk}/change/">#{play.pk}</a> (play)' in content
    assert "moved, assigned and escalated together" in content


def test_tonight_counts_the_mistake_once_as_its_link_lists_it(table_client, staff):
    found = mistakes.off_unit(table_client, seats=(2, 5), dealt_at=examples.last_gaming_day_evening(timezone.now()))
    day = found[0].round.gaming_day
    day_figures = next(d for d in tonight().days if d.day == day)
    (off_unit,) = [o for o in day_figures.findings if o.code == "bet_off_unit"]
    assert off_unit.count == 2
    listed = staff("auditor").get(off_unit.url).context["cl"].result_list
    assert len(listed) == off_unit.count


def test_a_move_from_the_rounds_page_says_it_moved_the_mates(table_client, staff):
    ante, blind, play = mistakes.off_unit(table_client)
    client = staff("auditor")
    page = client.post(f"/admin/rounds/round/{play.round_id}/findings/{play.pk}/move/",
                       {"to_state": "acknowledged", "from_state": "open"}, follow=True)
    said = [str(m) for m in page.context["messages"]]
    assert any(f"the same mistake's #{ante.pk} (ante), #{blind.pk} (blind)" in m for m in said), said
    assert set(Finding.objects.values_list("state", flat=True)) == {"acknowledged"}


def test_tallied_mistakes_are_the_rows_the_queue_lists(table_client):
    """The tally's two counts (``work_tally.share_of`` as findings are written and moved, ``recounted``
    by the database each night) count what ``one_row_each`` lists: mates once, a mate moved apart
    once more, another seat's bets apart, findings raised once each."""
    from rounds.mistakes import one_row_each
    from rounds.models import Round
    from rounds.services.work_tally import recounted, share_of

    ante, blind, play, *other_seat = mistakes.off_unit(table_client, seats=(1, 2))
    mistakes.off_unit(table_client, "off-unit-2")
    Finding.objects.filter(pk=play.pk).update(state="acknowledged")
    Finding.objects.create(round=ante.round, code=ante.code, seat=None, detail="a seat-less one, no mates")
    Finding.objects.create(round=ante.round, code=ante.code, seat=None, detail="and another")
    listed = one_row_each(Finding.objects.all())
    assert listed.count() == len(list(listed)) == 6  # two mistakes of the first round's seat 1, its
    # seat 2, the second round's seat 1, and the two seat-less findings
    day_of = {r.pk: (r.gaming_day, r.config_version_id) for r in Round.objects.all()}
    assert sum(n for n, _ in share_of(Finding.objects.order_by("pk"), day_of).values()) == 6
    assert sum(n for n, _ in recounted().values()) == 6
