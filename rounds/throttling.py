"""Request rates: each table on its own budget, each person on theirs; and the bytes
of kept bodies each table may add in an hour."""

import logging
import math
import time
from array import array

from django.conf import settings
from django.core.cache import cache
from rest_framework.exceptions import Throttled
from rest_framework.throttling import (
    AnonRateThrottle,
    BaseThrottle,
    SimpleRateThrottle,
    UserRateThrottle,
)

logger = logging.getLogger(__name__)


class TableRateThrottle(SimpleRateThrottle):
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


class PersonRateThrottle(UserRateThrottle):
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
        logger.exception("the kept bytes of table %s could not be counted", table_code)


def kept_bytes_spent(*, table_code: str, now: float) -> list[tuple[int, int]]:
    """The table's kept bytes of the last hour, per minute, oldest first."""
    current = int(now // MINUTE)
    keys = {_minute_key(table_code, m): m for m in range(current - MINUTES + 1, current + 1)}
    found = cache.get_many(list(keys))
    return sorted((keys[k], int(v)) for k, v in found.items() if v)


class TableKeptBytesThrottle(BaseThrottle):
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


__all__ = [
    "AnonRateThrottle", "KeptBytesExhausted", "PersonRateThrottle", "TableKeptBytesThrottle",
    "TableRateThrottle", "kept_bytes_charge", "kept_bytes_spent",
]
