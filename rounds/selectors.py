"""Reads of rounds and their configuration."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Prefetch, QuerySet

from progressive.models import MeterEvent, Pool, PoolVersion

from .models import Finding, Round, Seat, TableConfig, TableConfigVersion


def config_version_in_force(*, config: TableConfig, at: datetime) -> TableConfigVersion:
    """The version of ``config`` that was in force at ``at`` (the earliest, before any)."""
    versions = TableConfigVersion.objects.filter(config=config).select_related("config", "pool")
    version = versions.filter(effective_from__lte=at).order_by("-effective_from", "-version").first()
    if version is None:
        version = versions.order_by("effective_from", "version").first()
    if version is None:
        raise TableConfigVersion.DoesNotExist(f"configuration {config.name} has no version")
    return version


def pool_version_in_force(*, pool: Pool, at: datetime) -> PoolVersion:
    versions = PoolVersion.objects.filter(pool=pool).select_related("pool")
    version = versions.filter(effective_from__lte=at).order_by("-effective_from", "-version").first()
    if version is None:
        version = versions.order_by("effective_from", "version").first()
    if version is None:
        raise PoolVersion.DoesNotExist(f"pool {pool.code} has no version")
    return version


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
