"""Celery tasks of the audit app. Each only calls a service; the work is in the services.

A report is opened (or resumed) and each of its parts sent as a task of its
own; the part that completes the set sends the merge. No chord joins them:
a chord's counter lives in the result backend and is lost with a database
restart, which left reports running for ever. Every task acknowledges its
message only after it ran (``acks_late``) and gives it back when its worker
dies (``reject_on_worker_lost``); what a dead worker held is also sent again
by the watch (``audit.reconcile_watch``, every minute) once the part's lease
runs out, on any broker. A part is claimed before it is computed, so two runs
compute it once. A database error is retried with backoff for
``RECONCILIATION_RETRY_SECONDS`` (time, not a count), then the report fails
with its reason, and the watch tries it again later.
"""

from __future__ import annotations

import logging
import random
import time
from datetime import date

from celery import chord, group, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from audit.reconciliation import healing, services
from rounds.notices import KINDS, PROTECTION_FINDINGS

logger = logging.getLogger("audit.reconciliation")

RELIABLE = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 6,
}
DATABASE_ERRORS = RELIABLE["autoretry_for"]
# The report's own tasks count their retries in time (``_again``), never in a number.
REPORT_TASK = {"acks_late": True, "reject_on_worker_lost": True, "max_retries": None}
BACKOFF_MOST_SECONDS = 60


@shared_task(name="audit.reconcile_day", **RELIABLE)
def reconcile_day(day: str | None = None, day_to: str | None = None, requested_by: str = "beat") -> int:
    """Reconcile ``day`` (ISO date; default: the gaming day that ended last), or a range."""
    day_from = date.fromisoformat(day) if day else services.day_to_reconcile()
    report = services.report_start(
        day_from=day_from, day_to=date.fromisoformat(day_to) if day_to else None,
        requested_by=requested_by,
    )
    _drive(report.pk, services.report_parts_to_compute(report=report), finish=False)
    return report.pk


def _drive(report_id: int, parts, *, finish: bool) -> None:
    """Send the report's parts (or, with none left, its merge), and say when they were sent."""
    from audit.models import ReconciliationReport

    ReconciliationReport.objects.filter(pk=report_id).update(driven_at=timezone.now())
    if parts:
        group(reconcile_part.si(part_id, report_id) for part_id in parts).apply_async()
    if finish or not parts:
        reconcile_finish.delay(report_id)


# The most days one run of the healing job starts: a long gap (a new database whose books open
# the month before, weeks of a stopped beat) is made good a few days an hour, never all at once.
HEAL_MOST_DAYS = 7


@shared_task(name="audit.reconcile_missing", **RELIABLE)
def reconcile_missing(most: int = HEAL_MOST_DAYS) -> list[str]:
    """Start the report of each settled gaming day without a current report of its own (a night the
    beat or the broker missed; oldest first) or whose report is stale (late rounds; newest first),
    ``most`` a run.

    Idempotent and cheap when nothing is missing (two reads), so the schedule runs it every hour.
    """
    from rounds.window import window_opens

    days = healing.days_to_heal(books_open=window_opens(), now=timezone.now())[:most]
    for day in days:
        logger.warning("gaming day %s has no current report: starting it", day)
        reconcile_day.delay(day.isoformat(), requested_by="beat: a day without its current report")
    return [day.isoformat() for day in days]


@shared_task(name="audit.reconcile_watch", **RELIABLE)
def reconcile_watch() -> list[str]:
    """Move on every report the workers dropped: parts whose holder died, parts and merges whose
    messages were lost, failed reports whose retry time came. One read when all is well."""
    said = []
    for move in healing.reports_to_move():
        if move.retry is not None:
            if not services.report_retry_claim(report_id=move.report_id):
                continue  # another run of the watch sent it already
            day_from, day_to = move.retry
            logger.warning("reconciliation report %s failed before: trying it again", move.report_id)
            reconcile_day.delay(day_from.isoformat(), day_to.isoformat(),
                                requested_by="beat: a failed report tried again")
            said.append(f"{move.report_id}: retried")
            continue
        logger.warning("reconciliation report %s was dropped: sending %d part(s)%s again", move.report_id,
                       len(move.parts), " and its merge" if move.finish else "")
        _drive(move.report_id, move.parts, finish=move.finish)
        said.append(f"{move.report_id}: {len(move.parts)} part(s){' + merge' if move.finish else ''}")
    return said


def _again(task, error: Exception, report_to_fail: int | None, failing_since: float | None, **kwargs):
    """Retry ``task`` after a database error, with backoff, until ``RECONCILIATION_RETRY_SECONDS``
    since the first; then fail the report with the reason (the watch tries it again later)."""
    since = failing_since or time.time()
    if time.time() - since >= settings.RECONCILIATION_RETRY_SECONDS:
        _fail(report_to_fail, f"gave up after {settings.RECONCILIATION_RETRY_SECONDS} s of database errors: "
                         f"{type(error).__name__}: {error}")
        raise error
    countdown = min(2 ** task.request.retries, BACKOFF_MOST_SECONDS) * (0.5 + random.random() / 2)
    raise task.retry(exc=error, countdown=countdown, args=(), kwargs=kwargs | {"failing_since": since}) from error


def _fail(report_id: int | None, reason: str) -> None:
    if report_id is None:
        return
    try:
        services.report_fail(report_id=report_id, error=reason)
    except DATABASE_ERRORS:
        # The database is away: the report stays running, and the watch moves it on
        # once its parts' leases have run out.
        logger.exception("reconciliation report %s could not be marked failed", report_id)


@shared_task(name="audit.reconcile_part", bind=True, **REPORT_TASK)
def reconcile_part(self, part_id: int, report_id: int | None = None, failing_since: float | None = None) -> int:
    try:
        report_id = report_id or services.report_of_part(part_id=part_id)
        part = services.report_part_compute(part_id=part_id)
    except DATABASE_ERRORS as error:
        _again(self, error, report_id, failing_since, part_id=part_id, report_id=report_id)
    except Exception as error:
        _fail(report_id, f"part {part_id}: {type(error).__name__}: {error}")
        raise
    # The part that completes the set sends the merge; one held by another run
    # is that run's to finish (or the watch's, if that run dies).
    if part.status == part.Status.COMPLETE and services.report_parts_all_in(report_id=part.report_id):
        reconcile_finish.delay(part.report_id)
    return part.pk


@shared_task(name="audit.reconcile_finish", bind=True, **REPORT_TASK)
def reconcile_finish(self, report_id: int, failing_since: float | None = None) -> str:
    try:
        return services.report_finish(report_id=report_id).status
    except services.ReportNotReady:
        return "waiting"  # a part is still out: the one that completes the set sends the merge again
    except DATABASE_ERRORS as error:
        _again(self, error, report_id, failing_since, report_id=report_id)
    except Exception as error:
        _fail(report_id, f"merge: {type(error).__name__}: {error}")
        raise


@shared_task(name="audit.reconcile_failed")
def reconcile_failed(request, exc, traceback, report_id: int) -> None:
    """The error callback of the chords an earlier version sent: messages still queued at an
    upgrade mark their report failed, and the watch tries it again."""
    _fail(report_id, f"{type(exc).__name__}: {exc}")


@shared_task(
    name="audit.anchor_chain",
    **RELIABLE | {"autoretry_for": (OperationalError, InterfaceError, OSError)},
)
def anchor_chain(day: str | None = None) -> str:
    """Write the chain's head outside the database (``audit.anchors``), after the night's reconciliation.

    A failed send (``OSError``: the disk, the receiver) is retried like a
    database error; each retry anchors the head as it is then.
    """
    from audit.anchors import anchor_write

    written = anchor_write(gaming_day=date.fromisoformat(day) if day else None)
    return f"{written.anchor.seq}:{written.anchor.hash}"


@shared_task(name="audit.protect_day", **RELIABLE)
def protect_day(day: str | None = None) -> int:
    """Game protection of ``day`` (default: the gaming day that ended last): each table a task,
    then the day's suspicions. Idempotent: a day scored again adds only what is missing."""
    from audit.protection.services import tables_of_day

    the_day = date.fromisoformat(day) if day else services.day_to_reconcile()
    tables = tables_of_day(day=the_day)
    finish = protect_finish.si(the_day.isoformat())
    if tables:
        chord(group(protect_table_day.si(table_id, the_day.isoformat()) for table_id in tables))(finish)
    else:
        finish.apply_async()
    return len(tables)


@shared_task(name="audit.protect_table_day", **RELIABLE)
def protect_table_day(table_id: int, day: str) -> int:
    from audit.protection.scores import table_day_score

    return table_day_score(table_id=table_id, day=date.fromisoformat(day)).seats_scored


@shared_task(name="audit.protect_finish", **RELIABLE)
def protect_finish(day: str) -> dict[str, int]:
    from audit.protection.raising import day_findings_raise

    raised = day_findings_raise(day=date.fromisoformat(day))
    notices_due(kinds=[PROTECTION_FINDINGS])
    return raised


@shared_task(name="audit.notices_send", **RELIABLE)
def notices_send(kinds: list[str] | None = None) -> dict[str, int]:
    """Mail what cannot wait (``audit.notices``): after a round that may need it (its kind only),
    after the nightly protection, and every few minutes from the schedule (every kind)."""
    from audit.notices import notices_send as send

    return send(kinds=tuple(kinds) if kinds else KINDS)


def notices_due(kinds: list[str] | None = None, **_signal) -> None:
    """``rounds.notices.due``'s receiver, after the round's commit: the notices run as a task (inline
    where there is no broker). A broker that cannot take it, or a run that fails, never fails the table's
    request: the schedule's next run tells what this one did not."""
    try:
        notices_send.delay(kinds=kinds)
    except Exception:
        logger.exception("the notices could not be started; the schedule's next run sends them")
