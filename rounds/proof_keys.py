"""Tables' keys held to the audit events that issued them.

A key lets whoever holds it post rounds as its table, and the application's
role must write keys (it issues them), so the database cannot refuse one
inserted past the service. Every key is issued, rotated or lent with an event
naming it (``rounds.services.tables``): a key no event names is named here,
as is one whose hash differs from the one its event recorded (recorded since
this check exists), or that works longer than the events said it would.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from django.utils.dateparse import parse_datetime

from trail.models import AuditEvent

from .models import Table, TableKey

MILLISECOND = timedelta(milliseconds=1)
ISSUED = ("table.key_issued", "table.key_rotated", "table.key_lent")


def table_keys_differences() -> Iterator[str]:
    events = list(
        AuditEvent.objects.filter(object_type=Table._meta.label_lower, action__in=ISSUED)
        .order_by("seq").values_list("seq", "object_id", "action", "after"))
    issued = {}  # key_id -> its event: (seq, table pk, action, after)
    rotations: dict[str, list[tuple[int, datetime]]] = {}  # table pk -> (seq, the older keys' expiry)
    for seq, table_pk, action, after in events:
        after = after or {}
        if "key_id" in after:
            issued[after["key_id"]] = (seq, table_pk, action, after)
        if action == "table.key_rotated" and after.get("old_keys_expire"):
            rotations.setdefault(table_pk, []).append((seq, parse_datetime(after["old_keys_expire"])))
    for key in TableKey.objects.select_related("table").order_by("pk").iterator(chunk_size=1000):
        who = f"table {key.table.code} key {key.key_id}"
        recorded = issued.get(key.key_id)
        if recorded is None or recorded[1] != str(key.table_id):
            yield f"{who}: the audit trail never recorded it issued to this table"
            continue
        seq, _, action, after = recorded
        if "key_hash" in after and after["key_hash"] != key.key_hash:
            yield f"{who}: its hash is not the one the audit trail recorded"
        # Each rotation after the key was issued ended it (at the latest) when it said.
        expiries = [expiry for later, expiry in rotations.get(str(key.table_id), ()) if later > seq]
        if action == "table.key_lent" and after.get("expires_at"):
            expiries.append(parse_datetime(after["expires_at"]))
        expected = min(expiries) if expiries else None
        # The trail keeps times to the millisecond (Django's JSON encoder), the row to the microsecond.
        if expected is not None and (key.expires_at is None or key.expires_at >= expected + MILLISECOND):
            yield f"{who}: works until {key.expires_at or 'never expiring'}, the audit trail said {expected}"
