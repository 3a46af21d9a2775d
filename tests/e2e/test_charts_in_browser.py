"""A supervisor and an auditor, in a real browser, read the report's charts and the pool's meter.

The charts are pygal's SVG, drawn on the server: the browser runs no script for
them and fetches nothing else. Each point's value is read from the page's DOM
(``<desc class="value">``, the text pygal writes for a point) and compared with
the stored report's figures.
"""

from __future__ import annotations

import os
from decimal import Decimal

import pytest

from audit.admin_reports import amount
from audit.models import ReconciliationReport
from audit.reconciliation.services import report_run
from infra.charts import BANDED
from progressive.models import MeterEvent, Pool
from tests.browser import chromium, signed_in
from tests.reconciliation.days import DAY, NEXT_DAY, post_day
from tests.security.people import PASSWORD, person

# Set to a folder to keep what the browser saw (scripts write the demo's screenshots elsewhere).
SHOTS = os.environ.get("CHART_SCREENSHOTS")

POINT_VALUES = """(args) => {
  const [label, series] = args;
  const svg = [...document.querySelectorAll('svg.pygal-chart')]
    .find(s => (s.getAttribute('aria-label') || '').includes(label));
  if (!svg) return null;
  return [...svg.querySelectorAll(`g.series[data-series="${series}"] desc.value`)]
    .map(d => d.textContent);
}"""



def _money(text: str) -> tuple[Decimal, str]:
    number, currency = text.rsplit(" ", 1)
    return Decimal(number.replace(",", "")), currency


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ["supervisor", "auditor"])
def test_the_report_and_pool_charts_show_the_reports_figures(live_server, table_client, monkeypatch, role):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    post_day(table_client, per_table=12)
    first, report = report_run(day_from=DAY), report_run(day_from=NEXT_DAY)
    assert report.status == ReconciliationReport.Status.COMPLETE
    pool = Pool.objects.get(code="us-progressive")
    # Awards paid from the meter; a fixed award, paid by the house, is not drawn on it.
    awards = list(MeterEvent.objects.filter(pool=pool, kind="award").order_by("seq"))
    person(role, f"{role}-charts")

    violations: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1366, "height": 900})
        page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
        page.on("request", lambda r: requests.append(r.url))
        signed_in(page, live_server.url, f"{role}-charts", PASSWORD)

        # The next day's report: S02 dealt on both days, so its chart has two points.
        page.goto(f"{live_server.url}/admin/audit/reconciliationreport/{report.pk}/change/")
        page.wait_for_selector("svg.pygal-chart")
        shown = page.evaluate(POINT_VALUES, [f"table S02, SEK: {BANDED}, by day", BANDED])
        stored = [r.figures["tables"]["S02"]["SEK"]["bands"]["total"]["actual"] for r in (first, report)]
        assert [_money(t) for t in shown] == [(Decimal(v), "SEK") for v in stored]
        band = page.evaluate(POINT_VALUES, [f"table S02, SEK: {BANDED}, by day", "95 % high"])
        assert band == [amount(r.figures["tables"]["S02"]["SEK"]["bands"]["total"]["high_95"], "SEK")
                        for r in (first, report)]
        # The month and the year to date stand beside the day, in standard deviations.
        for period, series in (("month_to_date", "month to date"), ("year_to_date", "year to date")):
            z = report.figures[period]["tables"]["S02"]["SEK"]["bands"]["total"]["z"]
            assert page.evaluate(POINT_VALUES, [f"Tables: {BANDED} against theoretical", series]) == [
                f"z {Decimal(z):+}"]
        # The chart is drawn, within the screen: no wider than the page.
        box = page.locator("svg.pygal-chart[aria-label*='table S02, SEK']").bounding_box()
        assert box and box["width"] > 300 and box["x"] + box["width"] <= 1366
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366
        # A point opens its day's report.
        page.click(f"svg.pygal-chart[aria-label*='table S02, SEK: {BANDED}'] "
                   f"g.series[data-series='{BANDED}'] g.dots a >> nth=0", force=True)
        page.wait_for_url(f"**/admin/audit/reconciliationreport/{first.pk}/change/")
        if SHOTS:
            for i, section in enumerate(page.locator("fieldset.module").all()):
                section.screenshot(path=os.path.join(SHOTS, f"report-{role}-{i:02d}.png"))

        page.goto(f"{live_server.url}/admin/progressive/pool/{pool.pk}/change/")
        page.wait_for_selector("svg.pygal-chart")
        meter = page.evaluate(POINT_VALUES, ["us-progressive", "meter"])
        assert meter and meter[-1] == amount(pool.meter, pool.currency)
        marked = page.evaluate(POINT_VALUES, ["us-progressive", "awards"])
        assert marked == [amount(e.meter_after - e.delta, pool.currency) for e in awards] and awards
        if SHOTS:
            page.locator("#meter-chart").screenshot(path=os.path.join(SHOTS, f"pool-{role}.png"))
        browser.close()

    assert violations == []
    assert all(url.startswith(live_server.url) for url in requests), requests
