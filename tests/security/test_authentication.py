"""API2 Broken authentication: table keys, people's sessions.

tests/api/test_round_ingest.py already refuses missing, malformed and wrong
keys (401), a deactivated table, and shows a rotated key working through its
grace and not after; tests/test_login_and_throttling.py locks out repeated
failed logins. Here: what is stored of a key, how it is compared, rotation as
an operator does it, and a session that cannot write without its CSRF token.
"""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from api import authentication
from rounds.models import TableKey
from tests.api.records import ROUNDS, record
from trail.models import AuditEvent

from .people import person

pytestmark = pytest.mark.django_db


def key_parts(key: str) -> tuple[str, str]:
    prefix, key_id, secret = key.split("_", 2)
    assert prefix == "ta"
    return key_id, secret


def test_only_a_hash_of_a_table_key_is_stored_and_the_secret_is_nowhere(table_client):
    client = table_client("S01", "se-50kr")
    key = client._credentials["HTTP_AUTHORIZATION"].removeprefix("Bearer ")
    key_id, secret = key_parts(key)
    assert client.post(ROUNDS, record(), format="json").status_code == 201

    stored = TableKey.objects.get(key_id=key_id)
    assert stored.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    # Not in the key's row, not in the audit log (which names the key by its id).
    row = json.dumps(list(TableKey.objects.values()), default=str)
    log = json.dumps(list(AuditEvent.objects.values()), default=str)
    assert secret not in row and secret not in log
    assert key_id in log


def test_keys_are_compared_in_constant_time_even_for_an_unknown_key_id(table_client, monkeypatch):
    client = table_client("S01", "se-50kr")
    _, secret = key_parts(client._credentials["HTTP_AUTHORIZATION"].removeprefix("Bearer "))
    compared = []
    original = hmac.compare_digest

    def compare_digest(a, b):
        compared.append((a, b))
        return original(a, b)

    monkeypatch.setattr(authentication.hmac, "compare_digest", compare_digest)
    hashed = hashlib.sha256(secret.encode()).hexdigest()

    assert client.post(ROUNDS, record("R-1"), format="json").status_code == 201
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Bearer ta_{'f' * 12}_{secret}")
    assert stranger.post(ROUNDS, record("R-2"), format="json").status_code == 401

    # The right key: its hash against the stored one. An unknown id: still hashed and
    # compared (against a dummy), so the answer takes as long as for a known id.
    assert compared == [(hashed, hashed), (hashed, "0" * 64)]


def test_an_operator_rotates_a_key_with_grace_and_the_table_posts_throughout(table_client, capsys):
    old = table_client("S01", "se-50kr")
    call_command("register_table", "S01", "--config", "se-50kr", "--grace-minutes", "15")
    new_key = capsys.readouterr().out.strip().splitlines()[-1]
    assert new_key.startswith("ta_")
    new = APIClient()
    new.credentials(HTTP_AUTHORIZATION=f"Bearer {new_key}")

    # Both keys work while the table switches; no round is refused meanwhile.
    assert old.post(ROUNDS, record("R-1"), format="json").status_code == 201
    assert new.post(ROUNDS, record("R-2"), format="json").status_code == 201
    assert old.post(ROUNDS, record("R-1"), format="json").status_code == 200

    call_command("register_table", "S01", "--config", "se-50kr")
    capsys.readouterr()
    assert new.post(ROUNDS, record("R-3"), format="json").status_code == 401
    assert AuditEvent.objects.filter(action="table.key_rotated").count() == 2


def test_a_session_cannot_write_without_its_csrf_token(db):
    supervisor = person("supervisor", "csrf-supervisor")
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(supervisor)
    adjust = "/api/v1/pools/us-progressive/adjustments"
    body = {"delta": "1.00", "reason": "forged by another site"}

    refused = browser.post(adjust, body, format="json")
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["message"]

    token = browser.get("/api/docs/").cookies["csrftoken"].value
    assert browser.post(adjust, body, format="json", HTTP_X_CSRFTOKEN=token).status_code == 201


@pytest.mark.parametrize("header", ["Bearer", "Bearer ", "Bearer ta__", "Bearer ta_abc_", "bearer ta_x_y"])
def test_an_empty_or_half_key_is_never_a_table(table_client, header):
    table_client("S01", "se-50kr")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert client.post(ROUNDS, record(), format="json").status_code == 401
