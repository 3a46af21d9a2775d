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
    assert _sign_in("sara", code(device.bin_key))[1].status_code == 200
    device.throttle_reset()  # as the second that passes would

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
