"""Reads a streaming replica may serve, and the check that a replica is fit to serve them.

A read goes to a replica only where its code asks for one: the staff's
lists and details, the CSV exports and the nightly report's reads of rounds,
seats and ledgers. Everything else — every write, every row lock and the
reads a locked write decides on (``infra.locks``), every read that must
see a write just made — stays on the primary (``casino.routers``). With
no ``DATABASE_REPLICA_URL`` nothing here runs a query: every alias it
hands out is ``default``.

A replica serves a read when it answers at once (a short connect timeout)
as a standby, and has replayed what the primary had written when the check
began (given a moment to), or else the last commit it replayed is no
older than ``REPLICA_MAX_LAG_SECONDS``. That age alone cannot say: on a
primary nobody writes to it grows for ever while the replica has
everything, so the WAL positions are compared first. A verdict is kept ``REPLICA_CHECK_SECONDS``
per process. A replica that is down, lagging or not a standby is passed
over for the primary, and a read that fails on a replica midway is read
again on the primary: a replica never makes an answer fail. (A CSV export
is read again only if the replica fails before its first row; after that
its rows are on their way, and a failure cuts the download short.)

A read that must see everything the primary holds now (a report part,
whose inputs were fingerprinted on the primary) asks for a ``fresh``
replica: one that has replayed the primary's position of this moment,
waited for up to ``REPLICA_MAX_LAG_SECONDS``, or else the primary.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, InterfaceError, OperationalError, connections

logger = logging.getLogger(__name__)
T = TypeVar("T")

# A replica that replays commits steadily catches up with a position the primary
# wrote an instant ago within milliseconds; one paused or cut off never does.
_GRACE_SECONDS = 0.2
_POLL_SECONDS = 0.02

# The replica's side of the check: is it a standby, how many bytes of the
# primary's position has it still to replay, and how old is the last commit it replayed.
_STANDBY_STATE = (
    "SELECT pg_is_in_recovery(), pg_wal_lsn_diff(%s::pg_lsn, pg_last_wal_replay_lsn()), "
    "EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())"
)


@dataclass(frozen=True, slots=True)
class Verdict:
    usable: bool
    reason: str = ""


_verdicts: dict[str, tuple[Verdict, float]] = {}
_lock = threading.Lock()
_turns = itertools.count()


def replica_aliases() -> list[str]:
    """The configured replicas, less any that names the primary's own database.

    That is what a replica becomes under the test runner (a mirror of the
    test database): it then serves nothing, and the suite runs as without one.
    """
    primary = _where(DEFAULT_DB_ALIAS)
    return [alias for alias in getattr(settings, "DATABASE_REPLICAS", ()) if _where(alias) != primary]


def _where(alias: str) -> tuple:
    named = connections[alias].settings_dict
    return named.get("HOST"), str(named.get("PORT") or ""), named.get("NAME")


def read_alias(*, fresh: bool = False) -> str:
    """The database a read that may be served by a replica goes to: a usable replica, else ``default``."""
    aliases = replica_aliases()
    if not aliases:
        return DEFAULT_DB_ALIAS
    start = next(_turns)  # several replicas take the reads in turn
    for i in range(len(aliases)):
        alias = aliases[(start + i) % len(aliases)]
        verdict = _kept_verdict(alias)
        if verdict.usable and fresh:
            # Only a replica fit for reads is waited for: one passed over costs no wait.
            verdict = replica_check(alias, fresh=True)
        if verdict.usable:
            return alias
    return DEFAULT_DB_ALIAS


def read(answer: Callable[[str], T], *, fresh: bool = False) -> T:
    """``answer(alias)`` on a usable replica, read again on the primary if the replica fails midway."""
    alias = read_alias(fresh=fresh)
    if alias == DEFAULT_DB_ALIAS:
        return answer(alias)
    try:
        return answer(alias)
    except (OperationalError, InterfaceError) as error:
        _keep(alias, Verdict(False, f"failed during a read: {error}"))
        connections[alias].close()
        return answer(DEFAULT_DB_ALIAS)


def replica_check(alias: str, *, fresh: bool = False) -> Verdict:
    """Whether ``alias`` may serve reads now (kept for ``REPLICA_CHECK_SECONDS``)."""
    # The primary's position first: a primary that cannot answer fails the
    # request as it would without replicas (a 503), and is no replica's fault.
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        [(position,)] = cursor.fetchall()
    try:
        verdict = _standby_verdict(alias, position, fresh=fresh)
    except DatabaseError as error:
        connections[alias].close()
        verdict = Verdict(False, f"does not answer: {error}")
    _keep(alias, verdict)
    return verdict


def _standby_verdict(alias: str, position: str, *, fresh: bool) -> Verdict:
    max_lag = settings.REPLICA_MAX_LAG_SECONDS
    deadline = time.monotonic() + (max_lag if fresh else _GRACE_SECONDS)
    with connections[alias].cursor() as cursor:
        while True:
            cursor.execute(_STANDBY_STATE, [position])
            [(standby, behind, age)] = cursor.fetchall()
            if not standby:
                return Verdict(False, "is not a standby (promoted, or the primary itself)")
            if behind is not None and behind <= 0:
                return Verdict(True)
            if not fresh and age is not None and age <= max_lag:
                return Verdict(True)
            if time.monotonic() >= deadline:
                return Verdict(False, f"is {'an unknown number of' if behind is None else int(behind)} "
                                      "bytes of WAL behind the primary; its last commit replayed is "
                                      f"{'none' if age is None else f'{age:.1f} s old'}")
            time.sleep(_POLL_SECONDS)


def _kept_verdict(alias: str) -> Verdict:
    kept = _verdicts.get(alias)
    if kept is not None and kept[1] > time.monotonic():
        return kept[0]
    return replica_check(alias)


def _keep(alias: str, verdict: Verdict) -> None:
    with _lock:
        before = _verdicts.get(alias)
        _verdicts[alias] = (verdict, time.monotonic() + settings.REPLICA_CHECK_SECONDS)
    if (before is None or before[0].usable) and not verdict.usable:
        logger.warning("replica %s passed over, reads go to the primary: it %s", alias, verdict.reason)
    elif before is not None and not before[0].usable and verdict.usable:
        logger.info("replica %s serves reads again", alias)


def verdicts_forget() -> None:
    """Forget every kept verdict: the next read checks its replica again."""
    with _lock:
        _verdicts.clear()


class ReplicaReads:
    """A view whose GET may be answered from a replica (``read``); any other method reads the primary.

    Put it first among the view's bases. Authentication, permissions and
    throttles run before, on the primary as ever; the queryset and
    everything read through it (its prefetches too) come from the replica.
    """

    read_alias = DEFAULT_DB_ALIAS

    def get_queryset(self):
        queryset = super().get_queryset()
        return queryset if self.read_alias == DEFAULT_DB_ALIAS else queryset.using(self.read_alias)

    def get(self, request, *args, **kwargs):
        handler = super().get

        def answer(alias: str):
            self.read_alias = alias
            return handler(request, *args, **kwargs)

        return read(answer)
