"""Taking back a round's meter events when a supervisor voids the round.

Nothing is deleted: every event of the round gets a compensating ``reversal``
event, newest first, so the ledger still adds up to the meter and shows both
what happened and that it was undone.
"""

from __future__ import annotations

from trail.services import Actor

from .ledger import LedgerDraft, ledger_write
from .models import MeterEvent, Pool


class ReversalError(ValueError):
    pass


def meter_reverse_round(*, pool: Pool, round, actor: Actor, reason: str) -> list[MeterEvent]:
    """Reverse ``round``'s events on the row-locked ``pool``; refuse if the meter would go negative."""
    originals = list(
        MeterEvent.objects.filter(pool=pool, round=round)
        .exclude(kind=MeterEvent.Kind.REVERSAL)
        .order_by("-seq")
    )
    draft = LedgerDraft(pool)
    for event in originals:
        row = draft.add(
            MeterEvent.Kind.REVERSAL, event.amount, delta=-event.delta,
            overflow_delta=-event.overflow_delta, reserve_delta=-event.reserve_delta,
            round=round, seat=event.seat,
            actor_id=int(actor.id) if actor.kind == "user" and actor.id else None,
            actor_name=actor.name, reason=f"reverses #{event.seq} {event.kind}: {reason}",
        )
        if min(row.meter_after, row.overflow_after, row.reserve_after) < 0:
            raise ReversalError(
                f"reversing event {event.seq} ({event.kind} {event.amount}) would take pool "
                f"{pool.code} below zero; adjust the meter first"
            )
    return ledger_write(draft) if originals else []
