"""Which gaming day a moment belongs to: the casino's day runs cut-off to cut-off."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.management.base import CommandError


def _clock(time_zone: str | None, cutoff_hour: int | None) -> tuple[ZoneInfo, int]:
    """The clock given (a report's, which keeps the clock it was made with), else the casino's settings."""
    return (ZoneInfo(time_zone if time_zone is not None else settings.GAMING_DAY_TIME_ZONE),
            cutoff_hour if cutoff_hour is not None else settings.GAMING_DAY_CUTOFF_HOUR)


def gaming_day_of(moment: datetime, *, time_zone: str | None = None, cutoff_hour: int | None = None) -> date:
    """The gaming day ``moment`` belongs to: by the casino's clock, or by the one given."""
    zone, cutoff = _clock(time_zone, cutoff_hour)
    return (moment.astimezone(zone) - timedelta(hours=cutoff)).date()


class ClockError(ValueError):
    """A shift list or cut-off the clock cannot work with."""


def gaming_day_window(day: date, *, time_zone: str | None = None,
                      cutoff_hour: int | None = None) -> tuple[datetime, datetime]:
    """The UTC half-open interval ``[start, end)`` of gaming day ``day``: by the casino's clock, or by
    the one given."""
    zone, cutoff = _clock(time_zone, cutoff_hour)
    if not 0 <= cutoff <= 23:
        raise ClockError("the cut-off hour is 0 to 23")
    start = datetime.combine(day, time(cutoff), tzinfo=zone)
    end = datetime.combine(day + timedelta(days=1), time(cutoff), tzinfo=zone)
    return start.astimezone(UTC), end.astimezone(UTC)


def gaming_day_argument(text: str) -> date:
    """A command's day argument, or a ``CommandError`` that says what a day looks like."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"{text!r} is not a date (YYYY-MM-DD)") from None
