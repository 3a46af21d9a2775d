"""Request rates: each table on its own budget, each person on theirs."""

from array import array

from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle


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


__all__ = ["AnonRateThrottle", "PersonRateThrottle", "TableRateThrottle"]
