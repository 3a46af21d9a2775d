"""A day's report in a real browser: each table's house win by the rules and by what was paid, held to
the seats; then the cage's count entered in the browser and set against what was paid."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from audit.models import TableCount
from audit.reconciliation.services import report_run
from casino.services import user_roles_set
from infra.gaming_day import gaming_day_of
from tests import examples
from tests.admin.money import seat_money
from tests.browser import chromium, signed_in
from trail.services import SYSTEM

PASSWORD = "browser-test-password"
ROWS = """(heading) => {
  const fieldset = [...document.querySelectorAll('fieldset')].find(f => (f.querySelector('h2') || {}).textContent
    && f.querySelector('h2').textContent.includes(heading));
  const table = fieldset.querySelector('table');
  const headers = [...table.querySelectorAll('thead th')].map(th => th.textContent.trim());
  return [...table.querySelectorAll('tbody tr')].map(tr =>
    Object.fromEntries([...tr.children].map((td, i) => [headers[i] || 'name', td.textContent.trim()])));
}"""


def _money(text: str) -> tuple[Decimal, str]:
    number, currency = text.rsplit(" ", 1)
    return Decimal(number.replace(",", "")), currency


@pytest.mark.django_db(transaction=True)
def test_settled_and_paid_win_and_the_count_in_the_report(live_server, table_client, django_user_model, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    start = examples.last_gaming_day_evening(timezone.now())
    examples.post_all_on(table_client, start)
    day = gaming_day_of(start)
    report = report_run(day_from=day)
    expected = seat_money(day)  # (table, currency): [rounds, hands, handle, win settled, win paid]
    user = django_user_model.objects.create_user("cage-boss", password=PASSWORD)
    user_roles_set(user=user, roles=["supervisor"], actor=SYSTEM)

    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        base = live_server.url
        signed_in(page, base, user.username, PASSWORD)
        page.goto(f"{base}/admin/audit/reconciliationreport/{report.pk}/change/")
        shown = {}
        for row in page.evaluate(ROWS, "Tables: house win against"):
            table = row["name"].split(" ")[0]
            settled, currency = _money(row["house win, settled"])
            paid, paid_currency = _money(row["house win, paid"])
            assert paid_currency == currency
            shown[table, currency] = [int(row["rounds"].replace(",", "")), settled, paid]
        assert shown == {key: [rounds, win, paid] for key, (rounds, _, _, win, paid) in expected.items()}
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366

        # The cage counted S01: a win 123.45 SEK above what the dealers paid.
        (paid,) = [paid for (table, _), (_, _, paid) in shown.items() if table == "S01"]
        counted = paid + Decimal("123.45")
        page.goto(f"{base}/admin/audit/tablecount/")
        page.click("text=Enter a count")
        page.select_option("#id_table", "S01")
        page.fill("#id_gaming_day", day.isoformat())
        for field, value in (("drop", "0"), ("fills", "0"), ("credits", "0"), ("opening_inventory", "10000000"),
                             ("closing_inventory", str(Decimal(10000000) + counted))):
            page.fill(f"#id_{field}", value)
        page.click("#count-form button[type=submit]")
        page.wait_for_url("**/admin/audit/tablecount/")
        assert TableCount.objects.get().count_win == counted
        page.goto(f"{base}/admin/audit/reconciliationreport/{report.pk}/change/")
        rows = {r["table"]: r for r in page.evaluate(ROWS, "the cage's count")}
        assert _money(rows["S01"]["win by the count"]) == (counted, "SEK")
        assert _money(rows["S01"]["count − paid"]) == (Decimal("123.45"), "SEK")
        assert rows["U01"]["count"] == "not counted"
        browser.close()
