"""A supervisor sets up his authenticator in a real browser, then signs in with its code."""

from __future__ import annotations

import base64

import pytest

from tests.browser import chromium
from tests.security.people import PASSWORD, code, person


@pytest.mark.django_db(transaction=True)
def test_a_supervisor_sets_up_his_authenticator_and_signs_in_with_it(live_server, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    person("supervisor", "sara")
    base = live_server.url
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_context().new_page()
        page.goto(f"{base}/admin/login/")
        page.fill("#id_username", "sara")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_url(f"{base}/admin/second-factor/")
        assert page.locator(".second-factor-qr svg").count() == 1
        key = base64.b32decode(page.inner_text("#second-factor-key"))  # what the app reads from the QR code
        page.fill("#id_otp_token", code(key))
        page.click("input[type=submit]")
        page.wait_for_url(f"{base}/admin/")
        assert "Tonight" in page.content() or "tonight" in page.content()

        again = browser.new_context().new_page()
        again.goto(f"{base}/admin/login/")
        again.fill("#id_username", "sara")
        again.fill("#id_password", PASSWORD)
        again.click("input[type=submit]")
        assert "The code is missing or wrong" in again.inner_text(".errornote")  # waits for the answer's page
        again.fill("#id_password", PASSWORD)
        again.fill("#id_otp_token", code(key, ahead=1))  # the code used above is spent: the next one
        again.click("input[type=submit]")
        again.wait_for_url(f"{base}/admin/")
        browser.close()
