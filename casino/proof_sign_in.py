"""What lets a person in without his password, held to the audit events that made it.

A script's token (``api.tokens``), an authenticator app and a passkey (``casino.second_factor``,
``casino.passkeys``)
are rows the application's role must write, so the database cannot refuse one
inserted past the service: a token for a supervisor, or an authenticator whose
key an insider knows. Each is made with an event naming it: a token no
``token.made`` event made for its person, or that works past the expiry it
was made with, and a confirmed authenticator or passkey no ``user.second_factor_added``
event names, are each named by ``verify_audit``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from django.utils.dateparse import parse_datetime
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential
from knox.models import AuthToken

from trail.models import AuditEvent

from .people import PERSON

MILLISECOND = timedelta(milliseconds=1)  # the trail keeps times to the millisecond


def sign_in_differences() -> Iterator[str]:
    made = {}
    for user_pk, after in (AuditEvent.objects.filter(object_type=PERSON, action="token.made")
                           .values_list("object_id", "after").iterator(chunk_size=1000)):
        made[(user_pk, (after or {}).get("token"))] = (after or {}).get("expires")
    for token in AuthToken.objects.select_related("user").order_by("created").iterator(chunk_size=1000):
        who = f"token {token.token_key} of {token.user.get_username()}"
        key = (str(token.user_id), token.token_key)
        if key not in made:
            yield f"{who}: the audit trail never recorded it made by its person"
            continue
        expires = parse_datetime(made[key]) if made[key] else None
        if expires is not None and (token.expiry is None or token.expiry >= expires + MILLISECOND):
            yield f"{who}: works until {token.expiry or 'never expiring'}, made to end {expires}"
    added = {(user_pk, (after or {}).get("id")) for user_pk, after in AuditEvent.objects.filter(
        object_type=PERSON, action="user.second_factor_added").values_list("object_id", "after")}
    for model, kind in ((TOTPDevice, "authenticator"), (WebAuthnCredential, "passkey")):
        for device in model.objects.filter(confirmed=True).select_related("user").order_by("pk"):
            if (str(device.user_id), device.persistent_id) not in added:
                yield (f"{kind} {device.persistent_id} of {device.user.get_username()}: the audit trail "
                       "never recorded it set up by its person")
