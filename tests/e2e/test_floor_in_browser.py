"""A dealer's page in a real browser, reached from the report: each week's figures held to his seats
and findings, the chart's bars to the page's rows, and the page within a 1,366-pixel screen."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from audit.reconciliation.services import report_run
from casino.services import user_roles_set
from infra.gaming_day import gaming_day_of
from rounds.models import Finding
from tests import examples
from tests.admin.money import dealer_money
from tests.browser import chromium, signed_in
from trail.services import SYSTEM

PASSWORD = "browser-test-password"
BARS = """(dealer) => {
  const svg = document.querySelector('svg.pygal-chart');
  return [...svg.querySelectorAll(`g.series[data-series="${dealer}"] desc.value`)].map(d => +d.textContent);
}"""


@pytest.mark.django_db(transaction=True)
def test_a_dealers_page_from_the_report(live_server, table_client, django_user_model, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    start = examples.last_gaming_day_evening(timezone.now())
    examples.post_all_on(table_client, start)
    day = gaming_day_of(start)
    report = report_run(day_from=day)
    mismatches = Finding.objects.filter(code="payout_mismatch", informational=False, round__gaming_day=day)
    dealer = Counter(mismatches.values_list("round__dealer", flat=True)).most_common(1)[0][0]
    over = [f for f in mismatches.filter(round__dealer=dealer) if f.claimed > f.expected]
    under = [f for f in mismatches.filter(round__dealer=dealer) if f.claimed < f.expected]
    expected = dealer_money(dealer, day)
    user = django_user_model.objects.create_user("floor-reader", password=PASSWORD)
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)
    monday = day - timedelta(days=day.weekday())

    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        base = live_server.url
        signed_in(page, base, user.username, PASSWORD)
        page.goto(f"{base}/admin/audit/reconciliationreport/{report.pk}/change/")
        page.click(f"a[href='{reverse('admin:audit_reconciliationreport_dealer', args=[dealer])}']")
        page.wait_for_url(f"**/dealers/{dealer}/")
        rows = page.eval_on_selector_all("#floor-weeks tbody tr", "rows => rows.map(r => Object.assign({}, r.dataset))")
        this_week = {r["currency"]: r for r in rows if r["week"] == monday.isoformat()}
        assert set(this_week) == set(expected)
        for currency, (hands, handle, win, paid) in expected.items():
            row = this_week[currency]
            assert (int(row["hands"]), Decimal(row["handle"]), Decimal(row["win"]), Decimal(row["winPaid"])) == (
                hands, handle, win, paid)
        assert sum(int(r["overpaid"]) for r in this_week.values()) == len(over)
        assert sum(int(r["underpaid"]) for r in this_week.values()) == len(under)
        assert sum(Decimal(r["atStake"]) for r in this_week.values()) == (
            sum(f.claimed - f.expected for f in over) + sum(f.expected - f.claimed for f in under))
        # The chart's bars: eight weeks, the last this one, each the week's mismatches in the rows.
        bars = page.evaluate(BARS, dealer)
        per_week = Counter()
        for r in rows:
            per_week[r["week"]] += int(r["overpaid"]) + int(r["underpaid"])
        # The eight weeks end with the current gaming day's; on a Monday that is the week after the
        # posted day's.
        current = gaming_day_of(timezone.now())
        back = ((current - timedelta(days=current.weekday())) - monday).days // 7
        assert len(bars) == 8 and bars[-1 - back] == per_week[monday.isoformat()] == len(over) + len(under)
        assert sum(bars) == sum(per_week.values())
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366
        browser.close()
