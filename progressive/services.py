"""Writes to pools and their ledger. Every meter change goes through here."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from django.db import transaction

from audit.services import Actor, audit_record
from casino.models import ZERO
from rounds.engine.progressive import Meters
from rounds.engine.progressive import MeterEvent as EngineEvent

from .models import MeterEvent, Pool

# How each kind of event moves the visible meter, given its (positive) amount.
_METER_SIGN = {
    MeterEvent.Kind.CONTRIBUTION: 1,
    MeterEvent.Kind.AWARD: -1,
    MeterEvent.Kind.RESEED: 1,
    MeterEvent.Kind.FIXED_AWARD: 0,
    MeterEvent.Kind.OVERFLOW: 0,
    MeterEvent.Kind.RESERVE: 0,
}


class MeterError(ValueError):
    """A meter change the rules refuse (below zero, no reason, …)."""


def pool_lock(*, pool_id: int) -> Pool:
    """The pool, row-locked until the surrounding transaction ends."""
    return Pool.objects.select_for_update().get(pk=pool_id)


def pool_meters(pool: Pool) -> Meters:
    return Meters(pool.meter, pool.overflow, pool.reserve)


def meter_record_round_events(*, pool: Pool, events: Iterable[EngineEvent], round) -> list[MeterEvent]:
    """Store a round's meter events and move the locked ``pool`` to where they end."""
    rows = []
    for event in events:
        seq = pool.last_event_seq + 1
        delta = _METER_SIGN[event.kind] * event.amount
        rows.append(
            MeterEvent(
                pool=pool, seq=seq, kind=event.kind, amount=event.amount, delta=delta,
                overflow_delta=event.overflow - pool.overflow,
                reserve_delta=event.reserve - pool.reserve,
                meter_after=event.meter, overflow_after=event.overflow,
                reserve_after=event.reserve, round=round, seat=event.seat,
            )
        )
        if pool.meter + delta != event.meter:
            raise MeterError(f"event {event.kind} does not add up on pool {pool.code}")
        pool.meter, pool.overflow, pool.reserve = event.meter, event.overflow, event.reserve
        pool.last_event_seq = seq
    if rows:
        MeterEvent.objects.bulk_create(rows)
        pool.save(update_fields=["meter", "overflow", "reserve", "last_event_seq", "updated_at"])
    return rows


def pool_open(*, pool: Pool, amount: Decimal, actor: Actor, reason: str) -> MeterEvent:
    """The opening reseed of a new pool: the meter starts at its reseed amount."""
    with transaction.atomic():
        locked = pool_lock(pool_id=pool.pk)
        if locked.last_event_seq:
            raise MeterError(f"pool {pool.code} is already open")
        return _write_single(locked, MeterEvent.Kind.RESEED, amount, amount, actor, reason)


def meter_adjust(*, pool: Pool, delta: Decimal, actor: Actor, reason: str, request_id: str = "") -> MeterEvent:
    """A person's correction of the meter: never without a reason, never below zero."""
    if not reason or not reason.strip():
        raise MeterError("a meter adjustment needs a reason")
    if delta == ZERO:
        raise MeterError("an adjustment of zero changes nothing")
    with transaction.atomic():
        locked = pool_lock(pool_id=pool.pk)
        if locked.meter + delta < 0:
            raise MeterError(
                f"the adjustment would take the meter of {locked.code} to {locked.meter + delta}"
            )
        before = str(locked.meter)
        event = _write_single(locked, MeterEvent.Kind.ADJUSTMENT, abs(delta), delta, actor, reason)
        audit_record(
            actor=actor, action="meter.adjusted", obj=locked,
            before={"meter": before}, after={"meter": str(locked.meter), "reason": reason},
            request_id=request_id,
        )
        return event


def _write_single(pool: Pool, kind: str, amount: Decimal, delta: Decimal, actor: Actor, reason: str) -> MeterEvent:
    pool.meter += delta
    pool.last_event_seq += 1
    event = MeterEvent.objects.create(
        pool=pool, seq=pool.last_event_seq, kind=kind, amount=amount, delta=delta,
        meter_after=pool.meter, overflow_after=pool.overflow, reserve_after=pool.reserve,
        actor_id=int(actor.id) if actor.kind == "user" and actor.id else None,
        actor_name=actor.name, reason=reason,
    )
    pool.save(update_fields=["meter", "last_event_seq", "updated_at"])
    return event
