"""A person's tokens for his scripts: made by himself with his password, expiring, revocable, audited.

A script that sends a password with every call costs the server a key
stretching each time (docs/SCALING.md); a token costs a hash. A person makes
one with his session or his password, each with the second factor he must
prove (his authenticator app's code in ``X-Second-Factor`` beside the
password; never with another token, so a token cannot outlive its last proof
of the person), for at most
``STAFF_TOKEN_MOST_DAYS`` days; it is shown once and only its SHA-512 is kept
(django-rest-knox). He lists his tokens (their first characters, made,
expiring) and revokes any of them; each one made and revoked is an event in
the audit trail. A token proves nobody once it has expired, once it is
revoked, or while its person is inactive; what it may do is always what its
person may do now.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from knox.models import AuthToken
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from infra.openapi import EVERY_REQUEST, JSON_BODY, STAFF_ONLY, answers, refusal
from infra.request_ids import request_id_of
from trail.services import Actor, audit_record

from .authentication import STAFF, ProvenSessionAuthentication, SecondFactorBasicAuthentication


class IsPerson(BasePermission):
    """A person of the casino, signed in (not a table)."""

    message = "Only a person of the casino has tokens."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(getattr(user, "is_authenticated", False) and not getattr(user, "is_table", False)
                    and user.is_staff)


def token_make(*, user, days: int, name: str, request_id: str = "") -> tuple[AuthToken, str]:
    """A new token of ``user``'s, working ``days`` days; the token and its text (shown once)."""
    with transaction.atomic():
        token, text = AuthToken.objects.create(user=user, expiry=timedelta(days=days))
        audit_record(actor=Actor.of_user(user), action="token.made", obj=user, object_repr=user.get_username(),
                     after={"token": token.token_key, "name": name, "expires": token.expiry},
                     request_id=request_id)
    return token, text


def token_revoke(*, user, key: str, request_id: str = "") -> None:
    """``user``'s token whose first characters are ``key``, revoked (NotFound if he has none)."""
    with transaction.atomic():
        # No row lock: the delete itself decides which of two revokes at once removed it.
        tokens = list(AuthToken.objects.filter(user=user, token_key=key))
        removed, _ = AuthToken.objects.filter(digest__in=[t.digest for t in tokens]).delete()
        if not removed:
            raise NotFound("You have no token that starts so.")
        audit_record(actor=Actor.of_user(user), action="token.revoked", obj=user, object_repr=user.get_username(),
                     before={"token": key, "expires": tokens[0].expiry}, request_id=request_id)


class TokenInSerializer(serializers.Serializer):
    days = serializers.IntegerField(min_value=1, help_text="How long it works: at most STAFF_TOKEN_MOST_DAYS.")
    name = serializers.CharField(max_length=100, allow_blank=True, default="",
                                 help_text="What it is for, as the audit log will say (e.g. 'cage import').")

    def validate_days(self, days: int) -> int:
        if days > settings.STAFF_TOKEN_MOST_DAYS:
            raise serializers.ValidationError(f"At most {settings.STAFF_TOKEN_MOST_DAYS} days.")
        return days


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(source="token_key", help_text="Its first characters: how it is named.")
    made = serializers.DateTimeField(source="created")
    expires = serializers.DateTimeField(source="expiry")


MADE = inline_serializer("TokenMade", {
    "token": serializers.CharField(help_text="The token, shown this once: send it as `Authorization: Token …`."),
    "key": serializers.CharField(help_text="Its first characters, as lists and the audit log name it."),
    "expires": serializers.DateTimeField(),
})
MAKE_REFUSED = {
    403: refusal("A table's key, a token (a token is made with a session or the password), or a session's "
                 "write without its CSRF token."),
}


class TokenListView(APIView):
    """``GET``: the caller's tokens; ``POST``: a new one, with his session or his password."""

    authentication_classes = STAFF
    permission_classes = [IsPerson]

    def get_authenticators(self):
        # A token is made with the person's own proof, never with another token.
        if getattr(getattr(self, "request", None), "method", None) == "POST":
            return [ProvenSessionAuthentication(), SecondFactorBasicAuthentication()]
        return super().get_authenticators()

    @extend_schema(responses=answers({200: TokenSerializer(many=True)}, STAFF_ONLY, EVERY_REQUEST))
    def get(self, request):
        tokens = AuthToken.objects.filter(user=request.user).order_by("-created")
        return Response(TokenSerializer(tokens, many=True).data)

    @extend_schema(request=TokenInSerializer,
                   responses=answers({201: MADE}, STAFF_ONLY, MAKE_REFUSED, JSON_BODY, EVERY_REQUEST))
    def post(self, request):
        given = TokenInSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        token, text = token_make(user=request.user, days=given.validated_data["days"],
                                 name=given.validated_data["name"], request_id=request_id_of(request))
        return Response({"token": text, "key": token.token_key, "expires": token.expiry},
                        status=status.HTTP_201_CREATED)


class TokenDetailView(APIView):
    """``DELETE``: one of the caller's tokens revoked."""

    authentication_classes = STAFF
    permission_classes = [IsPerson]

    @extend_schema(responses=answers({204: None, 404: refusal("The caller has no token that starts so.")},
                                     STAFF_ONLY, EVERY_REQUEST))
    def delete(self, request, key: str):
        token_revoke(user=request.user, key=key, request_id=request_id_of(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


urlpatterns = [
    path("tokens/", TokenListView.as_view(), name="token-list"),
    path("tokens/<str:key>/", TokenDetailView.as_view(), name="token-detail"),
]
