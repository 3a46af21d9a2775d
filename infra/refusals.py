"""Refusals of requests nobody proved, told to the application's log, throttled.

An anonymous client can send as many requests as it likes, so what it makes
the service do must not grow with them: no audit event (every writer of the
service queues for the chain's head), and not a log line each. Each kind of
refusal is logged the first time in a window, and the next time after the
window with how many came meanwhile. Per process: each worker says its own.
"""

from __future__ import annotations

import logging
import threading
import time

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60.0


class RefusalTally:
    def __init__(self, window: float = WINDOW_SECONDS, clock=time.monotonic):
        self.window, self.clock = window, clock
        self._guard = threading.Lock()
        self._opened: dict[str, float] = {}  # by kind: when the window of its last line opened
        self._since: dict[str, int] = {}  # by kind: refusals since that line

    def note(self, kind: str, detail: str) -> bool:
        """Count one refusal of ``kind``; True when it was written to the log."""
        now = self.clock()
        with self._guard:
            opened = self._opened.get(kind)
            if opened is not None and now - opened < self.window:
                self._since[kind] += 1
                return False
            meanwhile = self._since.get(kind, 0)
            self._opened[kind], self._since[kind] = now, 0
        if meanwhile:
            logger.warning("refused %s: %s (and %d more since the last line)", kind, detail, meanwhile)
        else:
            logger.warning("refused %s: %s", kind, detail)
        return True


REFUSALS = RefusalTally()
