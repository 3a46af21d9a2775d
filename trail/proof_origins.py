"""A person's act held to the process that wrote it.

The database writes on every audit event the name its connection gave
(trail migration 0002, ``infra.process_names``). A person acts where he proved
who he is: the web service's sign-in, or a command that asks his password. An
event naming a person that any other process wrote (``manage.py shell``, a
script on the application's role, psql) is the service's code run in his name
by somebody who proved nothing, and is named here. Events from before the
origins were kept (an empty origin), and SQLite's, are not judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db import connection

from infra.process_names import PERSONS_PROVEN_IN

from .models import AuditEvent


def acts_unproven(*, after_seq: int | None = None) -> Iterator[str]:
    """Each event naming a person written by a process where no person proves who he is."""
    if connection.vendor != "postgresql":
        return
    events = AuditEvent.objects.filter(actor_kind=AuditEvent.ActorKind.USER).exclude(origin="").exclude(
        origin__in=sorted(PERSONS_PROVEN_IN))
    if after_seq is not None:
        events = events.filter(seq__gt=after_seq)
    for event in events.order_by("seq").iterator(chunk_size=1000):
        where = f"from {event.origin_address}" if event.origin_address else "on this host"
        yield (f"event {event.seq} ({event.action} by {event.actor_name}, person #{event.actor_id}): written "
               f"by a connection named {event.origin!r} {where}, not where a person proves who he is")
