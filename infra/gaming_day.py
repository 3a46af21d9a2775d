"""Which gaming day a moment belongs to: the casino's day runs cut-off to cut-off."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings


def gaming_day_of(moment: datetime, *, time_zone: str | None = None, cutoff_hour: int | None = None) -> date:
    """The gaming day ``moment`` belongs to: by the casino's clock (its settings), or by the one
    given (a report's, which keeps the clock it was made with)."""
    zone = time_zone if time_zone is not None else settings.GAMING_DAY_TIME_ZONE
    cutoff = cutoff_hour if cutoff_hour is not None else settings.GAMING_DAY_CUTOFF_HOUR
    local = moment.astimezone(ZoneInfo(zone))
    return (local - timedelta(hours=cutoff)).date()



class ClockError(ValueError):
    """A shift list or cut-off the clock cannot work with."""


def gaming_day_window(day: date, *, time_zone: str | None = None,
                      cutoff_hour: int | None = None) -> tuple[datetime, datetime]:
    """The UTC half-open interval ``[start, end)`` of gaming day ``day``: by the casino's clock (its
    settings), or by the one given (a report's, which keeps the clock it was made with)."""
    zone = ZoneInfo(time_zone if time_zone is not None else settings.GAMING_DAY_TIME_ZONE)
    cutoff = cutoff_hour if cutoff_hour is not None else settings.GAMING_DAY_CUTOFF_HOUR
    if not 0 <= cutoff <= 23:
        raise ClockError("the cut-off hour is 0 to 23")
    start = datetime.combine(day, time(cutoff), tzinfo=zone)
    end = datetime.combine(day + timedelta(days=1), time(cutoff), tzinfo=zone)
    return start.astimezone(UTC), end.astimezone(UTC)
