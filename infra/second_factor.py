"""Who must prove a second factor, and whether a request or a code proves it.

One home for the rule the admin (``casino.second_factor``) and the API
(``api.authentication``) both keep: a person in a role of
``SECOND_FACTOR_ROLES`` and every superuser must prove an authenticator app's
code or a passkey beside his password (while ``SECOND_FACTOR_REQUIRED``), and
so must anyone who has set one up.
"""

from __future__ import annotations

from django.conf import settings
from django_otp import match_token
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential


def required(user) -> bool:
    """Whether ``user``'s role asks him to prove a second factor."""
    if not settings.SECOND_FACTOR_REQUIRED or not getattr(user, "is_authenticated", False):
        return False
    return user.is_superuser or user.groups.filter(name__in=settings.SECOND_FACTOR_ROLES).exists()


def has_authenticator(user) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def has_passkey(user) -> bool:
    return WebAuthnCredential.objects.filter(user=user, confirmed=True).exists()


def must_prove(user) -> bool:
    """Whether ``user`` proves a second factor wherever he signs in: his role asks it, or he has one."""
    return required(user) or has_authenticator(user) or has_passkey(user)


def proven(request) -> bool:
    """Whether the person of ``request``'s session may act: he has proven a second factor this
    session (django-otp's mark), or he need not prove one."""
    user = request.user
    if not getattr(user, "is_authenticated", False) or user.is_verified():
        return True
    return not must_prove(user)


def code_matched(user, given: str):
    """The authenticator app whose code ``given`` is, or None. A wrong code slows the next try
    down (django-otp's throttle); an empty one is no try; a code once taken is spent."""
    if not given:
        return None
    device = match_token(user, given)
    return device if isinstance(device, TOTPDevice) else None
