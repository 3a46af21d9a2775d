"""What the code measures as it works, for Prometheus (prometheus_client).

Only what happens in a process is measured here: how long a table's post
takes to be stored and answered, how many rounds a batch carries, how each
Celery task ended. Figures that stand in the database (rounds by status,
open findings, the pools' meters, the last report) are read from it at
scrape time instead (``casino.metrics_endpoint``): they are then the same
whichever process is asked.

gunicorn runs several worker processes, each with its own memory; with
``PROMETHEUS_MULTIPROC_DIR`` set (gunicorn.conf.py sets it) prometheus_client
keeps these instruments in files there, and a scrape of any worker adds up
all of them. Without it (the development server, the embedded default, the
tests) they are this process's alone.
"""

from __future__ import annotations

import os
from pathlib import Path

if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    # prometheus_client opens its files there as the first instrument below is made.
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

from prometheus_client import Counter, Histogram  # noqa: E402 (after the directory exists)

INGEST_SECONDS = Histogram(
    "table_audit_ingest_seconds",
    "Seconds from a table's post handed to the intake to its answer, by endpoint.",
    ["endpoint"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
BATCH_ROUNDS = Histogram(
    "table_audit_batch_rounds",
    "Rounds in each batch a table posted.",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
)
CELERY_TASKS = Counter(
    "table_audit_celery_tasks",
    "Celery tasks run in processes that share this metrics directory, by task and outcome.",
    ["task", "outcome"],
)


def _outcome(outcome: str):
    def note(sender=None, **kwargs) -> None:
        name = getattr(sender, "name", None) or str(sender)
        CELERY_TASKS.labels(task=name, outcome=outcome).inc()

    return note


_ON_SUCCESS, _ON_FAILURE, _ON_RETRY = _outcome("success"), _outcome("failure"), _outcome("retry")


def celery_outcomes_count() -> None:
    """Count every task's success, failure and retry in the process that runs it.

    A task's outcome is known only where it ran: a worker, or the caller
    itself when tasks run inline (no broker).
    """
    from celery.signals import task_failure, task_retry, task_success

    task_success.connect(_ON_SUCCESS, weak=False, dispatch_uid="table_audit.metrics.success")
    task_failure.connect(_ON_FAILURE, weak=False, dispatch_uid="table_audit.metrics.failure")
    task_retry.connect(_ON_RETRY, weak=False, dispatch_uid="table_audit.metrics.retry")


def multiprocess_dir_prepare(path: str) -> list[str]:
    """Remove the files of processes that no longer run from ``path``; the names removed.

    prometheus_client names each file after the process that writes it
    (``histogram_1234.db``). What dead processes counted belongs to an
    earlier run; a process still running (a Celery worker sharing the
    directory, gunicorn's master itself) keeps its file.
    """
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    removed = []
    for file in directory.glob("*.db"):
        pid = file.stem.rpartition("_")[2]
        if not pid.isdigit() or not _running(int(pid)):
            file.unlink(missing_ok=True)
            removed.append(file.name)
    return sorted(removed)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
THROTTLE_CACHE_ERRORS = Counter(
    "table_audit_throttle_cache_errors",
    "Requests a throttle let through because the cache did not answer, by throttle.",
    ["throttle"],
)
TABLE_KEY_REFUSALS = Counter(
    "table_audit_table_key_refusals",
    "Requests refused for a malformed or wrong table key, and those refused for too many of them "
    "from one address (outcome: malformed, invalid, throttled).",
    ["outcome"],
)
