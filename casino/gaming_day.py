"""Which gaming day a moment belongs to: the casino's day runs cut-off to cut-off."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings


def gaming_day_of(moment: datetime) -> date:
    local = moment.astimezone(ZoneInfo(settings.GAMING_DAY_TIME_ZONE))
    return (local - timedelta(hours=settings.GAMING_DAY_CUTOFF_HOUR)).date()
