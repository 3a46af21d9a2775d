"""People of the casino in a role, as the API sees them."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.test import APIClient

from casino.people import CREATED, person_record
from casino.roles import roles_sync
from casino.services import user_roles_set
from trail.services import SYSTEM, Actor

PASSWORD = "a-long-test-password"


def hired(username: str, password: str | None = None):
    """A new user made by a person of his own (``maker-of-<name>``) in one transaction, as the admin
    makes one: independent of every other person made so (``trail.approvals``)."""
    with transaction.atomic():
        maker = get_user_model().objects.create_user(f"maker-of-{username}"[:150])
        person_record(user=maker, actor=SYSTEM, action=CREATED)
    with transaction.atomic():
        user = get_user_model().objects.create_user(username, password=password)
        person_record(user=user, actor=Actor.of_user(maker), action=CREATED)
    return user


def person(role: str | None, username: str | None = None):
    """A user holding ``role`` (None: no role at all), its groups synced from casino/roles.py, made by
    a person of his own (``hired``).

    A transactional test elsewhere may have flushed the groups the migration
    made; syncing puts them back as ``migrate`` would.
    """
    roles_sync()
    user = hired(username or f"{role or 'nobody'}-user", password=PASSWORD)
    user_roles_set(user=user, roles=[role] if role else [], actor=SYSTEM)
    return user


def person_client(role: str | None, username: str | None = None) -> APIClient:
    client = APIClient()
    client.force_authenticate(person(role, username))
    # The test client re-raises a view's exception; show the 500 a client would get instead.
    client.raise_request_exception = False
    return client


def authenticator(user):
    """``user``'s authenticator app, set up and confirmed (a TOTP device, as the admin's setup makes)."""
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from trail.services import audit_record

    device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
    if device is None:
        device = TOTPDevice.objects.create(user=user, name="authenticator", confirmed=True)
        audit_record(actor=Actor.of_user(user), action="user.second_factor_added", obj=user,
                     after={"device": device.name, "kind": "totp", "id": device.persistent_id})
    return device


def code(key: bytes, *, ahead: int = 0) -> str:
    """The six digits an authenticator app with ``key`` shows now (``ahead`` steps of 30 s later:
    a code once used is refused, and the device takes the next step's)."""
    from django_otp.oath import TOTP

    totp = TOTP(key)
    totp.drift = ahead
    return f"{totp.token():06d}"


def next_code(device) -> str:
    """A code ``device`` will take now: this step's, or the next one's when this step's is spent
    (a person signing in twice within 30 seconds)."""
    from django_otp.oath import TOTP

    device.refresh_from_db()
    now = TOTP(device.bin_key).t()
    return code(device.bin_key, ahead=max(0, (device.last_t or -1) + 1 - now))

