"""Voiding a stored round after the fact, for a machine malfunction (seed 000)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from game.rules import BETS
from infra import locks, sql
from infra.models import ZERO
from infra.validation import FieldErrors
from progressive.reversal import ReversalError, meter_reverse_round
from progressive.services import pool_lock
from rounds.models import Round, Seat
from trail.services import Actor, audit_record

from . import day_totals


class VoidError(FieldErrors):
    pass


def round_void(*, round_pk: int, user, reason: str, request_id: str = "") -> Round:
    """Settle every bet of the round at zero and take back its meter events, in one transaction."""
    reason = (reason or "").strip()
    if not reason:
        raise VoidError("voiding a round needs a reason", field="reason")
    if not user.has_perm("rounds.void_round"):
        raise VoidError("only a supervisor may void a round", field="round")
    actor = Actor.of_user(user)
    # The round's pool never changes once it is stored: read without a lock, so
    # that the pool's lock can come before the round's (infra.locks).
    pool_id = (
        Round.objects.filter(pk=round_pk).values_list("pool_version__pool_id", flat=True).first()
    )
    with transaction.atomic():
        pool = pool_lock(pool_id=pool_id) if pool_id is not None else None
        round_ = locks.rows_locked(Round.objects.filter(pk=round_pk), [round_pk]).get()
        if round_.status == Round.Status.VOID:
            raise VoidError(f"round {round_} is already void", field="round")
        if pool is not None:
            try:
                reversed_events = meter_reverse_round(pool=pool, round=round_, actor=actor, reason=reason)
            except ReversalError as exc:
                raise VoidError(str(exc), field="round") from None
            round_.meter_after = pool.meter if reversed_events else round_.meter_after
        seats = list(Seat.objects.filter(round=round_, gaming_day=round_.gaming_day).order_by("seat"))
        added = day_totals.of_round(round_, seats)
        before = {
            "status": round_.status,
            "settled": {s.seat: {bet: str(v) for bet, v in s.settled().items()} for s in seats},
        }
        for seat in seats:
            for bet in BETS:
                setattr(seat, f"settled_{bet}", ZERO)
        Seat.objects.bulk_update(seats, [f"settled_{bet}" for bet in BETS])
        round_.status = Round.Status.VOID
        round_.voided_at = timezone.now()
        round_.voided_by = user
        round_.voided_by_name = actor.name
        round_.void_reason = reason
        round_.save(update_fields=[
            "status", "voided_at", "voided_by", "voided_by_name", "void_reason", "meter_after",
        ])
        audit_record(
            actor=actor, action="round.voided", obj=round_, before=before,
            after={"status": round_.status, "reason": reason}, request_id=request_id,
        )
        # After the audit head, as every write of a day's totals (infra.locks).
        sql.run(day_totals.moved(round_, before=added, after=day_totals.of_round(round_, seats)))
    return round_
