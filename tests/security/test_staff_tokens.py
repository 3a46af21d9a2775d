"""Issue 45, item 6: a person's tokens for his scripts, made with his password, expiring, revocable, audited."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from django.utils import timezone
from django_otp.plugins.otp_totp.models import TOTPDevice
from knox.models import AuthToken
from rest_framework.test import APIClient

from tests.security.people import PASSWORD, authenticator, code, next_code, person
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
TOKENS = "/api/v1/tokens/"


def _basic(user, code: str = "") -> APIClient:
    """A client sending ``user``'s password (and ``code`` in X-Second-Factor, if given)."""
    client = APIClient()
    proof = base64.b64encode(f"{user.get_username()}:{PASSWORD}".encode()).decode()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {proof}", **({"HTTP_X_SECOND_FACTOR": code} if code else {}))
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
    device = authenticator(supervisor)
    text = _basic(supervisor, next_code(device)).post(TOKENS, {"days": 1}, format="json").json()["token"]
    assert _token(text).get("/api/v1/rounds/").status_code == 200
    supervisor.is_active = False
    supervisor.save()
    assert _token(text).get("/api/v1/rounds/").status_code == 401
    supervisor.is_active = True
    supervisor.save()
    AuthToken.objects.filter(user=supervisor).update(expiry=timezone.now() - timedelta(seconds=1))
    assert _token(text).get("/api/v1/rounds/").status_code == 401

    refused = _basic(supervisor, next_code(device)).post(TOKENS, {"days": settings.STAFF_TOKEN_MOST_DAYS + 1},
                                                          format="json")
    assert refused.status_code == 400 and list(refused.json()["errors"]) == ["days"]
    assert _basic(supervisor, next_code(device)).delete(f"{TOKENS}nothing/").status_code == 404


def test_a_supervisor_s_password_alone_opens_nothing_of_the_api_and_his_code_works_once(settings):
    """Issue 45, item 6: Basic authentication is no longer one factor for whoever must prove two."""
    supervisor = person("supervisor", "sam")
    alone = _basic(supervisor).get("/api/v1/rounds/")
    assert alone.status_code == 401 and "X-Second-Factor" in alone.json()["message"]
    device = authenticator(supervisor)
    assert _basic(supervisor, "000000" if code(device.bin_key) != "000000" else "111111").get(
        "/api/v1/rounds/").status_code == 401
    device.refresh_from_db()
    device.throttle_reset()  # a wrong code makes the next try wait: as the second that passes would
    given = next_code(device)
    with_code = _basic(supervisor, given)
    made = with_code.post(TOKENS, {"days": 1, "name": "cage import"}, format="json")
    assert made.status_code == 201
    assert with_code.get("/api/v1/rounds/").status_code == 401  # the code is spent: the script uses its token
    assert _token(made.json()["token"]).get("/api/v1/rounds/").status_code == 200
    # An auditor, who need prove nothing, still calls with his password; once he sets up an
    # authenticator, his password alone no longer does.
    auditor = person("auditor", "ines")
    assert _basic(auditor).get("/api/v1/rounds/").status_code == 200
    authenticator(auditor)
    assert _basic(auditor).get("/api/v1/rounds/").status_code == 401
    settings.SECOND_FACTOR_REQUIRED = False  # a casino whose gateway proves it: the role asks nothing
    assert _basic(person("supervisor", "sven")).get("/api/v1/rounds/").status_code == 200


def test_a_session_that_has_not_proven_its_second_factor_opens_nothing_of_the_api():
    from django.test import Client

    supervisor = person("supervisor", "sam")
    client = Client()
    signed_in = client.post("/admin/login/?next=/admin/", {"username": "sam", "password": PASSWORD})
    assert signed_in.status_code == 302  # his password: the admin takes him to set up a second factor
    refused = client.get("/api/v1/rounds/")
    assert refused.status_code == 401 and "has not proven its second factor" in refused.json()["message"]
    made = client.post(TOKENS, {"days": 1}, content_type="application/json")
    assert made.status_code in (401, 403) and "has not proven its second factor" in made.json()["message"]
    client.get("/admin/second-factor/")
    device = TOTPDevice.objects.get(user=supervisor, confirmed=False)
    assert client.post("/admin/second-factor/", {"otp_token": code(device.bin_key)}).status_code == 302
    assert client.get("/api/v1/rounds/").status_code == 200


def test_one_person_cannot_list_or_revoke_another_s_token():
    ines, sam = person("auditor", "ines"), person("auditor", "sam")
    key = _basic(ines).post(TOKENS, {"days": 1}, format="json").json()["key"]
    assert _basic(sam).get(TOKENS).json() == []
    assert _basic(sam).delete(f"{TOKENS}{key}/").status_code == 404
    assert AuthToken.objects.filter(token_key=key).exists()


def test_a_table_has_no_tokens(table_client):
    assert table_client("S01", "se-50kr").get(TOKENS).status_code == 403
