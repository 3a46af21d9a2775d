"""The cage's counts held to the audit events that entered them.

A count is append-only in the database, and a correction is a new count that
replaces it; both are written with a ``count.entered`` or ``count.corrected``
event holding its figures, in one transaction (``audit.counts``). Whoever
could pass the triggers could still rewrite a count's figures, or insert a
correction with no event: each count whose figures, note, person or
replacement differ from its event, and each with no event, is named.
"""

from __future__ import annotations

from collections.abc import Iterator

from trail.models import AuditEvent

from .counts import count_figures
from .models import TableCount

ACTIONS = ("count.entered", "count.corrected")


def counts_differences() -> Iterator[str]:
    events = {
        int(object_id): (action, actor_name, after)
        for object_id, action, actor_name, after in AuditEvent.objects.filter(
            object_type=TableCount._meta.label_lower, action__in=ACTIONS)
        .order_by("seq").values_list("object_id", "action", "actor_name", "after").iterator(chunk_size=1000)
        if object_id.isdigit()
    }
    counts = TableCount.objects.select_related("table").order_by("pk")
    for count in counts.iterator(chunk_size=1000):
        who = f"count #{count.pk} ({count.table.code} {count.gaming_day})"
        event = events.get(count.pk)
        if event is None:
            yield f"{who}: the audit trail never recorded it"
            continue
        action, actor_name, after = event
        stored = {**count_figures(count), "note": count.note}
        for field, value in stored.items():
            if (after or {}).get(field) != value:
                yield f"{who}: {field} stored {value!r}, the trail recorded {(after or {}).get(field)!r}"
        if (action == "count.corrected") != (count.replaces_id is not None):
            yield f"{who}: {'a correction' if count.replaces_id else 'a first count'} the trail recorded as {action}"
        if count.entered_by_name != actor_name:
            yield f"{who}: entered by {count.entered_by_name!r}, the trail recorded {actor_name!r}"
