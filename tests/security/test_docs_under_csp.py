"""The API docs still work in a real browser under the Content-Security-Policy.

Headless Chromium (system package, as tests/e2e) opens /api/docs/: Swagger UI
must render the schema's operations, and the browser must report no CSP
violation. A page whose script lost its nonce, or a policy that forbids what
the docs need, fails here, not in front of an auditor.
"""

from __future__ import annotations

import os

import pytest

from tests.browser import CHROMIUM, chromium


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="no Chromium on this machine")
def test_swagger_ui_renders_with_no_csp_violation(live_server, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    violations: list[str] = []
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page()
        page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
        page.add_init_script(
            "document.addEventListener('securitypolicyviolation',"
            " e => console.log('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))"
        )
        response = page.goto(f"{live_server.url}/api/docs/")
        policy = response.headers["content-security-policy"]
        page.wait_for_selector(".swagger-ui .opblock-summary-path", timeout=30_000)
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        title = page.inner_text(".swagger-ui .info .title")
        browser.close()

    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "table-audit" in title
    assert any("/api/v1/rounds/" in path for path in paths), paths
    assert violations == []
