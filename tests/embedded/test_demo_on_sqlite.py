"""The embedded default as a new user meets it: a fresh SQLite file migrated and the demo loaded, with
nothing set but the file (no window of the books, no broker), as ``scripts/serve`` does; then the
server it starts, signed into in Chromium with each login the demo printed."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from django.db import connection

from tests.browser import chromium

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the embedded default's SQLite file: scripts/test's SQLite pass"
)
# A printed login: "  supervisor  <password>    (role supervisor: …)".
LOGIN = re.compile(r"^\s+(admin|auditor|supervisor)\s+(\S+)\s+\((superuser|role \w+)", re.MULTILINE)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo as ``scripts/serve`` loads it: its environment, its port and what it printed."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("DJANGO_SETTINGS_MODULE", "ROUND_WINDOW_OPENS", "CELERY_BROKER_URL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.sqlite3'}"
    port = _free_port()
    for command in (["migrate", "--no-input"], ["load_demo", "--url", f"http://127.0.0.1:{port}"]):
        done = subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    return env, port, done.stdout


def test_a_fresh_sqlite_file_takes_the_demo(demo):
    _, port, printed = demo
    assert f"Admin:    http://127.0.0.1:{port}/admin/" in printed
    assert dict((login, what) for login, _, what in LOGIN.findall(printed)) == {
        "admin": "superuser", "auditor": "role auditor", "supervisor": "role supervisor"}


def test_each_printed_login_opens_its_pages_in_a_browser(demo):
    """Each login as printed signs in; the supervisor's count link opens the form, the auditor's
    tonight page raises no false alarm over the day the demo reconciled, the demo's report shows its
    dealers and its parts, and a page refused him leaves no traceback in the server's output."""
    from playwright.sync_api import sync_playwright

    env, port, printed = demo
    logins = {login: password for login, password, _ in LOGIN.findall(printed)}
    base = f"http://127.0.0.1:{port}"
    # Its log to a file, not a pipe: a pipe no one reads while the browser works could fill and stop it.
    log = tempfile.TemporaryFile(mode="w+")
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
    try:
        _listening(port, server)
        with sync_playwright() as p:
            browser = chromium(p)
            for login in ("admin", "auditor", "supervisor"):
                page = browser.new_page(viewport={"width": 1366, "height": 768})
                page.goto(f"{base}/admin/login/")
                page.fill("#id_username", login)
                page.fill("#id_password", logins[login])
                page.click("input[type=submit]")
                page.wait_for_url(f"{base}/admin/")
                text = page.inner_text("#content")
                assert "reconciled" in text or "report" in text, text[:500]
                if login == "auditor":
                    assert "stale" not in text.lower(), text
                    # Refused, the server says so in one line of its log, no traceback (read below).
                    refused = page.goto(f"{base}/admin/audit/tablecount/enter/")
                    assert refused.status == 403
                    # The demo's report, read from its summary and its dealers' rows on SQLite.
                    page.goto(f"{base}/admin/audit/reconciliationreport/")
                    page.click("#result_list tbody tr th a")
                    page.wait_for_url(re.compile(r".*/reconciliationreport/\d+/change/"))
                    assert page.locator(".field-dealers_table a[title='his page']").count() > 0
                    assert "Complete" in page.inner_text(".field-parts_table")
                if login == "supervisor":
                    page.goto(f"{base}/admin/audit/tablecount/")
                    page.click("text=Enter a count")
                    page.wait_for_url(f"{base}/admin/audit/tablecount/enter/")
                    assert page.locator("#count-form #id_table").count() == 1
                page.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.seek(0)
        errors = log.read()
        log.close()
    assert "Traceback" not in errors, errors[-3000:]


def _listening(port: int, server: subprocess.Popen, *, within: float = 60) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert server.poll() is None, f"the demo's server ended ({server.returncode}) before it listened"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"the demo's server did not listen on {port} within {within} s")
