"""The workspace says nothing false (issue 46), read as a person reads it: Chromium at 1,366 × 768, an
auditor, over a protected evening and a reconciled day.

- One unit per count: each count on the tonight page and each week's rounds on a table's page,
  followed, opens a list whose own count says the same.
- One clock: no page shows a UTC offset, an ISO "T" or a time to the second.
- Names people use: a finding's page names its table and round id, never a database id.
- No false alarm: a day reconciled after its rounds is neither stale nor missing.
- What is missing where it is looked for: the table's page and the dealer's page list the
  hole-carder's finding whose evidence was dealt there; the dealer's page lists his stints.
- Every figure labelled with its currency: a table's chart of the day says the number, words and
  currency its row in the report's table says.
"""

from __future__ import annotations

import re

import pytest

from audit.models import ProtectionFinding
from infra import charts
from rounds.models import Finding, Round
from tests.admin.test_one_clock import STRANGERS
from tests.browser import chromium, signed_in
from tests.e2e.evening import PASSWORD, reconciled_evening

# A shift's hours ("14:00-22:00") are a range of the casino's clock, not a time and its offset.
SHIFT_HOURS = re.compile(r"\b\d{2}:\d{2}-\d{2}:\d{2}\b")
# The counts a person follows: a link whose text is a number and what it counts.
COUNTED = """() => [...document.querySelectorAll('#content a')].map(a => ({href: a.href,
    text: a.textContent.trim(), count: a.dataset.count || null}))
  .filter(a => a.count !== null || /^[0-9][0-9,]*( [a-z]|$)/.test(a.text))
  .filter(a => !/^[0-9][0-9,]* (min|h|s|%)/.test(a.text))"""


# The report's tables' table: each row's first cell's name and its cell under ``header``.
BANDED_CELLS = """header => {
    const found = {};
    for (const table of document.querySelectorAll('#content table')) {
        const heads = [...table.querySelectorAll('thead th')].map(th => th.textContent.trim());
        const at = heads.indexOf(header);
        if (at < 0) continue;
        for (const row of table.querySelectorAll('tbody tr')) {
            const cells = [...row.children];
            found[cells[0].textContent.trim().split(' ')[0]] = cells[at].textContent.trim();
        }
        return found;
    }
    return found;
}"""


def _list_count(page) -> int | None:
    """The count a list says of itself ("24 findings"), None on a page that is no list."""
    said = page.locator(".paginator")
    if not said.count():
        return None
    counts = re.findall(r"([0-9][0-9,]*) [a-zA-Z]", said.first.inner_text())  # after the page numbers
    return int(counts[-1].replace(",", "")) if counts else None


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_workspace_says_nothing_false(live_server, table_client, django_user_model, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    _, day, report, user = reconciled_evening(table_client, django_user_model, "auditor-nf")
    finding = Finding.objects.filter(informational=False).select_related("round__table").order_by("pk").first()
    hole_carding = ProtectionFinding.objects.order_by("pk").first()
    dealer = Round.objects.filter(table__code="S01", gaming_day=day).values_list("dealer", flat=True).first()
    pages = ["/admin/", "/admin/rounds/round/", "/admin/rounds/finding/", f"/admin/rounds/finding/{finding.pk}/change/",
             f"/admin/audit/reconciliationreport/{report.pk}/change/", "/admin/audit/reconciliationreport/",
             "/admin/audit/reconciliationreport/tables/S01/", f"/admin/audit/reconciliationreport/dealers/{dealer}/",
             f"/admin/audit/protectionfinding/{hole_carding.pk}/change/", "/admin/trail/auditevent/"]
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        signed_in(page, live_server.url, user.username, PASSWORD)
        texts = {}
        for url in pages:
            page.goto(f"{live_server.url}{url}")
            texts[url] = page.locator("#content").inner_text()
            read = SHIFT_HOURS.sub(" ", texts[url])
            for stranger, pattern in STRANGERS.items():
                found = pattern.search(read)
                assert not found, (url, stranger, read[max(0, found.start() - 200):found.end() + 40])

        tonight, table_page = texts["/admin/"], texts["/admin/audit/reconciliationreport/tables/S01/"]
        assert "stale" not in tonight and "without a current report" not in tonight
        named = texts[f"/admin/rounds/finding/{finding.pk}/change/"]
        assert finding.round.table.code in named and finding.round.round_id in named
        assert f"on {finding.pk}" not in named and f"#{finding.pk}" not in named
        assert hole_carding.code in table_page
        assert hole_carding.code in texts[f"/admin/audit/reconciliationreport/dealers/{dealer}/"]
        page.goto(f"{live_server.url}/admin/audit/reconciliationreport/dealers/{dealer}/")
        assert page.locator("#floor-stints tbody tr").count() >= 1

        followed = 0
        for url in ("/admin/", "/admin/audit/reconciliationreport/tables/S01/",
                    f"/admin/audit/reconciliationreport/{report.pk}/change/"):
            page.goto(f"{live_server.url}{url}")
            for link in page.evaluate(COUNTED):
                shown = int((link["count"] or link["text"].split()[0]).replace(",", ""))
                page.goto(link["href"])
                listed = _list_count(page)
                if listed is None:
                    continue  # a round's or a report's page: no list, no count to hold
                assert listed == shown, (url, link)
                followed += 1
        assert followed >= 10, followed

        # Every figure labelled with what it is and its currency: a table's chart of its day says the
        # number its row in the report's table says, under the same words.
        page.goto(f"{live_server.url}/admin/audit/reconciliationreport/{report.pk}/change/")
        banded = page.evaluate(BANDED_CELLS, f"{charts.BANDED} in its 95 % band")
        assert banded, "the tables' table has its banded column"
        content = page.locator("#content").inner_text()
        for table, cell in banded.items():
            win = cell.split(" in ")[0]
            assert re.fullmatch(r"-?[0-9,]+\.[0-9]{2} [A-Z]{3}", win), (table, cell)
            said = content.split(f"table {table}, {win[-3:]}: {charts.BANDED}, by day", 1)
            assert len(said) == 2, (table, win)
            assert f"{charts.BANDED} {win}" in said[1][:400], (table, win, said[1][:400])
        browser.close()
