"""Passkeys as the admin's second factor (WebAuthn, through django-otp-webauthn).

A person who must prove a second factor (``casino.second_factor``) may set up
a passkey instead of, or beside, an authenticator app: the security key or the
phone's or computer's own authenticator signs the service's challenge for this
site's name, so a code cannot be read over a shoulder or phished onto another
site. A passkey is a second factor here, never the only one: the password (or
the directory's) comes first (``OTP_WEBAUTHN_ALLOW_PASSWORDLESS_LOGIN`` off).

The ceremonies are the library's views, mounted at ``/admin/passkeys/`` under
its own URL names; setting one up is also an audit event naming the passkey,
as an authenticator app's is, so ``verify_audit`` names a passkey inserted past
the service (``casino.proof_sign_in``).
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks
from django.db import transaction
from django.urls import path
from django.views.i18n import JavaScriptCatalog
from django_otp_webauthn import views
from django_otp_webauthn.models import WebAuthnCredential

from infra.request_ids import request_id_of
from trail.services import Actor, audit_record

app_name = "otp_webauthn"  # the library's scripts and template tags reverse these names
KIND = "passkey"


class PasskeyRegistrationComplete(views.CompleteCredentialRegistrationView):
    """The library's registration, and its audit event in the same transaction."""

    def post(self, *args, **kwargs):
        with transaction.atomic():
            response = super().post(*args, **kwargs)
            if response.status_code == 200:
                user = self.get_user()
                device = WebAuthnCredential.objects.get(pk=json.loads(response.content)["id"], user=user)
                audit_record(actor=Actor.of_user(user), action="user.second_factor_added", obj=user,
                             object_repr=user.get_username(),
                             after={"device": device.name, "kind": KIND, "id": device.persistent_id},
                             request_id=request_id_of(self.request))
        return response


urlpatterns = [
    path("registration/begin/", views.BeginCredentialRegistrationView.as_view(),
         name="credential-registration-begin"),
    path("registration/complete/", PasskeyRegistrationComplete.as_view(), name="credential-registration-complete"),
    path("authentication/begin/", views.BeginCredentialAuthenticationView.as_view(),
         name="credential-authentication-begin"),
    path("authentication/complete/", views.CompleteCredentialAuthenticationView.as_view(),
         name="credential-authentication-complete"),
    path("jsi18n/", JavaScriptCatalog.as_view(packages=["django_otp_webauthn"]), name="js-i18n-catalog"),
]


@checks.register(checks.Tags.security, deploy=True)
def passkey_origins_served(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """A passkey is made for the site's name: origins left at the demo's make none in production."""
    origins = settings.PASSKEY_ORIGINS
    if any(urlsplit(origin).scheme != "https" for origin in origins) or not origins:
        return [checks.Warning(f"PASSKEY_ORIGINS is {','.join(origins) or 'empty'}: passkeys work only at the "
                               "https origins people open the admin at", hint="set PASSKEY_ORIGINS=https://…",
                               id="casino.W001")]
    return []
