"""Request rates: each table on its own budget, each person on theirs."""

from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle


class TableRateThrottle(SimpleRateThrottle):
    """One budget per table, whichever of its keys it uses."""

    scope = "table"

    def get_cache_key(self, request, view):
        if not getattr(request.user, "is_table", False):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.table.code}


class PersonRateThrottle(UserRateThrottle):
    def get_cache_key(self, request, view):
        if getattr(request.user, "is_table", False):
            return None
        return super().get_cache_key(request, view)


__all__ = ["AnonRateThrottle", "PersonRateThrottle", "TableRateThrottle"]
