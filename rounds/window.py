"""The window of gaming days the casino's books accept (ROUND_RECORD.md, ``dealt_outside_window``).

A table's clock decides which gaming day, month and partition a round lands
in, and which report counts it. A clock set to 2099, or to 2000, is a broken
table or a rogue one: its round is kept, judged and flagged
``dealt_outside_window``, but held apart from the books (``Round.held``: no
report counts it) until a supervisor places it (``rounds.services.placements``),
and it never makes a partition (``rounds.partitions``: only the schedule does).

The window runs from the first day of the earliest open month to
``ROUND_WINDOW_AHEAD`` (a day) after the round was received. The books open
at the month of ``ROUND_WINDOW_OPENS`` when the casino sets it, else at the
month before the database was created (its first migration), so a table
that was offline over a month's end, or a first import, still lands in
them; a month stays open until it is archived.
"""

from __future__ import annotations

import threading
import time
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Min

from infra.partitioning import month_of
from rounds.models import ArchivedMonth

# The earliest open month moves only when a month is archived, and a round of an archived
# month is refused whatever the window says, so each process reads it this seldom.
OPENS_FOR_SECONDS = 300.0


def books_open() -> date:
    """The first day of the first month the books hold."""
    if settings.ROUND_WINDOW_OPENS is not None:
        return month_of(settings.ROUND_WINDOW_OPENS)
    # Read through the ORM: a raw min() comes back from SQLite as text, not a datetime.
    created = MigrationRecorder(connection).migration_qs.aggregate(first=Min("applied"))["first"]
    created = (created or datetime.now()).date()
    return month_of(month_of(created) - timedelta(days=1))


def window_opens() -> date:
    """The first day of the earliest month still open: the books' first month, past every
    month archived from there on."""
    with _LOCK:
        at, opens, configured = _OPENS
        if opens is not None and configured == settings.ROUND_WINDOW_OPENS \
                and time.monotonic() - at < OPENS_FOR_SECONDS:
            return opens
    month = books_open()
    archived = set(ArchivedMonth.objects.filter(month__gte=month).values_list("month", flat=True))
    while month in archived:
        month = month_of(month + timedelta(days=31))
    with _LOCK:
        _OPENS[:] = [time.monotonic(), month, settings.ROUND_WINDOW_OPENS]
    return month


def outside_window(*, gaming_day: date, dealt_at: datetime, received_at: datetime, opens: date) -> str | None:
    """Why a round falls outside the window, or None when it is inside."""
    if gaming_day < opens:
        return (f"gaming day {gaming_day.isoformat()} is before {opens:%Y-%m}, the earliest month the books "
                f"hold open")
    closes = received_at + settings.ROUND_WINDOW_AHEAD
    if dealt_at > closes:
        return (f"dealt at {dealt_at.isoformat()}, after {closes.isoformat()}: more than "
                f"{_span(settings.ROUND_WINDOW_AHEAD)} after the service received it")
    return None


def _span(span: timedelta) -> str:
    hours = int(span.total_seconds()) // 3600
    return f"{hours // 24} day(s)" if hours % 24 == 0 else f"{hours} hour(s)"


_LOCK = threading.Lock()
_OPENS: list = [float("-inf"), None, None]
