"""Moments as people read them: in the casino's time zone, written one way, "2026-12-05 21:59".

One writer for pages, messages, trails and mails, so that a due time typed
as 21:59 reads 21:59 on the case, in its trail and in the mail, and a round
dealt at 01:33 reads the same day and minute in every list. The API and the
CSV exports write ISO 8601 with the offset instead, for machines; a body a
table sent is shown as it was sent.
"""

from __future__ import annotations

import re
from datetime import datetime

from django.utils import timezone

FORMAT = "%Y-%m-%d %H:%M"
# An ISO 8601 moment with its offset, as the audit trail's JSON keeps one.
ISO_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[+-]\d{2}:\d{2}|Z)")


def moment_shown(moment: datetime | None) -> str:
    """``moment`` in the casino's zone, ``2026-12-05 21:59``; "–" for none."""
    if moment is None:
        return "–"
    return timezone.localtime(moment).strftime(FORMAT)


def moments_shown_in(value):
    """``value`` (the trail's JSON) with every ISO moment written as ``moment_shown`` writes it."""
    if isinstance(value, str):
        return moment_shown(datetime.fromisoformat(value)) if ISO_MOMENT.fullmatch(value) else value
    if isinstance(value, list):
        return [moments_shown_in(item) for item in value]
    if isinstance(value, dict):
        return {key: moments_shown_in(item) for key, item in value.items()}
    return value
