"""Tables and their API keys."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from infra import locks
from infra.validation import FieldErrors
from rounds.models import Table, TableConfig, TableKey
from rounds.video import video_link_errors
from trail.services import Actor, audit_record

KEY_PREFIX = "ta"


@dataclass(frozen=True, slots=True)
class IssuedKey:
    table: Table
    key: str  # shown once; only its hash is stored


def key_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def split_key(key: str) -> tuple[str, str] | None:
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def table_register(
    *, code: str, config_name: str, actor: Actor, grace: timedelta = timedelta(0)
) -> IssuedKey:
    """Create the table (or move it to ``config_name``) and issue it a new key.

    Earlier keys stop working after ``grace``, so a table can be switched to
    its new key without a moment offline.
    """
    config = TableConfig.objects.get(name=config_name)
    with transaction.atomic():
        table, created = locks.rows_locked(Table.objects.all(), no_key=True).get_or_create(
            code=code, defaults={"config": config}
        )
        before = None if created else {"config": table.config.name}
        if table.config_id != config.pk:
            table.config = config
            table.save(update_fields=["config"])
        expiry = timezone.now() + grace
        TableKey.objects.filter(table=table).filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=expiry)
        ).update(expires_at=expiry)
        key_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        TableKey.objects.create(table=table, key_id=key_id, key_hash=key_hash(secret))
        audit_record(
            actor=actor, action="table.key_issued" if created else "table.key_rotated", obj=table,
            before=before, after={"config": config.name, "key_id": key_id, "key_hash": key_hash(secret),
                                  "old_keys_expire": expiry},
        )
    return IssuedKey(table, f"{KEY_PREFIX}_{key_id}_{secret}")



def table_key_lend(*, table: Table, actor: Actor, lifetime: timedelta) -> IssuedKey:
    """One more key for ``table``, working for ``lifetime`` only, beside the keys it has, which keep
    working: for a tool that posts as the table for a while (the demo's loader) without taking the
    table's own key from it."""
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    expires_at = timezone.now() + lifetime
    with transaction.atomic():
        TableKey.objects.create(table=table, key_id=key_id, key_hash=key_hash(secret), expires_at=expires_at)
        audit_record(actor=actor, action="table.key_lent", obj=table,
                     after={"key_id": key_id, "key_hash": key_hash(secret), "expires_at": expires_at})
    return IssuedKey(table, f"{KEY_PREFIX}_{key_id}_{secret}")


def table_video_link_set(*, table_id: int, template: str, user, request_id: str = "") -> Table:
    """The table's link to the casino's video (``rounds.video``): checked, kept, audited."""
    template = (template or "").strip()
    if errors := video_link_errors(template):
        raise FieldErrors({"video_link": errors})
    with transaction.atomic():
        table = locks.rows_locked(Table.objects.filter(pk=table_id), [table_id], no_key=True).get()
        before = table.video_link
        if before == template:
            raise FieldErrors("the table's video link is so already", field="video_link")
        table.video_link = template
        table.save(update_fields=["video_link"])
        audit_record(actor=Actor.of_user(user), action="table.video_link", obj=table,
                     before={"video_link": before}, after={"video_link": template}, request_id=request_id)
    return table
