"""Issue 45, item 6: the admin asks supervisors, admins and superusers for an authenticator's code."""

from __future__ import annotations

import pytest
from django.test import Client
from django_otp.plugins.otp_totp.models import TOTPDevice

from tests.security.people import PASSWORD, authenticator, code, person
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
LOGIN = "/admin/login/?next=/admin/"


def _sign_in(username: str, otp: str = "") -> tuple[Client, object]:
    client = Client()
    response = client.post(LOGIN, {"username": username, "password": PASSWORD, "otp_token": otp})
    return client, response


def test_a_supervisor_with_an_authenticator_is_let_in_only_with_its_code():
    supervisor = person("supervisor", "sara")
    device = authenticator(supervisor)
    client, refused = _sign_in("sara")
    assert refused.status_code == 200 and "The code is missing or wrong" in refused.content.decode()
    assert client.get("/admin/").status_code == 302
    client, refused = _sign_in("sara", "000000" if code(device.bin_key) != "000000" else "111111")
    assert refused.status_code == 200 and "The code is missing or wrong" in refused.content.decode()
    # A wrong code makes the next try wait (1 s, then doubling): a guesser is slowed down.
    device.refresh_from_db()
    assert device.throttling_failure_count == 1
    # While the wait lasts, even the right code is refused. The wait is made longer here (as five
    # failures make it, 16 s) than the one second a loaded machine may spend on the next sign-in.
    from django.utils import timezone

    device.throttling_failure_count, device.throttling_failure_timestamp = 5, timezone.now()
    device.save(update_fields=["throttling_failure_count", "throttling_failure_timestamp"])
    assert _sign_in("sara", code(device.bin_key))[1].status_code == 200
    device.throttle_reset()  # as the seconds that pass would

    client, signed_in = _sign_in("sara", code(device.bin_key))
    assert signed_in.status_code == 302 and signed_in["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    # The same code again is refused: a code seen over a shoulder is spent.
    again, replayed = _sign_in("sara", code(device.bin_key))
    assert replayed.status_code == 200


def test_a_supervisor_without_one_signs_in_with_his_password_only_to_set_one_up():
    supervisor = person("supervisor", "sven")
    client, signed_in = _sign_in("sven")
    assert signed_in.status_code == 302
    # The password alone opens nothing of the admin: he is taken to set up his authenticator.
    assert client.get("/admin/").status_code == 302
    assert client.get("/admin/rounds/round/").status_code == 302
    setup = client.get("/admin/login/")
    assert setup.status_code == 302 and setup["Location"] == "/admin/second-factor/"
    page = client.get("/admin/second-factor/")
    assert page.status_code == 200 and "<svg" in page.content.decode()
    device = TOTPDevice.objects.get(user=supervisor, confirmed=False)
    wrong = client.post("/admin/second-factor/", {"otp_token": "12"})
    assert "not the one the app shows now" in wrong.content.decode()
    device.refresh_from_db()
    device.throttle_reset()  # a wrong code makes the next try wait: as the second that passes would

    confirmed = client.post("/admin/second-factor/", {"otp_token": code(device.bin_key)})
    assert confirmed.status_code == 302 and confirmed["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200  # this session has proven it
    device.refresh_from_db()
    assert device.confirmed
    event = AuditEvent.objects.get(action="user.second_factor_added")
    assert (event.actor_name, event.after) == (
        "sven", {"device": "authenticator", "kind": "totp", "id": device.persistent_id})
    # From now on the code is asked at every sign-in.
    assert _sign_in("sven")[1].status_code == 200


def test_an_auditor_needs_none_and_the_requirement_can_be_turned_off(settings):
    person("auditor", "ines")
    client, signed_in = _sign_in("ines")
    assert signed_in.status_code == 302 and client.get("/admin/").status_code == 200

    settings.SECOND_FACTOR_REQUIRED = False
    person("supervisor", "sam")
    client, signed_in = _sign_in("sam")
    assert signed_in.status_code == 302 and client.get("/admin/").status_code == 200


def test_a_superuser_must_prove_one_too(django_user_model):
    from tests.security.people import hired

    root = hired("root", password=PASSWORD)
    root.is_superuser = root.is_staff = True
    root.save()
    client, _ = _sign_in("root")
    assert client.get("/admin/").status_code == 302


def _passkey(user):
    from django_otp_webauthn.models import WebAuthnCredential

    return WebAuthnCredential.objects.create(user=user, name="key", confirmed=True, credential_id=b"\x01" * 16,
                                             public_key=b"\x02" * 77, sign_count=0)


def test_one_with_a_passkey_gives_his_password_then_proves_the_passkey_on_the_next_page():
    pia = person("supervisor", "pia")
    _passkey(pia)
    client, signed_in = _sign_in("pia")
    assert signed_in.status_code == 302  # no code asked: he has no authenticator app
    assert client.get("/admin/").status_code == 302
    assert client.get("/admin/login/")["Location"] == "/admin/second-factor/"
    page = client.get("/admin/second-factor/").content.decode()
    assert 'id="passkey-verification-placeholder"' in page and "otp_webauthn_auth.js" in page
    assert 'name="otp_token"' not in page
    # The passkey's ceremony starts for him (its challenge kept in his session), and nothing else opens.
    begun = client.post("/admin/passkeys/authentication/begin/", content_type="application/json")
    assert begun.status_code == 200 and begun.json()["allowCredentials"]
    assert client.get("/admin/rounds/round/").status_code == 302


def test_an_auditor_with_a_passkey_must_prove_it_though_his_role_needs_none():
    ines = person("auditor", "ines")
    _passkey(ines)
    client, _ = _sign_in("ines")
    assert client.get("/admin/").status_code == 302


def test_one_with_both_gives_the_code_on_the_form_or_proves_either_on_the_next_page():
    sara = person("supervisor", "sara")
    device = authenticator(sara)
    _passkey(sara)
    client, signed_in = _sign_in("sara", code(device.bin_key))
    assert signed_in.status_code == 302 and client.get("/admin/").status_code == 200
    # Proven, he may add another passkey on the same page.
    page = client.get("/admin/second-factor/").content.decode()
    assert 'id="passkey-registration-placeholder"' in page

    client, signed_in = _sign_in("sara")  # the code left empty: the passkey, or the code, next
    assert signed_in.status_code == 302 and client.get("/admin/").status_code == 302
    page = client.get("/admin/second-factor/").content.decode()
    assert 'id="passkey-verification-placeholder"' in page and 'name="otp_token"' in page
    wrong = client.post("/admin/second-factor/", {"otp_token": "12"})
    assert "The code is missing or wrong" in wrong.content.decode()
    device.refresh_from_db()
    device.throttle_reset()
    proven = client.post("/admin/second-factor/", {"otp_token": code(device.bin_key, ahead=1)})
    assert proven.status_code == 302 and client.get("/admin/").status_code == 200


def test_a_passkey_is_never_the_only_factor():
    from django.conf import settings

    assert settings.OTP_WEBAUTHN_ALLOW_PASSWORDLESS_LOGIN is False
    pia = person("supervisor", "pia")
    _passkey(pia)
    anonymous = Client()
    refused = anonymous.post("/admin/passkeys/authentication/begin/", content_type="application/json")
    assert refused.status_code in (401, 403) and anonymous.get("/admin/").status_code == 302
