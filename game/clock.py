"""A round dealt after it arrived: the table's clock is wrong, not the game.

A table stamps each round with its own clock (``dealt_at``); the service
knows when the round reached it. A round cannot be dealt after it was
received, so one stamped later than that, by more than the clock tolerance
(ROUND_RECORD.md: 10 minutes unless configured), is stored and flagged
``dealt_in_future``: its gaming day, and every report that counts it, rest
on a clock that cannot be trusted.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from . import findings as f
from .findings import Finding

DEFAULT_TOLERANCE = timedelta(minutes=10)


def clock_findings(dealt_at: datetime, received_at: datetime,
                   tolerance: timedelta = DEFAULT_TOLERANCE) -> list[Finding]:
    """``[dealt_in_future]`` when ``dealt_at`` is later than ``received_at`` by more than ``tolerance``."""
    ahead = dealt_at - received_at
    if ahead <= tolerance:
        return []
    return [Finding(
        f.DEALT_IN_FUTURE,
        detail=f"dealt at {dealt_at.isoformat()}, {_span(ahead)} after the service received it "
               f"at {received_at.isoformat()} (the clock tolerance is {_span(tolerance)})",
    )]


def _span(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "min"), (seconds, "s")]
    return " ".join(f"{n} {unit}" for n, unit in parts if n) or "0 s"
