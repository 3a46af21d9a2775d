"""A second factor for the admin: an authenticator app's code (TOTP, django-otp) or a passkey.

A person in a role of ``SECOND_FACTOR_ROLES`` (supervisors and admins, who move
money and decide what is paid) and every superuser must prove a second factor
as well as his password before the admin lets him in (``required``). One who
has none yet signs in with his password and is taken to
``/admin/second-factor/``, where he either scans the key into his app and
proves a code from it, or sets up a passkey (``casino.passkeys``): the device
is his from then on, the session counts as proven, and the audit trail records
it. Whoever has an authenticator app gives its code on the sign-in form; whoever
has a passkey may leave the code empty and prove the passkey on the next page.
Anyone who has either is asked for one at every sign-in, required or not.
Required in production unless ``SECOND_FACTOR_REQUIRED=0`` (a casino that signs
its people in through its own gateway); in the embedded demo only if
``SECOND_FACTOR_REQUIRED=1``.

A person who signs in against the casino's directory (``casino.directory``)
proves the same second factor after his directory password. The rule has one
home (``infra.second_factor``), which the API keeps too (``api.authentication``:
a session not proven opens none of it, and a password needs the app's code).
"""

from __future__ import annotations

from io import BytesIO

import qrcode
import qrcode.image.svg
from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import mark_safe
from django_otp import login as otp_login
from django_otp.plugins.otp_totp.models import TOTPDevice

from infra.request_ids import request_id_of
from infra.second_factor import code_matched, has_authenticator, has_passkey, proven, required
from trail.services import Actor, audit_record

__all__ = ["LoginForm", "proven", "required", "second_factor_view"]

DEVICE_NAME = "authenticator"


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
        given = (cleaned.get("otp_token") or "").strip()
        # One with a passkey may leave the code empty: he proves the passkey on the next page.
        if user is not None and has_authenticator(user) and (given or not has_passkey(user)):
            device = code_matched(user, given)
            if device is None:
                raise forms.ValidationError(self.error_messages["code"], code="code")
            user.otp_device = device  # django-otp marks the session proven when it signs him in
        return cleaned


def _svg(uri: str) -> str:
    out = BytesIO()
    qrcode.make(uri, image_factory=qrcode.image.svg.SvgPathImage, box_size=8).save(out)
    return out.getvalue().decode()


def second_factor_view(site, request):
    """``/admin/second-factor/``: a signed-in person proves his passkey or his app's code, or,
    having neither, sets one up; one who has proven his adds a passkey here."""
    user = request.user
    if not (getattr(user, "is_authenticated", False) and user.is_active and user.is_staff):
        return HttpResponseRedirect(reverse("admin:login"))
    authenticator, passkey = has_authenticator(user), has_passkey(user)
    if authenticator or passkey:
        return _prove_or_add(site, request, authenticator=authenticator, passkey=passkey)
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
        **site.each_context(request), "title": "Set up your second factor", "mode": "enrol",
        "qr": mark_safe(_svg(device.config_url)),  # noqa: S308 - SVG the qrcode library drew from our own URI
        "secret": device.config_url.split("secret=", 1)[1].split("&", 1)[0], "error": error,
        "required": required(user),
    }
    return TemplateResponse(request, "admin/second_factor.html", context)


def _prove_or_add(site, request, *, authenticator: bool, passkey: bool):
    user, error = request.user, ""
    verified = user.is_verified()
    if request.method == "POST" and authenticator and not verified:
        device = code_matched(user, (request.POST.get("otp_token") or "").strip())
        if device is not None:
            otp_login(request, device)
            return HttpResponseRedirect(reverse("admin:index"))
        error = "The code is missing or wrong: enter the six digits your authenticator app shows now."
    context = {
        **site.each_context(request), "mode": "add" if verified else "prove", "error": error,
        "title": "Add a passkey" if verified else "Prove your second factor",
        "authenticator": authenticator, "passkey": passkey,
    }
    return TemplateResponse(request, "admin/second_factor.html", context)
