"""The audit log's CSV export: its columns, and its rows from any queryset (the admin's list as
filtered) or the events of a period's calendar days (the API's)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, time, timedelta

from django.db import DEFAULT_DB_ALIAS
from django.db.models import QuerySet
from django.utils import timezone

from infra.exports import Column, Export, Period, json_text, moment, plain, rows_of

from .models import AuditEvent

AUDIT_COLUMNS: list[Column] = [
    Column("seq", "seq"), Column("at", "at", moment),
    *plain("actor_kind", "actor_id", "actor_name", "action", "object_type", "object_id", "object_repr"),
    Column("before", "before", json_text), Column("after", "after", json_text),
    *plain("request_id", "prev_hash", "hash"),
    # The database's account of the writer (trail migration 0002): outside the hash.
    *plain("origin", "origin_address"),
]


def audit_rows_of(events: QuerySet[AuditEvent]) -> Iterator[list]:
    return rows_of(AUDIT_COLUMNS, events)


def audit_rows(period: Period, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[list]:
    """Audit events whose moment falls in the period's calendar days, casino time."""
    # Bounds rather than ``at__date``: a moment's date is computed per row, which no index serves.
    zone = timezone.get_current_timezone()
    start = datetime.combine(period.first_day, time(), tzinfo=zone)
    end = datetime.combine(period.last_day + timedelta(days=1), time(), tzinfo=zone)
    events = AuditEvent.objects.using(using).filter(at__gte=start, at__lt=end)
    return audit_rows_of(events.order_by("seq"))


AUDIT_LOG = Export("audit-log", AuditEvent, "trail.view_auditevent", audit_rows_of)
