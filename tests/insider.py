"""What an insider with database access could do, for tests of the checks that must catch it."""

from __future__ import annotations

from contextlib import contextmanager

from django.db import connection

from progressive.ledger import TRIGGERS

_ON = (("progressive_pool", TRIGGERS[0]), ("progressive_meterevent", TRIGGERS[1]),
       ("progressive_meterevent", TRIGGERS[2]))


@contextmanager
def meter_triggers_off():
    """The meter's ledger triggers disabled for the changes made inside (PostgreSQL's DDL is
    transactional: the test's own transaction ends it either way), then on again."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        # A table with trigger events still pending (the test's earlier writes,
        # checked at its end) cannot be altered: they are checked now.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for table, trigger in _ON:
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
        try:
            yield
        finally:
            for table, trigger in _ON:
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
