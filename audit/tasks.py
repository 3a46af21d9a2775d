"""Celery tasks of the audit app. Each only calls a service; the work is in the services.

The nightly job opens (or resumes) the day's report and fans out one task per
part as a chord; the chord's body merges the parts. Every task acknowledges
its message only after it ran (``acks_late``) and gives the message back when
its worker dies (``reject_on_worker_lost``), so a killed worker's part runs
again. A part is claimed before it is computed, so two runs of one range (two
workers, two machines) compute it once: the other run's task waits for it,
and takes a claim over once it is older than ``RECONCILIATION_CLAIM_SECONDS``
(its run died). Transient database errors are retried with exponential backoff.
"""

from __future__ import annotations

from datetime import date

from celery import chord, group, shared_task
from django.db import InterfaceError, OperationalError

from audit.reconciliation import services

RELIABLE = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 6,
}


@shared_task(name="audit.reconcile_day", **RELIABLE)
def reconcile_day(day: str | None = None, day_to: str | None = None, requested_by: str = "beat") -> int:
    """Reconcile ``day`` (ISO date; default: the gaming day that ended last), or a range."""
    day_from = date.fromisoformat(day) if day else services.day_to_reconcile()
    report = services.report_start(
        day_from=day_from, day_to=date.fromisoformat(day_to) if day_to else None,
        requested_by=requested_by,
    )
    parts = services.report_parts_to_compute(report=report)
    finish = reconcile_finish.si(report.pk).on_error(reconcile_failed.s(report_id=report.pk))
    if parts:
        chord(group(reconcile_part.si(part_id) for part_id in parts))(finish)
    else:
        finish.apply_async()
    return report.pk


# The most days one run of the healing job starts: a long gap (a new database whose books open
# the month before, weeks of a stopped beat) is made good a few days an hour, never all at once.
HEAL_MOST_DAYS = 7


@shared_task(name="audit.reconcile_missing", **RELIABLE)
def reconcile_missing(most: int = HEAL_MOST_DAYS) -> list[str]:
    """Start the report of each ended gaming day that has no current report of its own (a night the
    beat or the broker missed, a report that failed), oldest first, at most ``most`` a run.

    Idempotent and cheap when nothing is missing (one read), so the schedule runs it every hour:
    a day already running is resumed, not started twice (``report_start``).
    """
    from rounds.window import window_opens

    days = services.days_to_reconcile(books_open=window_opens())[:most]
    for day in days:
        reconcile_day.delay(day.isoformat(), requested_by="beat: a day without its report")
    return [day.isoformat() for day in days]


# How often a part that another run is computing looks again: it is done when
# that run stores it, or taken over once the other run's claim goes stale.
CLAIMED_ELSEWHERE_RETRY_SECONDS = 5


DATABASE_ERRORS = RELIABLE["autoretry_for"]


# Its retries are its own: waiting for another run's part must not use up the
# budget for database errors, so those are counted in ``database_errors``.
@shared_task(name="audit.reconcile_part", bind=True, **RELIABLE | {"autoretry_for": ()})
def reconcile_part(self, part_id: int, database_errors: int = 0) -> int:
    try:
        part = services.report_part_compute(part_id=part_id)
    except DATABASE_ERRORS as error:
        if database_errors >= RELIABLE["max_retries"]:
            raise
        countdown = min(RELIABLE["retry_backoff"] * 2 ** database_errors, RELIABLE["retry_backoff_max"])
        raise self.retry(exc=error, countdown=countdown, max_retries=None,
                         kwargs={"part_id": part_id, "database_errors": database_errors + 1}) from error
    if part.status != part.Status.COMPLETE and part.report.status == part.report.Status.RUNNING:
        # Another run holds the part: this task ends when the part is in, so
        # that the chord's merge never runs ahead of it.
        raise self.retry(countdown=CLAIMED_ELSEWHERE_RETRY_SECONDS, max_retries=None,
                         kwargs={"part_id": part_id, "database_errors": database_errors})
    return part.pk


@shared_task(
    name="audit.reconcile_finish",
    **RELIABLE | {"autoretry_for": (OperationalError, InterfaceError, services.ReportNotReady)},
)
def reconcile_finish(report_id: int) -> str:
    return services.report_finish(report_id=report_id).status


@shared_task(name="audit.reconcile_failed")
def reconcile_failed(request, exc, traceback, report_id: int) -> None:
    """The chord's error callback: a part gave up after its retries."""
    services.report_fail(report_id=report_id, error=f"{type(exc).__name__}: {exc}")


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

    return day_findings_raise(day=date.fromisoformat(day))
