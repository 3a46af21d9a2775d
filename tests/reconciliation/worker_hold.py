"""Loaded into a test worker with ``--include``: the table named by ``RECONCILE_HOLD_TABLE``
has its figures computed and then waits, unsaved, so the test can kill the worker mid-part."""

from __future__ import annotations

import os
import time

from audit.reconciliation import services

HOLD_TABLE = os.environ.get("RECONCILE_HOLD_TABLE", "")
_compute = services._table_part


def _held(report, code, clock, progress, *where):
    figures = _compute(report, code, clock, progress, *where)
    if code == HOLD_TABLE:
        time.sleep(600)
    return figures


services._table_part = _held
