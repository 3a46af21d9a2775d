"""Which gaming day a moment belongs to: the casino's day runs cut-off to cut-off."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings


def gaming_day_of(moment: datetime, *, time_zone: str | None = None, cutoff_hour: int | None = None) -> date:
    """The gaming day ``moment`` belongs to: by the casino's clock (its settings), or by the one
    given (a report's, which keeps the clock it was made with)."""
    zone = time_zone if time_zone is not None else settings.GAMING_DAY_TIME_ZONE
    cutoff = cutoff_hour if cutoff_hour is not None else settings.GAMING_DAY_CUTOFF_HOUR
    local = moment.astimezone(ZoneInfo(zone))
    return (local - timedelta(hours=cutoff)).date()


def gaming_day_end(day: date) -> datetime:
    """The moment the gaming day ``day`` ended (the next cut-off), by the casino's clock."""
    return datetime(day.year, day.month, day.day, settings.GAMING_DAY_CUTOFF_HOUR,
                    tzinfo=ZoneInfo(settings.GAMING_DAY_TIME_ZONE)) + timedelta(days=1)
