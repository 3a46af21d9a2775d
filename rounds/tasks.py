"""Celery tasks of the rounds app. Each only calls a service."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from rounds import partitions


@shared_task(
    name="rounds.partitions_ahead", acks_late=True, autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2, retry_backoff_max=300, max_retries=6,
)
def partitions_ahead() -> dict:
    """Make the partitions of the coming gaming days (django-celery-beat runs it daily)."""
    made = partitions.partitions_ahead()
    return {
        "made": [day.isoformat() for day in made.made],
        "refused": [day.isoformat() for day in made.refused],
        "days_in_default": [day.isoformat() for day in partitions.days_in_default()],
    }
