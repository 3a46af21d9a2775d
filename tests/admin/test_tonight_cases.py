"""The tonight page's cases: each count the queue it links to lists, for the one looking."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from infra.work import Priority
from rounds.models import Finding
from rounds.services import case_change, case_escalate, finding_transition
from tests import examples, mistakes

pytestmark = pytest.mark.django_db


def test_yours_overdue_and_escalated_match_the_queues_they_open(table_client, staff, settings):
    settings.NOTICES_TO = []
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl"):
        client.post("/api/v1/rounds/", example["record"], format="json")
    # Five mistakes, the first an Ante off the unit: three findings, one case, one row.
    firsts = mistakes.firsts(Finding.objects.filter(informational=False).order_by("pk"))
    off_unit = next(f for f in firsts if f.code == "bet_off_unit")
    work = [off_unit, *(f for f in firsts if f.code != "bet_off_unit")][:5]
    assert len(work) == 5
    mates = Finding.objects.filter(round_id=off_unit.round_id, seat=off_unit.seat, code="bet_off_unit")
    assert mates.count() > 1
    me, other = staff("auditor", "me"), staff("auditor", "other")
    past, later = timezone.now() - timedelta(hours=1), timezone.now() + timedelta(hours=1)
    case_change(model=Finding, finding_id=work[0].pk, user=me.user, assignee=me.user, due_at=past)
    case_change(model=Finding, finding_id=work[1].pk, user=me.user, assignee=me.user, due_at=later)
    case_change(model=Finding, finding_id=work[2].pk, user=me.user, assignee=other.user, due_at=past,
                priority=Priority.HIGH)
    case_escalate(model=Finding, finding_id=work[3].pk, user=me.user, note="look now")
    # Resolved: no longer counted anywhere, though past due and mine.
    case_change(model=Finding, finding_id=work[4].pk, user=me.user, assignee=me.user, due_at=past)
    finding_transition(finding_ids=[work[4].pk], to_state="resolved", user=me.user, note="paid back")

    assert {(f.assignee_id, f.due_at) for f in mates} == {(me.user.pk, past)}
    page = me.get("/admin/")
    (rounds_cases, *others) = page.context["cases"]
    assert rounds_cases.kind == "rounds' findings" and {c.kind for c in others} == {"variance findings",
                                                                                    "game protection"}
    assert (rounds_cases.mine, rounds_cases.overdue, rounds_cases.escalated) == (2, 2, 1)
    assert 'data-mine="2" data-overdue="2" data-escalated="1"' in page.content.decode()
    # Each count opens the queue of exactly the findings it counted.
    for link, expected in ((rounds_cases.link_mine, {work[0].pk, work[1].pk}),
                           (rounds_cases.link_overdue, {work[0].pk, work[2].pk}),
                           (rounds_cases.link_escalated, {work[3].pk})):
        listed = me.get(link)
        assert listed.status_code == 200, link
        assert {f.pk for f in listed.context["cl"].result_list} == expected, link
    # The other one's count is his own.
    assert other.get("/admin/").context["cases"][0].mine == 1
    for kind in others:  # the other queues take their links too
        assert me.get(kind.link_overdue).status_code == 200
