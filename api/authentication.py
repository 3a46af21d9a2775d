"""Tables authenticate with ``Authorization: Bearer ta_<key id>_<secret>``; people with a session,
their password (Basic) or a token of their own (``Token <token>``). The lists each view asks
from are declared here, once."""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.db.models.signals import post_delete, post_save
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from knox.auth import TokenAuthentication
from rest_framework import authentication, exceptions, permissions
from rest_framework.authentication import BasicAuthentication, SessionAuthentication

from infra import sql
from infra.client_address import client_address
from infra.second_factor import code_matched, must_prove, proven
from rounds.models import Table, TableConfig, TableKey
from rounds.services import key_hash, split_key

from .throttling import table_key_refused

_TOUCH_EVERY = timedelta(minutes=1)
# Issued ids are hex; anything else (a NUL byte, 10 kB of junk) never reaches the database.
_KEY_ID = re.compile(r"^[0-9a-f]{1,16}$")


@dataclass(frozen=True, slots=True)
class TablePrincipal:
    """``request.user`` for a table: authenticated, never a Django user."""

    table: Table
    is_authenticated: bool = True
    is_table: bool = True
    is_staff: bool = False
    is_superuser: bool = False
    pk: None = None

    def has_perm(self, perm: str, obj=None) -> bool:
        return False

    def get_username(self) -> str:
        return f"table:{self.table.code}"

    def __str__(self) -> str:
        return self.get_username()


class TableKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, key = header.partition(" ")
        if scheme != self.keyword:
            return None
        key = key.strip()
        now = timezone.now()
        token = hashlib.sha256(key.encode()).digest()
        stored = _PROVEN.get(token, now)
        if stored is None:
            parts = split_key(key)
            if parts is None or not _KEY_ID.fullmatch(parts[0]):
                raise table_key_refused(address=client_address(request), outcome="malformed",
                                        detail="Malformed table key.")
            key_id, secret = parts
            stored = key_in_force(key_id=key_id, now=now)
            # Hash and compare even for an unknown id, so timing tells nothing.
            expected = stored.key_hash if stored else "0" * 64
            if not hmac.compare_digest(key_hash(secret), expected) or stored is None:
                raise table_key_refused(address=client_address(request), outcome="invalid",
                                        detail="Invalid table key.")
            _PROVEN.put(token, stored)
        if stored.last_used_at is None or now - stored.last_used_at > _TOUCH_EVERY:
            TableKey.objects.filter(pk=stored.pk).update(last_used_at=now)
            stored.last_used_at = now
        return TablePrincipal(stored.table), stored

    def authenticate_header(self, request) -> str:
        return self.keyword


class _ProvenKeys:
    """Keys this process has proven lately, by a digest of the whole presented key.

    A table posts every few seconds with the same key, and finding and proving
    it (a query, the key, its table and configuration built as models) was the
    largest cost of a post after the round itself. A key is remembered only
    once it has been proven against its stored hash, and only for
    ``TABLE_KEY_CACHE_SECONDS``: a key revoked, expired early or rotated
    without grace in another process, or a table deactivated there, stops
    working within that time. In this process every change to a key or a
    table forgets them all at once (``_forget``), and a key's own expiry time
    is checked on every use, so a key ends exactly when it is set to.
    """

    MOST = 10_000  # a bound on memory: a casino has a few hundred keys

    def __init__(self):
        self._known: dict[bytes, tuple[float, TableKey]] = {}

    def get(self, token: bytes, now) -> TableKey | None:
        known = self._known.get(token)
        if known is None:
            return None
        until, stored = known
        if time.monotonic() >= until or (stored.expires_at is not None and stored.expires_at <= now):
            self._known.pop(token, None)
            return None
        return stored

    def put(self, token: bytes, stored: TableKey) -> None:
        seconds = settings.TABLE_KEY_CACHE_SECONDS
        if seconds <= 0:
            return
        if len(self._known) >= self.MOST:
            self._known = {}
        self._known[token] = (time.monotonic() + seconds, stored)

    def clear(self) -> None:
        self._known = {}


_PROVEN = _ProvenKeys()


def _forget(sender, **kwargs) -> None:
    _PROVEN.clear()


for _model in (TableKey, Table, TableConfig):
    post_save.connect(_forget, sender=_model, dispatch_uid=f"table-key-cache-{_model.__name__}")
    post_delete.connect(_forget, sender=_model, dispatch_uid=f"table-key-cache-delete-{_model.__name__}")


def key_in_force(*, key_id: str, now) -> TableKey | None:
    """The key with ``key_id``, its table and the table's configuration, if the key
    works at ``now``: its table active, the key not expired."""
    if connection.vendor != "postgresql":
        return (
            TableKey.objects.select_related("table__config")
            .filter(key_id=key_id, table__active=True)
            .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
            .first()
        )
    # Every request a table makes starts here: a prepared statement, not a
    # queryset compiled and planned again each time (docs/SCALING.md).
    [rows] = sql.run([sql.raw(_KEY_SQL, [key_id, now], returns_rows=True, prepare=True)])
    if not rows:
        return None
    row, alias = rows[0], connection.alias
    key_end = len(_KEY_FIELDS)
    table_end = key_end + len(_TABLE_FIELDS)
    key = TableKey.from_db(alias, _KEY_FIELDS, row[:key_end])
    key.table = Table.from_db(alias, _TABLE_FIELDS, row[key_end:table_end])
    key.table.config = TableConfig.from_db(alias, _CONFIG_FIELDS, row[table_end:])
    return key


def _fields(model) -> list[str]:
    return [f.attname for f in model._meta.concrete_fields]


def _columns(model, alias: str) -> str:
    return ", ".join(f'{alias}."{f.column}"' for f in model._meta.concrete_fields)


_KEY_FIELDS, _TABLE_FIELDS, _CONFIG_FIELDS = _fields(TableKey), _fields(Table), _fields(TableConfig)
_KEY_SQL = (
    f"SELECT {_columns(TableKey, 'k')}, {_columns(Table, 't')}, {_columns(TableConfig, 'c')} "
    f'FROM "{TableKey._meta.db_table}" k '
    f'JOIN "{Table._meta.db_table}" t ON t."id" = k."table_id" '
    f'JOIN "{TableConfig._meta.db_table}" c ON c."id" = t."config_id" '
    'WHERE k."key_id" = %s AND t."active" AND (k."expires_at" IS NULL OR k."expires_at" > %s) '
    "LIMIT 1"
)


class IsTable(permissions.BasePermission):
    """Only a table's own key may post rounds."""

    message = "Only a table's own key may post rounds."

    def has_permission(self, request, view) -> bool:
        return bool(getattr(request.user, "is_table", False))

    def has_object_permission(self, request, view, obj) -> bool:
        return self.has_permission(request, view)


class TableKeyScheme(OpenApiAuthenticationExtension):
    """Tells the OpenAPI schema how a table authenticates."""

    target_class = TableKeyAuthentication
    name = "tableKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "ta_<key id>_<secret>",
            "description": "A table's own key, as printed by `manage.py register_table`.",
        }


class StaffTokenAuthentication(TokenAuthentication):
    """A person's script with ``Authorization: Token <token>``: a token he made for himself,
    expiring, revocable and audited (``api.tokens``). Only its SHA-512 is kept, so a call costs a
    hash, not a password's key stretching; a token of a person made inactive proves nobody."""


class StaffTokenScheme(OpenApiAuthenticationExtension):
    """Tells the OpenAPI schema how a person's script authenticates."""

    target_class = StaffTokenAuthentication
    name = "staffToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey", "in": "header", "name": "Authorization",
            "description": "`Token <token>`: a person's own token, made with POST /api/v1/tokens/ "
                           "(expiring, revocable, each made and revoked in the audit log).",
        }


class ProvenSessionAuthentication(SessionAuthentication):
    """The admin's session, once its person has proven the second factor he must prove
    (``infra.second_factor``): a password alone opens the API no more than the admin."""

    def authenticate(self, request):
        found = super().authenticate(request)
        if found is not None and not proven(request._request):
            raise exceptions.AuthenticationFailed(
                "This session has not proven its second factor: prove it in the admin (/admin/second-factor/).")
        return found


class SecondFactorBasicAuthentication(BasicAuthentication):
    """A password (Basic); from a person who must prove a second factor, with his authenticator
    app's code in ``X-Second-Factor`` as well. A code works once, so such a person's scripts make
    a token that way (``api.tokens``) and call with it."""

    def authenticate_credentials(self, userid, password, request=None):
        user, auth = super().authenticate_credentials(userid, password, request)
        if must_prove(user):
            given = (request.META.get(SECOND_FACTOR_HEADER, "") if request is not None else "").strip()
            if code_matched(user, given) is None:
                raise exceptions.AuthenticationFailed(
                    "Your role or your own choice asks a second factor: send your authenticator app's code in "
                    "X-Second-Factor with your password (to make a token, POST /api/v1/tokens/), or call with a "
                    "token of yours.")
        return user, auth


SECOND_FACTOR_HEADER = "HTTP_X_SECOND_FACTOR"


class ProvenSessionScheme(OpenApiAuthenticationExtension):
    target_class = ProvenSessionAuthentication
    name = "cookieAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "cookie", "name": settings.SESSION_COOKIE_NAME,
                "description": "The admin's session, once it has proven the second factor its person must "
                               "prove (a supervisor's, an admin's, or anyone's who set one up)."}


class SecondFactorBasicScheme(OpenApiAuthenticationExtension):
    target_class = SecondFactorBasicAuthentication
    name = "basicAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "basic",
                "description": "A person's password; one who must prove a second factor sends his "
                               "authenticator app's code in `X-Second-Factor` too (a code works once: "
                               "his scripts make a token so and call with it)."}

# Who may call a staff operation, in the order each view asks: the first answers a caller nobody
# vouches for (a table key's challenge, or none for a session).
STAFF = [ProvenSessionAuthentication, SecondFactorBasicAuthentication, StaffTokenAuthentication]
EVERYONE = [TableKeyAuthentication, ProvenSessionAuthentication, SecondFactorBasicAuthentication,
            StaffTokenAuthentication]
READERS_SESSION_FIRST = [ProvenSessionAuthentication, SecondFactorBasicAuthentication, StaffTokenAuthentication,
                         TableKeyAuthentication]
