"""Two supervisors, in a real browser: one asks for a large meter adjustment, the other approves it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from progressive.models import MeterAdjustmentRequest, Pool
from tests.browser import chromium
from tests.security.people import PASSWORD, authenticator, next_code, person

POOL = "us-progressive"


def _signed_in(browser, base: str, username: str):
    from django.contrib.auth import get_user_model

    device = authenticator(get_user_model().objects.get(username=username))
    page = browser.new_context().new_page()
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.fill("#id_otp_token", next_code(device))  # a supervisor proves his authenticator's code
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/")
    return page


@pytest.mark.django_db(transaction=True)
def test_a_second_supervisor_approves_a_large_adjustment_in_the_browser(live_server, monkeypatch, settings):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.METER_SECOND_APPROVAL_ABOVE = {"USD": Decimal("10000")}
    person("supervisor", "asker")
    person("supervisor", "second")
    pool = Pool.objects.get(code=POOL)
    before = pool.meter

    with sync_playwright() as p:
        browser = chromium(p)
        asker = _signed_in(browser, live_server.url, "asker")
        asker.goto(f"{live_server.url}/admin/progressive/pool/{pool.pk}/adjust/")
        asker.fill("#id_delta", "15000.00")
        asker.fill("#id_reason", "count sheet 7: the meter was read short")
        asker.click("input[type=submit]")
        asker.wait_for_selector("text=waits for a second supervisor's approval")
        assert asker.locator("button[value=approve]").count() == 0
        request_page = asker.url

        second = _signed_in(browser, live_server.url, "second")
        second.goto(request_page)
        second.click("button[value=approve]")
        second.wait_for_selector("text=Approved: the meter of us-progressive moved by 15000.00")
        browser.close()

    asked = MeterAdjustmentRequest.objects.get()
    assert (asked.state, asked.requested_by_name, asked.decided_by_name) == ("approved", "asker", "second")
    assert Pool.objects.get(code=POOL).meter == before + Decimal("15000.00")
