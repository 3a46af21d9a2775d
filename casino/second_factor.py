"""A second factor for the admin: a code from an authenticator app (TOTP, django-otp).

A person in a role of ``SECOND_FACTOR_ROLES`` (supervisors and admins, who move
money and decide what is paid) and every superuser must prove a code as well as
his password before the admin lets him in (``required``). One who has no
authenticator yet signs in with his password and is taken to
``/admin/second-factor/``, where he scans the key into his app and proves a code
from it: the device is his from then on, the session counts as proven, and the
audit trail records it. Anyone who has an authenticator is asked for its code
at every sign-in, required or not. Required in production unless
``SECOND_FACTOR_REQUIRED=0`` (a casino that signs its people in through its own
gateway); in the embedded demo only if ``SECOND_FACTOR_REQUIRED=1``.

A person who signs in against the casino's directory (``casino.directory``)
proves the same second factor after his directory password. Still one factor:
the API's Basic authentication (a person's scripts use tokens instead,
``api.tokens``). Passkeys are not here yet.
"""

from __future__ import annotations

from io import BytesIO

import qrcode
import qrcode.image.svg
from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import mark_safe
from django_otp import login as otp_login
from django_otp import match_token, user_has_device
from django_otp.plugins.otp_totp.models import TOTPDevice

from infra.request_ids import request_id_of
from trail.services import Actor, audit_record

DEVICE_NAME = "authenticator"


def required(user) -> bool:
    """Whether ``user`` must prove a second factor before the admin lets him in."""
    if not settings.SECOND_FACTOR_REQUIRED or not getattr(user, "is_authenticated", False):
        return False
    return user.is_superuser or user.groups.filter(name__in=settings.SECOND_FACTOR_ROLES).exists()


def proven(request) -> bool:
    """The admin's own check: a person who must prove a second factor has proven it this session."""
    return not required(request.user) or request.user.is_verified()


class LoginForm(AdminAuthenticationForm):
    """The admin's sign-in: the password, and the authenticator's code of whoever has one."""

    otp_token = forms.CharField(
        required=False, label="Code", max_length=16,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
        help_text="The six digits your authenticator app shows now (if you have set one up).",
    )
    error_messages = {
        **AdminAuthenticationForm.error_messages,
        "code": "The code is missing or wrong: enter the six digits your authenticator app shows now.",
    }

    def clean(self):
        cleaned = super().clean()
        user = self.get_user()
        if user is not None and user_has_device(user, confirmed=True):
            given = (cleaned.get("otp_token") or "").strip()
            # A wrong code slows the next try down (django-otp's throttle); an empty one is no try.
            device = match_token(user, given) if given else None
            if device is None:
                raise forms.ValidationError(self.error_messages["code"], code="code")
            user.otp_device = device  # django-otp marks the session proven when it signs him in
        return cleaned


def _svg(uri: str) -> str:
    out = BytesIO()
    qrcode.make(uri, image_factory=qrcode.image.svg.SvgPathImage, box_size=8).save(out)
    return out.getvalue().decode()


def enrol_view(site, request):
    """``/admin/second-factor/``: a signed-in person without an authenticator sets one up."""
    user = request.user
    if not (getattr(user, "is_authenticated", False) and user.is_active and user.is_staff):
        return HttpResponseRedirect(reverse("admin:login"))
    if user_has_device(user, confirmed=True):
        return HttpResponseRedirect(reverse("admin:index"))
    device = TOTPDevice.objects.filter(user=user, confirmed=False).first() or TOTPDevice.objects.create(
        user=user, name=DEVICE_NAME, confirmed=False)
    error = ""
    if request.method == "POST":
        if device.verify_token((request.POST.get("otp_token") or "").strip()):
            device.confirmed = True
            device.save(update_fields=["confirmed"])
            audit_record(actor=Actor.of_user(user), action="user.second_factor_added", obj=user,
                         object_repr=user.get_username(),
                         after={"device": device.name, "kind": "totp", "id": device.persistent_id},
                         request_id=request_id_of(request))
            otp_login(request, device)
            return HttpResponseRedirect(reverse("admin:index"))
        error = "That code is not the one the app shows now: scan the key again, or wait for the next code."
    context = {
        **site.each_context(request), "title": "Set up your authenticator",
        "qr": mark_safe(_svg(device.config_url)),  # noqa: S308 - SVG the qrcode library drew from our own URI
        "secret": device.config_url.split("secret=", 1)[1].split("&", 1)[0], "error": error,
        "required": required(user),
    }
    return TemplateResponse(request, "admin/second_factor.html", context)
