"""Request rates: each table on its own budget, each person on theirs; the bytes
of kept bodies each table may add in an hour; and wrong table keys, per address.

Every budget lives in the cache. A cache that does not answer lets the request
through (``CacheDownLetsThrough``): throttling is protection, storing a round
is the service, and a Redis outage must never cost a table's round or an
auditor's page. Each such pass is logged and counted
(``table_audit_throttle_cache_errors``), and ``/readyz`` names the cache.
"""

import logging
import math
import time
from array import array

from django.conf import settings
from django.core.cache import cache
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.throttling import AnonRateThrottle as DRFAnonRateThrottle
from rest_framework.throttling import (
    BaseThrottle,
    SimpleRateThrottle,
    UserRateThrottle,
)

from infra.metrics import TABLE_KEY_REFUSALS, THROTTLE_CACHE_ERRORS
from infra.refusals import REFUSALS

logger = logging.getLogger(__name__)


def cache_failed(throttle: str) -> None:
    """A budget the cache could not read or count: let through, logged and counted."""
    logger.warning("the cache did not answer the %s throttle: the request is let through", throttle,
                   exc_info=True)
    THROTTLE_CACHE_ERRORS.labels(throttle=throttle).inc()


class CacheDownLetsThrough:
    """A throttle whose cache fails lets the request through (see the module's docstring)."""

    def allow_request(self, request, view):
        try:
            return super().allow_request(request, view)
        except Throttled:
            raise
        except Exception:  # noqa: BLE001 - whatever the cache's client raises when it cannot answer
            cache_failed(type(self).__name__)
            return True


class TableSlidingLog(SimpleRateThrottle):
    """One budget per table, whichever of its keys it uses.

    DRF's sliding log, exactly: the moments of the table's requests within
    the period, newest first. Kept in the cache as an array of doubles rather
    than a list of floats, because a table catching up has thousands of them
    and the cache (Redis, or the per-process memory cache) pickles the whole
    log on every request: an array pickles as one block of bytes.
    """

    scope = "table"

    def get_cache_key(self, request, view):
        if not getattr(request.user, "is_table", False):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.table.code}

    def allow_request(self, request, view):
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.history = array("d", self.cache.get(self.key, ()))
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()
        if len(self.history) >= self.num_requests:
            return self.throttle_failure()
        return self.throttle_success()


class TableRateThrottle(CacheDownLetsThrough, TableSlidingLog):
    pass


class PersonRateThrottle(CacheDownLetsThrough, UserRateThrottle):
    def get_cache_key(self, request, view):
        if getattr(request.user, "is_table", False):
            return None
        return super().get_cache_key(request, view)


class KeptBytesExhausted(Throttled):
    default_detail = (
        "This table has sent more bytes in the last hour than the service keeps for one table; "
        "nothing of this request was read or kept."
    )
    default_code = "kept_bytes_exhausted"


# The hour is counted in minutes: one counter per table and minute, each added to
# atomically (the cache's incr), so that several workers sharing the cache share
# one budget, and reading the hour costs one get_many of at most 60 keys.
MINUTE = 60
MINUTES = 60


def _now() -> float:
    return time.time()


def _minute_key(table_code: str, minute: int) -> str:
    return f"throttle_kept_bytes_{table_code}_{minute}"


def kept_bytes_charge(*, table_code: str, size: int) -> None:
    """Count ``size`` bytes of bodies kept for the table against its hour."""
    if size <= 0 or not settings.TABLE_KEPT_BYTES_PER_HOUR:
        return
    key = _minute_key(table_code, int(_now() // MINUTE))
    try:
        cache.add(key, 0, timeout=(MINUTES + 1) * MINUTE)
        try:
            cache.incr(key, size)
        except ValueError:  # the counter expired between add and incr
            cache.set(key, size, timeout=(MINUTES + 1) * MINUTE)
    except Exception:  # noqa: BLE001 - the round is stored: a cache down must not make it a 500
        cache_failed("kept_bytes_charge")


def kept_bytes_spent(*, table_code: str, now: float) -> list[tuple[int, int]]:
    """The table's kept bytes of the last hour, per minute, oldest first."""
    current = int(now // MINUTE)
    keys = {_minute_key(table_code, m): m for m in range(current - MINUTES + 1, current + 1)}
    found = cache.get_many(list(keys))
    return sorted((keys[k], int(v)) for k, v in found.items() if v)


class AnonRateThrottle(CacheDownLetsThrough, DRFAnonRateThrottle):
    pass


class TableKeptBytesBudget(BaseThrottle):
    """A table whose kept bodies of the last hour reached ``TABLE_KEPT_BYTES_PER_HOUR``
    is refused (429, with the seconds until enough of that hour has passed), before
    anything of its request is read. Its request-rate budget is ``TableRateThrottle``'s.

    The charge comes after a request (``kept_bytes_charge``): a request is let in
    while the budget is not yet spent, so the hour may end over it by one request
    (at most ``DATA_UPLOAD_MAX_MEMORY_SIZE``).
    """

    def allow_request(self, request, view):
        budget = settings.TABLE_KEPT_BYTES_PER_HOUR
        if not budget or not getattr(request.user, "is_table", False):
            return True
        now = _now()
        spent = kept_bytes_spent(table_code=request.user.table.code, now=now)
        over = sum(size for _, size in spent) - budget
        if over < 0:
            return True
        # The budget is open again once the oldest minutes holding more than `over` have passed.
        freed = 0
        for minute, size in spent:
            freed += size
            if freed > over:
                break
        raise KeptBytesExhausted(wait=max(1, math.ceil((minute + MINUTES) * MINUTE - now)))


class TableKeptBytesThrottle(CacheDownLetsThrough, TableKeptBytesBudget):
    pass


class TableKeyFailures(Throttled):
    default_detail = "Too many wrong table keys from this address; try again later."
    default_code = "table_key_failures"


def _failures_key(address: str, minute: int) -> str:
    return f"throttle_table_key_failures_{address}_{minute}"


def table_key_refused(*, address: str | None, outcome: str, detail: str) -> Throttled | AuthenticationFailed:
    """The refusal of a wrong table key from ``address`` (``outcome``: malformed or invalid),
    counted at ``/metrics``, told to the log (``infra.refusals``) and against the address's minute:
    a 401, or past ``TABLE_KEY_FAILURES_PER_MINUTE`` this minute a 429 until the minute ends.

    Counted only once a key has failed, so a table whose key is right is never refused for
    what another client behind the same address sent.
    """
    REFUSALS.note(f"{outcome} table key", f"from {address or 'an unknown address'}")
    budget = settings.TABLE_KEY_FAILURES_PER_MINUTE
    if budget and address:
        now = _now()
        key = _failures_key(address, int(now // MINUTE))
        try:
            cache.add(key, 0, timeout=2 * MINUTE)
            try:
                failures = cache.incr(key)
            except ValueError:  # the counter expired between add and incr
                cache.set(key, failures := 1, timeout=2 * MINUTE)
        except Exception:  # noqa: BLE001 - see CacheDownLetsThrough
            cache_failed("table_key_failures")
        else:
            if failures > budget:
                TABLE_KEY_REFUSALS.labels(outcome="throttled").inc()
                return TableKeyFailures(wait=max(1, math.ceil(MINUTE - now % MINUTE)))
    TABLE_KEY_REFUSALS.labels(outcome=outcome).inc()
    return AuthenticationFailed(detail)


__all__ = [
    "AnonRateThrottle", "KeptBytesExhausted", "PersonRateThrottle", "TableKeptBytesThrottle",
    "TableKeyFailures", "TableRateThrottle", "kept_bytes_charge", "kept_bytes_spent",
    "table_key_refused",
]
