"""What an insider with database access could do, for tests of the checks that must catch it."""

from __future__ import annotations

from contextlib import contextmanager

import psycopg
from django.db import connection


@contextmanager
def as_owner():
    """Statements inside run as the session's login role (the tables' owner, a superuser in
    the tests), not as the application's role every test otherwise runs as."""
    role = connection.settings_dict["OPTIONS"].get("assume_role") if connection.vendor == "postgresql" else None
    if not role:
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("RESET ROLE")
        try:
            yield
        finally:
            # After a refused statement the transaction is aborted, and rolling it (or its
            # savepoint) back restores the role by itself: SET ROLE is transactional.
            if connection.connection.info.transaction_status != psycopg.pq.TransactionStatus.INERROR:
                cursor.execute(connection.ops.compose_sql("SET ROLE %s", [role]))


@contextmanager
def as_superuser():
    """Changes made inside pass every trigger, as a superuser's session with
    ``session_replication_role = replica`` passes them; the triggers are on again after."""
    if connection.vendor != "postgresql":
        yield
        return
    with as_owner(), connection.cursor() as cursor:
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


def chain_rehashed_from(event, actor_name: str) -> None:
    """An event edited and every hash after it written again, and the head to match: a chain that
    follows from itself, which only an anchor kept outside catches."""
    from trail.chain import HASHED_FIELDS, event_hash
    from trail.models import AuditEvent, ChainHead

    prev_hash = AuditEvent.objects.get(seq=event.seq - 1).hash if event.seq > 1 else None
    rows = list(AuditEvent.objects.filter(seq__gte=event.seq).order_by("seq").values_list("pk", *HASHED_FIELDS))
    with as_superuser(), connection.cursor() as cursor:
        for pk, *values in rows:
            fields = dict(zip(HASHED_FIELDS, values))
            if pk == event.pk:
                fields["actor_name"] = actor_name
            if prev_hash is not None:
                fields["prev_hash"] = prev_hash
            prev_hash = event_hash(fields)
            cursor.execute("UPDATE audit_auditevent SET actor_name = %s, prev_hash = %s, hash = %s WHERE id = %s",
                           [fields["actor_name"], fields["prev_hash"], prev_hash, pk])
    ChainHead.objects.filter(pk=1).update(hash=prev_hash)
