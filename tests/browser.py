"""Headless Chromium from the system's packages (scripts/test installs it), driven by
Playwright's Python API without Playwright's own browser download."""

from __future__ import annotations

import shutil

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# No sandbox (tests run as root), and nothing the browser would fetch for itself.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium(playwright):
    """The system's Chromium, launched headless by ``playwright`` (``sync_playwright()``'s)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def signed_in(page, base_url: str, username: str, password: str) -> None:
    """``page`` through the admin's login form as ``username``, on to the first page; one who must
    prove a second factor (a supervisor, an admin) gives his authenticator's code too."""
    from django.contrib.auth import get_user_model

    from casino.second_factor import required
    from tests.security.people import authenticator, next_code

    user = get_user_model().objects.get(username=username)
    page.goto(f"{base_url}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    if required(user):
        page.fill("#id_otp_token", next_code(authenticator(user)))
    page.click("input[type=submit]")
    page.wait_for_url(f"{base_url}/admin/")
