"""An auditor, in a real browser: log in, open a flagged round, acknowledge its finding.

Headless Chromium from the system's packages (scripts/test installs it), driven by
Playwright's Python API without Playwright's own browser download.
"""

from __future__ import annotations

import pytest

from casino.services import user_roles_set
from rounds.models import Finding, Round
from tests import examples
from tests.browser import chromium
from trail.services import SYSTEM

PASSWORD = "browser-test-password"


@pytest.fixture
def flagged_round(table_client, django_user_model):
    client = table_client("S01", "se-50kr")
    example = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == ["payout_mismatch"])
    assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    user = django_user_model.objects.create_user("iris", password=PASSWORD)
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)
    return Round.objects.get(round_id=example["record"]["round"])


@pytest.mark.django_db(transaction=True)
def test_an_auditor_acknowledges_a_finding_in_the_browser(live_server, flagged_round, monkeypatch):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the ORM is only used
    # before and after it, while the live server answers from its own thread.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    finding = Finding.objects.get(round=flagged_round, code="payout_mismatch")

    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page()
        page.goto(f"{live_server.url}/admin/login/")
        page.fill("#id_username", "iris")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_url(f"{live_server.url}/admin/")

        page.goto(f"{live_server.url}/admin/rounds/round/?status=flagged")
        page.click(f"a[href^='/admin/rounds/round/{flagged_round.pk}/change/']")
        page.wait_for_url(f"**/admin/rounds/round/{flagged_round.pk}/change/**")
        page.wait_for_load_state()
        body = page.inner_text("body")
        assert "payout_mismatch" in body
        assert "♥" in body or "♦" in body or "♣" in body or "♠" in body

        page.goto(f"{live_server.url}/admin/rounds/finding/?state=open")
        page.check(f"input[name=_selected_action][value='{finding.pk}']")
        page.select_option("select[name=action]", "acknowledge")
        page.click("button[name=index]")
        page.wait_for_selector("text=1 finding(s) acknowledged.")
        browser.close()

    finding.refresh_from_db()
    assert finding.state == "acknowledged"
    assert finding.state_changed_by_name == "iris"
