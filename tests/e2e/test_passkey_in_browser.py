"""A supervisor sets up a passkey in a real browser (Chromium's virtual authenticator, as a
security key would answer), then signs in with his password and the passkey."""

from __future__ import annotations

import pytest

from tests.browser import chromium
from tests.security.people import PASSWORD, person

AUTHENTICATOR = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
                 "hasUserVerification": True, "isUserVerified": True, "automaticPresenceSimulation": True}


def _sign_in_with_password(page, base: str) -> None:
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "pia")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/second-factor/")


@pytest.mark.django_db(transaction=True)
def test_a_supervisor_sets_up_a_passkey_and_signs_in_with_it(live_server, monkeypatch, settings):
    from django_otp_webauthn.models import WebAuthnCredential
    from playwright.sync_api import sync_playwright

    from casino.proof_sign_in import sign_in_differences
    from trail.models import AuditEvent

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    base = live_server.url
    assert base.startswith("http://localhost:")  # a passkey is made for a name, never an address
    settings.OTP_WEBAUTHN_ALLOWED_ORIGINS = [base]
    settings.OTP_WEBAUTHN_RP_ID = "localhost"
    pia = person("supervisor", "pia")
    with sync_playwright() as p:
        browser = chromium(p)
        context = browser.new_context()
        page = context.new_page()
        devtools = context.new_cdp_session(page)
        devtools.send("WebAuthn.enable")
        devtools.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})

        _sign_in_with_password(page, base)
        page.click("#passkey-register-button")
        page.wait_for_selector("#passkey-register-status-message:has-text('successful')")
        page.click("#second-factor-continue")
        page.wait_for_url(f"{base}/admin/")
        assert page.locator("#user-tools").count() == 1

        # A new sign-in (the same browser, so the same authenticator): the password, then the passkey.
        context.clear_cookies()
        _sign_in_with_password(page, base)
        # The password alone opens nothing: every page leads to proving the passkey.
        assert page.goto(f"{base}/admin/rounds/round/").url == f"{base}/admin/second-factor/"
        assert page.locator("#id_otp_token").count() == 0  # no authenticator app: the passkey alone
        page.click("#passkey-verification-button")
        page.wait_for_url(f"{base}/admin/")
        assert page.goto(f"{base}/admin/rounds/round/").url == f"{base}/admin/rounds/round/"
        browser.close()

    credential = WebAuthnCredential.objects.get(user=pia, confirmed=True)
    event = AuditEvent.objects.get(action="user.second_factor_added", object_id=str(pia.pk))
    assert event.after == {"device": credential.name, "kind": "passkey", "id": credential.persistent_id}
    assert list(sign_in_differences()) == []
