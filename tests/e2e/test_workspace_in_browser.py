"""The auditors' workspace in a real browser: the tonight page against the database, a tile's
link to its filtered list, and the queue opening on the work.

An auditor and a supervisor, each in headless Chromium (tests/browser.py), over a seeded last
gaming day: every worked example, redated to it.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest
from django.utils import timezone

from casino.services import user_roles_set
from infra.gaming_day import gaming_day_of
from rounds.models import Finding, Round
from tests import examples, mistakes
from tests.admin.money import seat_money
from tests.browser import chromium, signed_in
from trail.services import SYSTEM

PASSWORD = "browser-test-password"


@pytest.fixture
def seeded_day(table_client):
    start = examples.last_gaming_day_evening(timezone.now())
    examples.post_all_on(table_client, start)
    return gaming_day_of(start)



def _rows(page, selector: str) -> list[dict]:
    return page.eval_on_selector_all(selector, "rows => rows.map(r => Object.assign({}, r.dataset))")


@pytest.mark.parametrize("role", ["auditor", "supervisor"])
@pytest.mark.django_db(transaction=True)
def test_the_tonight_page_its_links_and_the_queue(live_server, seeded_day, django_user_model, role, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    user = django_user_model.objects.create_user(f"{role}-b", password=PASSWORD)
    user_roles_set(user=user, roles=[role], actor=SYSTEM)
    day = seeded_day.isoformat()
    rounds = Round.objects.filter(gaming_day=seeded_day).select_related("config_version")
    dealt = Counter(r.config_version.currency for r in rounds)
    # A row for each mistake: the seat whose Ante is off the unit is one (its Ante's and Blind's findings).
    work = [f for f in mistakes.firsts(Finding.objects.filter(round__gaming_day=seeded_day)
                                       .select_related("round__config_version").order_by("pk"))
            if f.state in ("open", "acknowledged") and not f.informational]
    by_code = Counter((f.code, f.round.config_version.currency) for f in work)
    stakes = Counter()
    for f in work:  # at stake: |expected − claimed|, where the finding names both
        if f.expected is not None and f.claimed is not None:
            stakes[(f.code, f.round.config_version.currency)] += abs(f.expected - f.claimed)

    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        base = live_server.url
        signed_in(page, base, user.username, PASSWORD)
        assert "table-audit" in page.title()

        section = f"#day-{day}"
        # The day leads with each table's money, as its seats add up, and fits the screen.
        money = _rows(page, f"{section} .money tr[data-table]")
        assert {(r["table"], r["currency"]): [int(r["rounds"]), int(r["hands"]), Decimal(r["handle"]),
                                              Decimal(r["win"]), Decimal(r["winPaid"])]
                for r in money} == seat_money(seeded_day)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366
        shown = _rows(page, f"{section} .dealt tr")
        assert {(r["currency"], int(r["rounds"])) for r in shown} == set(dealt.items())
        tiles = _rows(page, f"{section} .findings tr")
        assert {(r["code"], r["currency"]): (int(r["count"]), Decimal(r["atStake"])) for r in tiles} == {
            key: (n, Decimal(stakes[key])) for key, n in by_code.items()}

        # The tile's link opens the list of exactly the findings it counted: the off-unit seat's
        # tile, a row for the seat naming its bets.
        code, currency = "bet_off_unit", "SEK"
        assert by_code[(code, currency)] >= 1
        page.click(f"{section} .findings tr[data-code='{code}'][data-currency='{currency}'] a")
        page.wait_for_url("**/admin/rounds/finding/?**")
        assert f"gaming_day={day}" in page.url and f"code={code}" in page.url
        listed = page.eval_on_selector_all("#result_list tbody tr", "rows => rows.map(r => r.innerText)")
        assert len(listed) == by_code[(code, currency)] and all("ante, blind" in row for row in listed), listed

        # The queue as it opens: the open, actionable findings only, newest first.
        page.goto(f"{base}/admin/rounds/finding/")
        ids = page.eval_on_selector_all("#result_list input[name=_selected_action]", "boxes => boxes.map(b => +b.value)")
        assert ids == mistakes.keys(Finding.objects.filter(state="open", informational=False)
                                    .order_by("-created_at", "-id"))
        assert not Finding.objects.filter(pk__in=ids, informational=True).exists()
        # It fits the screen: no column cut off, nor scrolled out of sight, at 1,366 pixels.
        table_right, results_width, results_scroll = page.evaluate(
            "[document.querySelector('#result_list').getBoundingClientRect().right,"
            " document.querySelector('.results').clientWidth, document.querySelector('.results').scrollWidth]")
        assert table_right <= 1366 and results_scroll <= results_width, (table_right, results_width, results_scroll)
        browser.close()
