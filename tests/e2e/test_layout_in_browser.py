"""The workspace at 1,366 px (issue 46, "Layout"): no page is wider than the screen; a table wider
than its place scrolls in its own box, keeps its first column in view, and says that more columns
lie to the right, where it does and nowhere else. Chromium at 1,366 × 768, an auditor, every
workspace page over a protected evening and a reconciled day."""

from __future__ import annotations

import pytest

from audit.models import ProtectionFinding
from progressive.models import Pool
from rounds.models import Finding, Round
from rounds.services.cases import case_change
from tests.browser import chromium, signed_in
from tests.e2e.evening import PASSWORD, reconciled_evening

WIDTH = 1366
# Each table wider than its place, and how it is held: inside a box that scrolls, marked as
# overflowing, its first cell kept at the box's left edge.
TABLES = """() => [...document.querySelectorAll('#content table')].filter(t => t.offsetParent !== null).map(t => {
  const box = t.closest('.report-scroll, #changelist .results');
  const scrolls = box !== null && ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
  const first = t.querySelector('tbody td, tbody th');
  return {id: t.id || t.className || t.parentElement.className, width: t.scrollWidth,
          room: box ? box.clientWidth : t.parentElement.clientWidth, scrolls: scrolls,
          marked: box !== null && box.classList.contains('overflows'),
          said: box !== null && getComputedStyle(box, '::before').content.includes('More columns'),
          sticky: first !== null && getComputedStyle(first).position === 'sticky'};
})"""


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_every_workspace_page_fits_1366_pixels(live_server, table_client, django_user_model, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    start, day, report, user = reconciled_evening(table_client, django_user_model, "auditor-w")
    finding = Finding.objects.filter(informational=False).order_by("pk").first()
    case_change(model=Finding, finding_id=finding.pk, user=user, assignee=user, due_at=start)
    hole_carding = ProtectionFinding.objects.order_by("pk").first()
    round_ = Round.objects.filter(gaming_day=day).order_by("pk").first()
    pages = [
        "/admin/", "/admin/rounds/round/", f"/admin/rounds/round/{round_.pk}/change/",
        "/admin/rounds/finding/", "/admin/rounds/finding/?case=mine", f"/admin/rounds/finding/{finding.pk}/change/",
        f"/admin/audit/reconciliationreport/{report.pk}/change/", "/admin/audit/reconciliationreport/",
        "/admin/audit/reconciliationreport/tables/S01/", f"/admin/audit/reconciliationreport/dealers/{round_.dealer}/",
        "/admin/audit/protectionfinding/", f"/admin/audit/protectionfinding/{hole_carding.pk}/change/",
        f"/admin/progressive/pool/{Pool.objects.get(code='us-progressive').pk}/change/",
        "/admin/trail/auditevent/", "/admin/audit/tablecount/",
    ]
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": WIDTH, "height": 768})
        signed_in(page, live_server.url, user.username, PASSWORD)
        overflowing = 0
        for url in pages:
            page.goto(f"{live_server.url}{url}")
            page.wait_for_load_state("load")
            assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH, url
            for table in page.evaluate(TABLES):
                if table["width"] <= table["room"] + 1:
                    assert not table["marked"], (url, table)  # says nothing where nothing is hidden
                    continue
                overflowing += 1
                assert table["scrolls"] and table["marked"] and table["said"] and table["sticky"], (url, table)
        assert overflowing, "no page had a table wider than its place: the test proved nothing"
