"""An auditor, in a real browser, meets the service: its name, the casino's clock, only the
casino's records on the start page, and the admin's own page for an address with nothing there."""

from __future__ import annotations

import re

import pytest

from tests import examples
from tests.browser import chromium
from tests.security.people import PASSWORD, person

HEADER = "table-audit — casino audit"


@pytest.mark.django_db(transaction=True)
def test_an_auditor_sees_the_service_in_the_browser(live_server, table_client, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    client = table_client("S01", "se-50kr")
    # Dealt at 20:00 in Stockholm: an evening time, which a 12-hour clock writes "8 p.m.".
    example = next(e for e in examples.load("se-50kr.jsonl") if e["record"]["round"] == "c-se-01")
    assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    person("auditor", "maja")

    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page()
        page.goto(f"{live_server.url}/admin/login/")
        assert HEADER in page.inner_text("#site-name")
        page.fill("#id_username", "maja")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_url(f"{live_server.url}/admin/")

        assert "table-audit" in page.title() and "Django" not in page.title()
        assert page.inner_text("#site-name") == HEADER
        index = page.inner_text("#content")
        assert "Findings" in index
        assert "Celery" not in index and "Periodic tasks" not in index and "Task results" not in index

        page.goto(f"{live_server.url}/admin/rounds/round/")
        listing = page.inner_text("#result_list")
        assert re.search(r"\b20:00(:00)?\b", listing), listing
        assert "p.m." not in listing and "a.m." not in listing

        answer = page.goto(f"{live_server.url}/admin/rounds/no-such-thing/")
        assert answer.status == 404
        assert page.inner_text("#site-name") == HEADER
        assert "There is no page at" in page.inner_text("#content")
        page.click("text=Back to the start page")
        page.wait_for_url(f"{live_server.url}/admin/")
        browser.close()
