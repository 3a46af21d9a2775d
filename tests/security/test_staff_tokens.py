"""Issue 45, item 6: a person's tokens for his scripts, made with his password, expiring, revocable, audited."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from tests.security.people import PASSWORD, person
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
TOKENS = "/api/v1/tokens/"


def _basic(user) -> APIClient:
    client = APIClient()
    proof = base64.b64encode(f"{user.get_username()}:{PASSWORD}".encode()).decode()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {proof}")
    return client


def _token(text: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {text}")
    return client


def test_a_token_is_made_with_the_password_works_as_its_person_and_is_revoked():
    auditor = person("auditor", "ines")
    made = _basic(auditor).post(TOKENS, {"days": 7, "name": "nightly export"}, format="json")
    assert made.status_code == 201, made.json()
    text, key = made.json()["token"], made.json()["key"]
    assert text.startswith(key) and len(text) == 64
    stored = AuthToken.objects.get(token_key=key)
    assert text not in (stored.digest, stored.token_key) and len(stored.digest) == 128  # only a SHA-512 kept
    assert abs(stored.expiry - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)
    event = AuditEvent.objects.get(action="token.made")
    assert (event.actor_name, event.after["token"], event.after["name"]) == ("ines", key, "nightly export")
    assert text not in str(event.after)

    script = _token(text)
    assert script.get("/api/v1/rounds/").status_code == 200  # what the auditor may read
    assert script.post("/api/v1/pools/us-progressive/adjustments",
                       {"delta": "1.00", "reason": "x"}, format="json").status_code == 403  # and no more
    assert [t["token"] for t in script.get(TOKENS).json()] == [key]
    # A token never makes another: a token cannot outlive the last proof of its person.
    assert script.post(TOKENS, {"days": 7}, format="json").status_code in (401, 403)

    assert script.delete(f"{TOKENS}{key}/").status_code == 204
    assert AuditEvent.objects.get(action="token.revoked").before["token"] == key
    assert script.get("/api/v1/rounds/").status_code == 401


def test_a_token_expires_works_only_while_its_person_is_active_and_is_bounded(settings):
    supervisor = person("supervisor", "sam")
    text = _basic(supervisor).post(TOKENS, {"days": 1}, format="json").json()["token"]
    assert _token(text).get("/api/v1/rounds/").status_code == 200
    supervisor.is_active = False
    supervisor.save()
    assert _token(text).get("/api/v1/rounds/").status_code == 401
    supervisor.is_active = True
    supervisor.save()
    AuthToken.objects.filter(user=supervisor).update(expiry=timezone.now() - timedelta(seconds=1))
    assert _token(text).get("/api/v1/rounds/").status_code == 401

    refused = _basic(supervisor).post(TOKENS, {"days": settings.STAFF_TOKEN_MOST_DAYS + 1}, format="json")
    assert refused.status_code == 400 and list(refused.json()["errors"]) == ["days"]
    assert _basic(supervisor).delete(f"{TOKENS}nothing/").status_code == 404


def test_one_person_cannot_list_or_revoke_another_s_token():
    ines, sam = person("auditor", "ines"), person("auditor", "sam")
    key = _basic(ines).post(TOKENS, {"days": 1}, format="json").json()["key"]
    assert _basic(sam).get(TOKENS).json() == []
    assert _basic(sam).delete(f"{TOKENS}{key}/").status_code == 404
    assert AuthToken.objects.filter(token_key=key).exists()


def test_a_table_has_no_tokens(table_client):
    assert table_client("S01", "se-50kr").get(TOKENS).status_code == 403
