"""What an insider with database access could do, for tests of the checks that must catch it."""

from __future__ import annotations

from contextlib import contextmanager

from django.db import connection


@contextmanager
def as_superuser():
    """Changes made inside pass every trigger, as a superuser's session with
    ``session_replication_role = replica`` passes them; the triggers are on again after."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        # Trigger events still pending (the test's earlier writes, checked at its end) are
        # checked now: what the insider does is theirs alone.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET LOCAL session_replication_role = replica")
        try:
            yield
        finally:
            cursor.execute("SET LOCAL session_replication_role = origin")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")


# The meter's ledger triggers are among those passed.
meter_triggers_off = as_superuser
