"""API8 Security misconfiguration: production settings, checked as production loads them.

Settings are read once per process, so each check runs a fresh Python with
the production environment (``DJANGO_ENV=production``, a real secret, a host
name): ``manage.py check --deploy`` must find nothing, production must refuse
to start without its secret, and the answers must carry HSTS, the CSP, frame
denial and the other headers, over HTTPS only, with secure cookies and no
debug page.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def production(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS"}}
    env.update(
        DJANGO_ENV="production", SECRET_KEY=secrets.token_urlsafe(50), ALLOWED_HOSTS="audit.example.com",
        DATABASE_URL="sqlite:///:memory:", DJANGO_SETTINGS_MODULE="casino.settings", LOG_LEVEL="ERROR",
        # Where a production writes its chain's anchors (check --deploy warns without one).
        AUDIT_ANCHOR_PATH=tempfile.gettempdir(), AUDIT_ANCHOR_KEY=secrets.token_urlsafe(32),
        PASSKEY_ORIGINS="https://audit.example.com",  # where people open the admin (check --deploy warns without)
    )
    env.update(extra)
    return env


def run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_check_deploy_finds_nothing_in_production_settings():
    done = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], production())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout


def test_check_deploy_is_a_real_gate():
    # The same check with DEBUG forced on in production must fail: it is not a check that cannot fail.
    done = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], production(DEBUG="1"))
    assert done.returncode != 0
    assert "security.W018" in done.stdout + done.stderr


def test_check_deploy_warns_of_passkey_origins_left_at_the_demo_s():
    done = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], production(PASSKEY_ORIGINS="http://localhost:8000"))
    assert done.returncode != 0 and "casino.W001" in done.stdout + done.stderr


def test_production_refuses_to_start_without_its_secret():
    env = production()
    del env["SECRET_KEY"]
    done = run(["-c", "import django; django.setup()"], env)
    assert done.returncode != 0
    assert "SECRET_KEY must be set in production" in done.stderr


PROBE = r"""
import json, django
django.setup()
from django.test import Client
client = Client(HTTP_HOST="audit.example.com")
plain = client.get("/api/schema/")
schema = client.get("/api/schema/", secure=True)
# Production serves the files collectstatic gathered (and their manifest); this
# process has none, so only the login page's static links are resolved plainly.
from django.test import override_settings
plain_static = {"staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
                "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"}}
with override_settings(STORAGES=plain_static):
    login = client.get("/admin/login/", secure=True)
missing = client.get("/api/v1/nothing-here/", secure=True)
print(json.dumps({
    "plain": [plain.status_code, plain.get("Location")],
    "headers": dict(schema.headers),
    "status": schema.status_code,
    "csrf_cookie": {k: v for k, v in login.cookies["csrftoken"].items() if v},
    "missing": [missing.status_code, missing.content.decode()[:2000]],
}))
"""


@pytest.fixture(scope="module")
def answered():
    done = run(["-c", PROBE], production())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_production_answers_only_over_https(answered):
    status, location = answered["plain"]
    assert status == 301 and location == "https://audit.example.com/api/schema/"


def test_production_answers_carry_the_security_headers(answered):
    headers = answered["headers"]
    assert answered["status"] == 200
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    policy = dict(
        (directive.split(" ", 1) + [""])[:2] for directive in headers["Content-Security-Policy"].split("; ")
    )
    assert policy["default-src"] == "'self'"
    # The nonce appears on pages that use one (the docs: tests/security/test_docs_under_csp.py).
    assert policy["script-src"].startswith("'self'") and "unsafe" not in policy["script-src"]
    assert policy["frame-ancestors"] == "'none'" and policy["object-src"] == "'none'"


def test_production_cookies_are_secure(answered):
    cookie = answered["csrf_cookie"]
    assert cookie.get("secure") is True and cookie.get("samesite") == "Lax"


def test_production_shows_no_debug_page(answered):
    status, body = answered["missing"]
    assert status == 404
    for leak in ("Traceback", "DEBUG", "urlpatterns", "casino.urls", "Django tried these URL patterns"):
        assert leak not in body
