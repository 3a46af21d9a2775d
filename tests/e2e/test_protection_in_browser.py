"""Game protection in a real browser: an auditor opens the queue, a hole-carding finding's evidence,
and the player's page with its chart.

An evening of simulated players at one table (an optimal player, a weak one and a hole-carder),
posted through the API and protected as the nightly job does, read in headless Chromium
(tests/browser.py) at 1,366 × 768.
"""

from __future__ import annotations

import pytest

from audit.models import ProtectionFinding
from audit.protection.selectors import player_figures
from casino.services import user_roles_set
from game.protection.codes import ProtectionCode
from infra.money_display import money
from rounds.models import Round
from tests.admin.test_protection_admin import protected_evening
from tests.browser import chromium, signed_in
from trail.services import SYSTEM

PASSWORD = "browser-test-password"
HOLE_CARDING = ProtectionCode.SUSPECTED_HOLE_CARDING.value


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_auditor_follows_a_hole_carder_from_the_queue_to_his_page(live_server, table_client,
                                                                     django_user_model, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    protected_evening(table_client)
    user = django_user_model.objects.create_user("auditor-p", password=PASSWORD)
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)
    finding = ProtectionFinding.objects.filter(code=HOLE_CARDING, player="P-peeks", dealer="").first()
    assert finding is not None and finding.state == "open"

    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        base = live_server.url
        signed_in(page, base, user.username, PASSWORD)

        # The tonight page counts it, and its code opens the queue of that code.
        tile = page.locator(f"#protection tr[data-code='{HOLE_CARDING}']")
        assert int(tile.get_attribute("data-count")) == ProtectionFinding.objects.filter(
            code=HOLE_CARDING, state__in=["open", "acknowledged"]).count()
        tile.locator("a").click()
        page.wait_for_url("**/admin/audit/protectionfinding/?**")
        ids = page.eval_on_selector_all("#result_list input[name=_selected_action]",
                                        "boxes => boxes.map(b => +b.value)")
        assert ids == list(ProtectionFinding.objects.filter(code=HOLE_CARDING, state="open")
                           .order_by("-created_at", "-id").values_list("pk", flat=True))

        # The finding's page: its telling decisions, each round a link to the round's page.
        page.click(f"#result_list input[value='{finding.pk}'] >> xpath=ancestor::tr >> th a")
        page.wait_for_url(f"**/admin/audit/protectionfinding/{finding.pk}/change/**")  # the list's filters kept
        steps = page.eval_on_selector_all("#leak-steps tr.step", "rows => rows.map(r => +r.dataset.round)")
        assert steps == [step["round"] for step in finding.evidence["steps"]] and steps
        first = page.locator("#leak-steps tr.step").first.locator("a")
        round_ = Round.objects.select_related("table").get(pk=steps[0])
        assert first.inner_text() == f"{round_.table.code}/{round_.round_id}"
        assert first.get_attribute("href").endswith(f"/admin/rounds/round/{round_.pk}/change/")

        # On to the player's page: his figures as the selector gives them, and the chart.
        page.click("#evidence a.player-link")
        page.wait_for_url("**/admin/audit/protectionfinding/players/P-peeks/")
        figures, = player_figures(player="P-peeks")
        row = page.locator(f"#figures tr[data-currency='{figures.currency}'] td")
        assert row.nth(3).inner_text() == money(figures.handle, figures.currency)
        assert row.nth(4).inner_text() == money(figures.win, figures.currency)
        assert page.locator("#leak-chart svg.pygal-chart g[data-series='threshold']").count() >= 1
        assert page.locator(f"#findings a[href$='/{finding.pk}/change/']").count() == 1
        # The page fits the screen but for its tables, which scroll within it.
        assert page.evaluate("document.querySelector('#leak-chart svg').getBoundingClientRect().right") <= 1366
        browser.close()
