"""A finding worked as a case in a real browser: taken, prioritised, given a time, commented,
escalated and the supervisors mailed, each step in the page's trail and the database; the queue's
"mine" and "overdue" list it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from casino.services import user_roles_set
from rounds.models import Finding
from tests import examples
from tests.browser import chromium, signed_in
from trail.models import AuditEvent
from trail.services import SYSTEM

PASSWORD = "browser-test-password"


@pytest.mark.django_db(transaction=True)
def test_a_finding_taken_commented_escalated_and_notified(live_server, table_client, django_user_model,
                                                          mailoutbox, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    client = table_client("S01", "se-50kr")
    flagged = [e for e in examples.load("se-50kr.jsonl") if "payout_mismatch" in e["expect"]["codes"]]
    for example in flagged[:2]:
        client.post("/api/v1/rounds/", example["record"], format="json")
    finding, other = Finding.objects.filter(code="payout_mismatch").order_by("pk")[:2]
    mailoutbox.clear()  # the rounds' own notices (a mismatch at the notice amount) are not this test's
    alice = django_user_model.objects.create_user("alice", email="alice@casino.example", password=PASSWORD)
    user_roles_set(user=alice, roles=["auditor"], actor=SYSTEM)
    boss = django_user_model.objects.create_user("boss", email="boss@casino.example", password=PASSWORD)
    user_roles_set(user=boss, roles=["supervisor"], actor=SYSTEM)
    due = (timezone.localtime() + timedelta(days=1)).replace(second=0, microsecond=0)

    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        base = live_server.url
        signed_in(page, base, "alice", PASSWORD)
        page.goto(f"{base}/admin/rounds/finding/{finding.pk}/change/")
        assert "Nobody has it" in page.inner_text("#case")

        page.click("#case-take")
        assert "it is yours" in page.inner_text(".messagelist")
        page.select_option("#case-priority", label="urgent")
        page.fill("#case-due", due.strftime("%Y-%m-%dT%H:%M"))
        page.click("#case-save")
        assert "the case is changed" in page.inner_text(".messagelist")
        page.fill("#case-comment", "The video shows the dealer paid 3:2 on the blind.")
        page.click("#case-comment-add")
        page.fill("#case-note", "Third time tonight for this dealer.")
        page.click("#case-escalate")
        assert "the supervisors are told" in page.inner_text(".messagelist")
        assert page.locator("#case-escalate").count() == 0, "escalated once: the button is gone"

        stored = Finding.objects.get(pk=finding.pk)
        assert (stored.assignee, stored.priority, stored.due_at, stored.state) == (alice, 1, due, "open")
        assert stored.escalated_at is not None
        (mail,) = mailoutbox
        assert mail.to == ["alice@casino.example", "boss@casino.example"]
        assert "Third time tonight" in mail.body and "alice" in mail.subject
        # The page's trail is the chain's: each step, oldest first, with its words.
        events = list(AuditEvent.objects.filter(object_type="rounds.finding", object_id=str(finding.pk))
                      .order_by("seq").values_list("action", flat=True))
        assert events == ["finding.case", "finding.case", "finding.comment", "finding.escalated", "finding.notified"]
        trail = page.eval_on_selector_all("#case-trail tbody tr", "rows => rows.map(r => r.innerText)")
        assert len(trail) == len(events)
        assert "assignee – → alice" in trail[0] and "priority normal → urgent" in trail[1]
        assert "paid 3:2 on the blind" in trail[2] and "Third time tonight" in trail[3]
        assert "mailed to alice@casino.example, boss@casino.example" in trail[4]

        # The queue: "mine" holds it alone; once past its time, "overdue" does too.
        page.goto(f"{base}/admin/rounds/finding/?case=mine")
        ids = page.eval_on_selector_all("#result_list input[name=_selected_action]", "boxes => boxes.map(b => +b.value)")
        assert ids == [finding.pk] and other.pk not in ids
        assert "alice · urgent · due" in page.inner_text("#result_list tbody")
        page.goto(f"{base}/admin/rounds/finding/?case=overdue")
        assert page.locator("#result_list").count() == 0
        page.goto(f"{base}/admin/rounds/finding/{finding.pk}/change/")
        page.fill("#case-due", (timezone.localtime() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"))
        page.click("#case-save")
        page.goto(f"{base}/admin/rounds/finding/?case=overdue")
        ids = page.eval_on_selector_all("#result_list input[name=_selected_action]", "boxes => boxes.map(b => +b.value)")
        assert ids == [finding.pk] and "(overdue)" in page.inner_text("#result_list tbody")
        browser.close()
