"""Placing a round held apart from the books (``rounds.window``): a supervisor's decision,
with a note, that a round dealt outside the window belongs in the books after all."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from infra import locks, sql
from infra.validation import FieldErrors
from rounds.models import LateRound, Round, Seat
from trail.services import Actor, audit_record

from . import day_totals


class PlacementError(FieldErrors):
    pass


def round_place(*, round_pk: int, user, note: str, request_id: str = "") -> Round:
    """The held round counted by the reports of its gaming day from now on (a report of the day
    made before is stale: ``rounds.LateRound``); its finding stays,
    for the record of why it was held, and the audit chain keeps who placed it and why."""
    note = (note or "").strip()
    if not note:
        raise PlacementError("placing a held round needs a note saying why it belongs in the books",
                             field="note")
    if not user.has_perm("rounds.place_round"):
        raise PlacementError("only a supervisor may place a held round", field="round")
    with transaction.atomic():
        round_ = locks.rows_locked(Round.objects.filter(pk=round_pk), [round_pk]).get()
        if not round_.held:
            raise PlacementError(f"round {round_} is not held apart", field="round")
        added = day_totals.of_round(round_, ())
        round_.held = False
        round_.save(update_fields=["held"])
        # Counted from now on by a day that may have its report already: that report is stale.
        LateRound.objects.create(round_pk=round_.pk, table_id=round_.table_id, gaming_day=round_.gaming_day,
                                 received_at=timezone.now())
        audit_record(
            actor=Actor.of_user(user), action="round.placed", obj=round_, before={"held": True},
            after={"held": False, "gaming_day": round_.gaming_day, "note": note}, request_id=request_id,
        )
        # After the audit head, as every write of a day's totals (infra.locks).
        seats = list(Seat.objects.filter(round=round_, gaming_day=round_.gaming_day))
        sql.run(day_totals.moved(round_, before=added, after=day_totals.of_round(round_, seats)))
    return round_
