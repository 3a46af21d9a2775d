"""Reads of rounds and their configuration."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Prefetch, QuerySet

from progressive.models import MeterEvent
from progressive.selectors import pool_version_in_force  # noqa: F401 (read from here too)

from .engine.versions import in_force
from .models import Finding, Round, Seat, TableConfig, TableConfigVersion


def config_version_in_force(*, config: TableConfig, at: datetime) -> TableConfigVersion:
    """The version of ``config`` that was in force at ``at`` (``rounds.engine.versions.in_force``)."""
    versions = TableConfigVersion.objects.filter(config=config).select_related("config", "pool")
    return _in_force(versions, at, f"configuration {config.name} has no version")


def _in_force(versions: QuerySet, at: datetime, missing: str):
    # A configuration has a handful of versions: all of them, and the one rule.
    rows = list(versions)
    if not rows:
        raise versions.model.DoesNotExist(missing)
    return in_force(((v, v.effective_from, v.version) for v in rows), at)


def round_list() -> QuerySet[Round]:
    """Rounds with everything their API representation needs, in a fixed number of queries."""
    return Round.objects.select_related(
        "table", "config_version__config", "pool_version__pool"
    ).prefetch_related(
        Prefetch("seats", queryset=Seat.objects.order_by("seat")),
        Prefetch("findings", queryset=Finding.objects.order_by("id")),
        Prefetch("meter_events", queryset=MeterEvent.objects.order_by("seq")),
    )


def round_detail(*, round_pk: int) -> Round:
    return round_list().get(pk=round_pk)


def finding_list() -> QuerySet[Finding]:
    return Finding.objects.select_related("round__table").order_by("-created_at", "-id")
