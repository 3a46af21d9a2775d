"""A supervisor of the casino's directory (a real slapd) signs in to the admin in a real browser:
his directory password, then the authenticator the service still asks of a supervisor."""

from __future__ import annotations

import base64

import pytest

from casino.roles import roles_sync
from tests.browser import chromium
from tests.directory import Directory, dn_of
from tests.security.people import code


@pytest.fixture
def directory(settings):
    server = Directory().start()
    for name, value in server.settings().items():
        setattr(settings, name, value)
    yield server
    server.stop()


@pytest.mark.django_db(transaction=True)
def test_a_directory_supervisor_signs_in_with_his_directory_password_and_an_authenticator(
        live_server, monkeypatch, directory):
    from django.contrib.auth import get_user_model
    from playwright.sync_api import sync_playwright

    from trail.models import AuditEvent

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    roles_sync()
    directory.person("hr", "hr-test-password")
    directory.person("dora", "dora-test-password", by=(dn_of("hr"), "hr-test-password"))
    directory.join("dora", "supervisor")
    base = live_server.url
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_context().new_page()
        page.goto(f"{base}/admin/login/")
        page.fill("#id_username", "dora")
        page.fill("#id_password", "not-the-test-password")
        page.click("input[type=submit]")
        assert "Please enter the correct" in page.inner_text(".errornote")  # waits for the answer's page
        page.fill("#id_password", "dora-test-password")
        page.click("input[type=submit]")
        # The directory's password is one factor: a supervisor sets up his authenticator before anything.
        page.wait_for_url(f"{base}/admin/second-factor/")
        assert page.goto(f"{base}/admin/rounds/round/").url.startswith(f"{base}/admin/second-factor/")
        key = base64.b32decode(page.inner_text("#second-factor-key"))
        page.fill("#id_otp_token", code(key))
        page.click("input[type=submit]")
        page.wait_for_url(f"{base}/admin/")
        assert "dora" in page.inner_text("#user-tools").lower()
        browser.close()

    dora = get_user_model().objects.get(username="dora")
    assert list(dora.groups.values_list("name", flat=True)) == ["supervisor"]
    made = AuditEvent.objects.filter(object_id=str(dora.pk), action="user.created").get()
    assert made.actor_name == f"directory {directory.uri}"
    assert made.after["directory"]["made_by"].lower() == dn_of("hr").lower()
