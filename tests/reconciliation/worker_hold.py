"""Loaded into a test worker with ``--include``: holds a report's work where a test wants to hurt it.

- ``RECONCILE_HOLD_TABLE``: that table's figures are computed and then wait, unsaved,
  ``RECONCILE_HOLD_SECONDS`` (default 600) — the first time only, if ``RECONCILE_HOLD_ONCE``;
- ``RECONCILE_HOLD_MERGE``: the merge's figures are computed and then wait, inside its
  transaction, holding the report's lock;
- ``RECONCILE_HOLD_MARK``: a file written when a hold begins, so the test knows the moment.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from audit.reconciliation import services

HOLD_TABLE = os.environ.get("RECONCILE_HOLD_TABLE", "")
HOLD_MERGE = bool(os.environ.get("RECONCILE_HOLD_MERGE"))
HOLD_SECONDS = float(os.environ.get("RECONCILE_HOLD_SECONDS", "600"))
HOLD_ONCE = bool(os.environ.get("RECONCILE_HOLD_ONCE"))
MARK = os.environ.get("RECONCILE_HOLD_MARK", "")
_held_before = False
_compute = services._table_part
_merge = services.report_merge


def _hold() -> None:
    global _held_before
    if HOLD_ONCE and _held_before:
        return
    _held_before = True
    if MARK:
        Path(MARK).write_text(str(os.getpid()))
    time.sleep(HOLD_SECONDS)


def _held(report, code, clock, progress, *where):
    figures = _compute(report, code, clock, progress, *where)
    if code == HOLD_TABLE:
        _hold()
    return figures


def _merged(*, report):
    figures = _merge(report=report)
    if HOLD_MERGE:
        _hold()
    return figures


services._table_part = _held
services.report_merge = _merged
