"""An auditor, in a real browser, works a flagged round's finding from the round's own page:
refused without a note, resolved with one, and the move is in the round's audit trail.

Headless Chromium from the system's packages (scripts/test installs it), driven by
Playwright's Python API without Playwright's own browser download.
"""

from __future__ import annotations

import pytest

from casino.services import user_roles_set
from rounds.models import Finding, Round
from tests import examples
from tests.browser import chromium, signed_in
from trail.models import AuditEvent
from trail.services import SYSTEM

PASSWORD = "browser-test-password"
NOTE = "paid the player the 50.00 short, slip 4411"


@pytest.fixture
def flagged_round(table_client, django_user_model):
    client = table_client("S01", "se-50kr")
    example = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == ["payout_mismatch"])
    assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    user = django_user_model.objects.create_user("iris", password=PASSWORD)
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)
    return Round.objects.get(round_id=example["record"]["round"])


@pytest.mark.django_db(transaction=True)
def test_an_auditor_resolves_a_finding_from_the_round_page(live_server, flagged_round, monkeypatch):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the ORM is only used
    # before and after it, while the live server answers from its own thread.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    finding = Finding.objects.get(round=flagged_round, code="payout_mismatch")
    round_page = f"{live_server.url}/admin/rounds/round/{flagged_round.pk}/change/"
    row = f"#finding-{finding.pk}"

    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page()
        signed_in(page, live_server.url, "iris", PASSWORD)

        page.goto(f"{live_server.url}/admin/rounds/round/?status=flagged")
        page.click(f"a[href^='/admin/rounds/round/{flagged_round.pk}/change/']")
        page.wait_for_url(f"**/admin/rounds/round/{flagged_round.pk}/change/**")
        assert page.inner_text(f"{row} td.state") == "Open"
        assert page.locator("a.historylink").count() == 0

        # Resolve without a note: refused, and the page says so.
        page.click(f"{row} button[value=resolved]")
        page.wait_for_selector("text=Resolve needs a note saying why")
        assert page.url == round_page
        assert page.inner_text(f"{row} td.state") == "Open"

        # With a note: resolved, and the round's page again shows it so, with the move in its trail.
        page.fill(f"#note-{finding.pk}", NOTE)
        page.click(f"{row} button[value=resolved]")
        page.wait_for_selector("text=open → resolved, with your note.")
        assert page.url == round_page
        assert page.inner_text(f"{row} td.state") == "Resolved"
        shown = page.inner_text(row)
        assert "iris" in shown and NOTE in shown
        assert page.locator(f"{row} button[value=open]").count() == 1  # all a resolved one can do
        assert page.locator(f"{row} button[value=resolved]").count() == 0

        trail = page.locator("table.trail tbody tr")
        assert trail.count() == 2
        assert "round.stored" in trail.nth(0).inner_text()
        moved = trail.nth(1).inner_text()
        assert "finding.resolved" in moved and "open → resolved" in moved
        assert "iris" in moved and NOTE in moved
        # The trail's finding is a link to the finding's own page.
        trail.nth(1).locator(f"a[href='/admin/rounds/finding/{finding.pk}/change/']").click()
        page.wait_for_url(f"**/admin/rounds/finding/{finding.pk}/change/")
        browser.close()

    finding.refresh_from_db()
    assert (finding.state, finding.state_note, finding.state_changed_by_name) == ("resolved", NOTE, "iris")
    assert AuditEvent.objects.filter(action="finding.resolved", object_id=str(finding.pk)).count() == 1
