"""An auditor, in a real browser: filter the findings queue, click "Download CSV", and get a file
of exactly the findings the list shows.

Headless Chromium from the system's packages (scripts/test installs it), driven by
Playwright's Python API without Playwright's own browser download.
"""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from casino.services import user_roles_set
from rounds.admin.findings import FindingAdmin
from tests import examples
from tests.browser import chromium, signed_in
from trail.models import AuditEvent
from trail.services import SYSTEM

PASSWORD = "browser-test-password"


@pytest.fixture
def dealt(table_client, django_user_model):
    for name, code, config in examples.EXAMPLE_FILES:
        client = table_client(code, config)
        for example in examples.load(name):
            assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    user = django_user_model.objects.create_user("iris", password=PASSWORD)
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)


@pytest.mark.django_db(transaction=True)
def test_an_auditor_downloads_the_filtered_findings(live_server, dealt, monkeypatch, tmp_path):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the ORM is only used
    # before and after it, while the live server answers from its own thread.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    # Fewer rows a page than the filter finds: the file holds every page, not the one shown.
    monkeypatch.setattr(FindingAdmin, "list_per_page", 2)

    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(accept_downloads=True)
        signed_in(page, live_server.url, "iris", PASSWORD)

        # The queue, filtered by the sidebar's code choice, as an auditor would click it.
        page.goto(f"{live_server.url}/admin/rounds/finding/")
        page.click("#changelist-filter a:text-is('payout_mismatch')")
        page.wait_for_url("**/admin/rounds/finding/?*code__exact=payout_mismatch*")
        shown_ids = page.eval_on_selector_all(
            "input[name=_selected_action]", "boxes => boxes.map(b => b.value)")
        query = page.url.split("?", 1)[1]
        with page.expect_download() as download_info:
            page.click("text=Download CSV")
        download = download_info.value
        saved = tmp_path / download.suggested_filename
        download.save_as(saved)
        browser.close()

    assert saved.name.startswith("findings-") and saved.suffix == ".csv"
    rows = list(csv.DictReader(io.StringIO(saved.read_text())))
    # The list as the server builds it for that address: every page, in its order.
    checker = Client()
    checker.force_login(get_user_model().objects.get(username="iris"))
    listed = list(checker.get(f"/admin/rounds/finding/?{query}").context["cl"].queryset)
    assert len(listed) > len(shown_ids) == 2  # more than the page the browser showed
    assert [int(row["id"]) for row in rows] == [f.pk for f in listed]
    assert {str(f.pk) for f in listed} >= set(shown_ids)
    assert {row["code"] for row in rows} == {"payout_mismatch"}
    assert {row["currency"] for row in rows} == {"SEK", "USD"}
    assert all(row["dealt_at"].endswith(("+01:00", "+02:00")) for row in rows)
    event = AuditEvent.objects.filter(action="export.downloaded", object_id="findings").get()
    assert (event.actor_name, event.after["query"]) == ("iris", {"code__exact": ["payout_mismatch"]})
