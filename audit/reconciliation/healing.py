"""What the healing jobs read: the days to make current, and the reports to move on.

Every ended gaming day of the books must get a current report, whatever fails
in the night (``docs/RELIABILITY.md``, "The nightly report heals itself"):

- ``days_to_heal``: the days without a current report of their own (never
  made: a night the beat or the broker missed) or whose report is stale (late
  rounds). The hourly ``audit.reconcile_missing`` starts them.
- ``reports_to_move``: the running reports nobody moves on (a part whose
  holder's lease ran out, parts or a merge whose messages a dead worker or a
  lost chord took with it), and the failed reports whose retry time came.
  ``audit.reconcile_watch`` sends their tasks again every minute.

Reads only; cheap when all is well (one read of the reports running or failed).
Sending a task twice is harmless: a part is claimed before it is computed and a
merge takes its range's lock, so the second finds the work done or held.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db.models import BooleanField, ExpressionWrapper, F, Q
from django.db.models.functions import Now

from audit.models import ReconciliationPart, ReconciliationReport
from infra import locks

from . import selectors
from .config import day_to_reconcile
from .lease import lease_expired
from .staleness import days_stale

Status = ReconciliationReport.Status
PartStatus = ReconciliationPart.Status


def last_day_to_heal(*, now: datetime) -> date:
    """The last gaming day that ended at least ``RECONCILIATION_SETTLE_SECONDS`` ago."""
    return day_to_reconcile(now=now - timedelta(seconds=settings.RECONCILIATION_SETTLE_SECONDS))


def days_to_heal(*, books_open: date, now: datetime) -> list[date]:
    """The settled days without a current report of their own (oldest first), then those whose
    report is stale (newest first).

    Stale days come newest first because a table makes them: one that posts rounds backdated
    into old days, a few an hour, would otherwise keep the healer on those days for good while
    yesterday's late rounds waited behind them. A day whose report is running, or failed and due
    to be tried again, is not here: ``reports_to_move`` has it.
    """
    last = last_day_to_heal(now=now)
    missing = set(selectors.days_without_report(books_open=books_open, last_ended=last))
    in_hand = set(ReconciliationReport.objects.filter(
        Q(status=Status.RUNNING) | Q(status=Status.FAILED, retry_at__isnull=False), day_from=F("day_to"),
        day_from__gte=books_open, day_to__lte=last,
    ).values_list("day_from", flat=True))
    without = sorted(missing - in_hand)
    stale = sorted(set(days_stale(books_open=books_open, last_ended=last)) - set(without), reverse=True)
    return without + stale


@dataclass(frozen=True)
class Move:
    """What to send again for one report."""

    report_id: int
    parts: tuple[int, ...] = ()  # parts whose holder died, or that nobody picked up
    finish: bool = False  # every part is in and nobody merges
    retry: tuple[date, date] | None = None  # a failed report whose time came: its range started again


def reports_to_move() -> list[Move]:
    """The reports the workers dropped, and what to send for each."""
    moves = [Move(report_id=pk, retry=(day_from, day_to)) for pk, day_from, day_to in (
        ReconciliationReport.objects.filter(status=Status.FAILED, retry_at__lte=Now())
        .values_list("pk", "day_from", "day_to").order_by("day_from"))]
    expired = lease_expired()
    running = {
        pk: lately for pk, lately in ReconciliationReport.objects.filter(status=Status.RUNNING).annotate(
            lately=_when(Q(driven_at__gte=expired) | Q(created_at__gte=expired))).values_list("pk", "lately")
    }
    if not running:
        return moves
    # A report whose row is locked is being merged (or opened) right now: it moves on.
    free = locks.rows_free(ReconciliationReport.objects.filter(pk__in=running, status=Status.RUNNING))
    parts: dict[int, list[tuple[int, str, bool, bool]]] = {pk: [] for pk in running}
    rows = ReconciliationPart.objects.filter(report_id__in=running).annotate(
        fresh=_when(Q(heartbeat_at__gte=expired)), done_lately=_when(Q(finished_at__gte=expired)),
    ).values_list("report_id", "pk", "status", "fresh", "done_lately")
    for report_id, pk, status, fresh, done_lately in rows:
        parts[report_id].append((pk, status, bool(fresh), bool(done_lately)))
    # While any part anywhere is computed or has just been, the queue is moving: parts not
    # yet picked up wait their turn rather than being sent again behind themselves.
    busy = len(free) < len(running) or any(
        (status == PartStatus.RUNNING and fresh) or done_lately
        for rows in parts.values() for _, status, fresh, done_lately in rows)
    for report_id, report_parts in parts.items():
        if report_id not in free:
            continue
        dead = [pk for pk, status, fresh, _ in report_parts if status == PartStatus.RUNNING and not fresh]
        waiting = [pk for pk, status, _, _ in report_parts if status == PartStatus.PENDING]
        moving = running[report_id] or any(
            (status == PartStatus.RUNNING and fresh) or done_lately for _, status, fresh, done_lately in report_parts)
        again = dead + (waiting if not busy and not moving else [])
        finish = not moving and all(status == PartStatus.COMPLETE for _, status, _, _ in report_parts)
        if again or finish:
            moves.append(Move(report_id=report_id, parts=tuple(sorted(again)), finish=finish))
    return moves


def _when(condition: Q) -> ExpressionWrapper:
    return ExpressionWrapper(condition, output_field=BooleanField())
