"""A gaming day's game protection, in this process: every table scored, then the day's suspicions.

The nightly job does the same with the tables fanned out to workers
(``audit.tasks.protect_day``); ``manage.py reconcile`` calls ``day_protect``
before it reconciles, so a day's report and its game-protection findings
come together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from audit.models import SeatScore
from game.protection.codes import ProtectionCode
from rounds.models import Round

from .raising import day_findings_raise
from .scores import table_day_score

PAY_TABLE = ProtectionCode.PAY_TABLE_MISMATCH.value


def tables_of_day(*, day: date) -> list[int]:
    """The tables that dealt rounds on ``day``, by primary key."""
    return sorted(set(Round.objects.filter(gaming_day=day).values_list("table_id", flat=True).distinct()))


@dataclass(frozen=True, slots=True)
class DayProtection:
    day: date
    tables: int
    rounds: int
    seats_scored: int
    raised: dict[str, int]  # new findings by code


def day_protect(*, day: date, progress: Callable[[int, int, str], None] | None = None) -> DayProtection:
    """Score every table of the day not scored yet and raise the day's findings; idempotent."""
    tables = tables_of_day(day=day)
    rounds = seats = 0
    raised: dict[str, int] = {}
    for i, table_id in enumerate(tables, start=1):
        part = table_day_score(table_id=table_id, day=day)
        rounds += part.rounds
        seats += part.seats_scored
        if part.pay_table_findings:
            raised[PAY_TABLE] = raised.get(PAY_TABLE, 0) + part.pay_table_findings
        if progress is not None:
            progress(i, len(tables) + 1, f"scored table {table_id} of {day}")
    for code, count in day_findings_raise(day=day).items():
        raised[code] = raised.get(code, 0) + count
    if progress is not None:
        progress(len(tables) + 1, len(tables) + 1, f"game protection of {day}")
    return DayProtection(day, len(tables), rounds, seats, raised)


def day_rescore(*, day: date, progress: Callable[[int, int, str], None] | None = None) -> tuple[int, DayProtection]:
    """Score again the day's seats scored before they carried a dealer card's verdicts (audit 0026),
    then raise the day's findings as ``day_protect`` does: how many seats were scored again, and the
    day's protection. A seat that has verdicts is kept; rerunning it scores nothing twice."""
    unread = [
        pk for pk, decisions in SeatScore.objects.filter(gaming_day=day, seen={})
        .values_list("pk", "decisions").iterator(chunk_size=2000)
        if not any("seen" in decision for decision in decisions)
    ]
    for i in range(0, len(unread), 2000):
        SeatScore.objects.filter(pk__in=unread[i:i + 2000]).delete()
    return len(unread), day_protect(day=day, progress=progress)
