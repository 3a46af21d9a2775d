"""A part's claim kept alive while its holder computes: a lease renewed by a heartbeat.

The holder renews ``heartbeat_at`` every quarter of ``RECONCILIATION_LEASE_SECONDS``
from a thread of its own, so a part that spends minutes in one query (the
players' sums, a busy table) is never taken for dead, and a part whose worker
was killed or whose connection died stops being renewed at once: its claim is
free for another run a lease later, not after a fixed quarter of an hour.

The database's clock stamps and judges every lease, so machines whose clocks
disagree never take each other's live claims.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models.functions import Now

from audit.models import ReconciliationPart

logger = logging.getLogger("audit.reconciliation")


def lease_seconds() -> int:
    return settings.RECONCILIATION_LEASE_SECONDS


def lease_expired():
    """The moment before which a heartbeat is too old to be a live holder's, by the database's clock."""
    return Now() - timedelta(seconds=lease_seconds())


def lease_renew(*, part_id: int, token: str) -> bool:
    """Renew the lease if ``token`` still holds the part (a run taken over renews nothing)."""
    return bool(ReconciliationPart.objects.filter(pk=part_id, claim=token).update(heartbeat_at=Now()))


class Heartbeat:
    """``with Heartbeat(part_id, token):`` renews the part's lease from a thread while the block runs.

    On SQLite (the embedded default, tasks inline in one process) there is no
    other run to take a part over, and a second writer would only wait on the
    first: nothing is started there.
    """

    def __init__(self, part_id: int, token: str, every: float | None = None) -> None:
        self.part_id, self.token = part_id, token
        self.every = every if every is not None else lease_seconds() / 4
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Heartbeat:
        if connection.vendor == "postgresql":
            self._thread = threading.Thread(target=self._beat, name=f"lease-part-{self.part_id}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _beat(self) -> None:
        # The thread's own connection (Django's are per thread), closed when it ends.
        try:
            while not self._stop.wait(self.every):
                try:
                    if not lease_renew(part_id=self.part_id, token=self.token):
                        return  # taken over: the part is another run's now
                except DatabaseError as error:
                    logger.warning("part %s: its lease was not renewed (%s); trying again", self.part_id, error)
                    connection.close()
        finally:
            connection.close()
