"""Writes to pools and their ledger.

Each write that moves a meter takes the pool's row lock first
(``infra.locks``, whose order every writer keeps) and moves the meter only
by appending events (``progressive.ledger``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from game.progressive import Meters
from game.versions import in_force
from infra import locks
from infra.models import ZERO, SecondApproval
from infra.validation import NON_FIELD
from trail.approvals import decision_write, pending_locked, rejection_note, rejection_write
from trail.services import Actor, audit_record

from .configuration import (
    MONEY_LIMIT,
    VERSION_NUMBERS,
    PoolConfigError,
    PoolNumbers,
    ProgressiveError,
    currency_check,
    decimal_of,
    minor_unit_check,
    pool_numbers_check,
)
from .ledger import LedgerDraft, ledger_write
from .models import MeterAdjustmentRequest, MeterEvent, MeterReading, Pool, PoolVersion, PoolVersionRequest
from .selectors import pool_version_in_force

__all__ = [
    "ApprovalError",
    "MeterError",
    "NotLinkedError",
    "PoolConfigError",
    "ProgressiveError",
    "ReadingError",
    "adjustment_approve",
    "adjustment_reject",
    "meter_adjust",
    "meter_transfer_overflow",
    "moved_alone",
    "pool_create",
    "pool_lock",
    "pool_meters",
    "pool_pays_differently",
    "pool_version_approve",
    "pool_version_create",
    "pool_version_reject",
    "reading_record",
    "second_approval_needed",
]

OPENING_REASON = "opening meter at the reseed amount"
# A display read "in the future" by more than this is a clock problem, not a reading.
READING_CLOCK_SKEW = timedelta(minutes=5)


class MeterError(ProgressiveError):
    """A meter change the rules refuse (below zero, no reason, …)."""


class ReadingError(ProgressiveError):
    """A meter reading the service will not keep."""


class NotLinkedError(ReadingError):
    """The reporting table does not feed that pool."""


def pool_lock(*, pool_id: int) -> Pool:
    """The pool, row-locked until the surrounding transaction ends."""
    return locks.rows_locked(Pool.objects.filter(pk=pool_id), [pool_id]).get()


def pool_meters(pool: Pool) -> Meters:
    return Meters(pool.meter, pool.overflow, pool.reserve)


# ---- pools and their versions ----------------------------------------------


def pool_create(
    *,
    code: str,
    currency: str,
    wager: Decimal,
    rate: Decimal,
    reseed: Decimal,
    lines: list[dict],
    actor: Actor,
    name: str = "",
    minor_unit: Decimal = Decimal("0.01"),
    ceiling: Decimal | None = None,
    reserve_rate: Decimal = ZERO,
    reading_tolerance: Decimal = ZERO,
    effective_from: datetime | None = None,
    note: str = "",
    request_id: str = "",
) -> Pool:
    """A new pool, its version 1 and the opening reseed of its meter: all of it or none."""
    errors: dict[str, list[str]] = {}
    if not isinstance(code, str) or not code or len(code) > 40 or not _is_slug(code):
        errors["code"] = ["letters, digits, '-' and '_' only, at most 40."]
    elif Pool.objects.filter(code=code).exists():
        errors["code"] = [f"a pool {code} already exists."]
    try:
        currency = currency_check(currency)
        minor_unit = minor_unit_check(minor_unit)
        numbers = pool_numbers_check(
            currency=currency, minor_unit=minor_unit, wager=wager, rate=rate, reseed=reseed,
            ceiling=ceiling, reserve_rate=reserve_rate, reading_tolerance=reading_tolerance,
            lines=lines,
        )
    except PoolConfigError as exc:
        errors.update(exc.errors)
    if errors:
        raise PoolConfigError(errors)
    effective_from = _aware(effective_from or timezone.now())
    try:
        with transaction.atomic():
            pool = Pool.objects.create(code=code, name=name, currency=currency, minor_unit=minor_unit)
            version = _version_write(pool, 1, effective_from, numbers, _user_id(actor), note)
            _write_single(pool, MeterEvent.Kind.RESEED, numbers.reseed, numbers.reseed, actor, OPENING_REASON)
            audit_record(
                actor=actor, action="pool.created", obj=pool,
                after={"currency": currency, "minor_unit": minor_unit, **pool_version_snapshot(version),
                       "meter": pool.meter},
                request_id=request_id,
            )
    except IntegrityError:
        # Another request created the same code between our look and our insert.
        raise PoolConfigError(f"a pool {code} already exists.", field="code") from None
    return pool


def pool_version_create(
    *,
    pool: Pool,
    effective_from: datetime,
    wager: Decimal,
    rate: Decimal,
    reseed: Decimal,
    lines: list[dict],
    actor: Actor,
    ceiling: Decimal | None = None,
    reserve_rate: Decimal = ZERO,
    reading_tolerance: Decimal = ZERO,
    note: str = "",
    request_id: str = "",
) -> PoolVersion | PoolVersionRequest:
    """The pool's next version, from ``effective_from`` on.

    A version never reaches back over a round already judged: rounds keep the
    version that judged them, and a late round must meet the same rules.

    Dual control, as for a table configuration's version: a version a person
    makes that would settle a round's Progressive otherwise than the latest
    (``pool_pays_differently``) is not made; a request is kept and returned
    instead, and the version exists only once a second supervisor approves it
    (``pool_version_approve``). The system (migrations, seeds, management
    commands) makes versions at once.
    """
    numbers = pool_numbers_check(
        currency=pool.currency, minor_unit=pool.minor_unit, wager=wager, rate=rate, reseed=reseed,
        ceiling=ceiling, reserve_rate=reserve_rate, reading_tolerance=reading_tolerance, lines=lines,
    )
    if not isinstance(effective_from, datetime):
        raise PoolConfigError("a date and time with its time zone.", field="effective_from")
    effective_from = _aware(effective_from)
    with transaction.atomic():
        locked = pool_lock(pool_id=pool.pk)
        latest = _latest_checked(locked, effective_from, numbers)
        if actor.user_id is not None and pool_pays_differently(latest=latest, numbers=numbers):
            return _pool_version_requested(locked, effective_from, numbers, note, actor, request_id)
        return _pool_version_made(locked, latest, effective_from, numbers, note, actor, request_id)


def pool_pays_differently(*, latest: PoolVersion | None, numbers: PoolNumbers) -> bool:
    """Whether a version of ``numbers`` would settle any round's Progressive otherwise than ``latest``.

    The engine's rules compared whole (wager, rates, reseed, ceiling, pay
    lines): a note or the readings' tolerance is all a version may change
    without a second supervisor.
    """
    return latest is None or numbers.rules != latest.rules()


def _latest_checked(locked: Pool, effective_from: datetime, numbers: PoolNumbers) -> PoolVersion | None:
    """The latest version of ``locked`` (row-locked by the caller), once a version of ``numbers``
    from ``effective_from`` is known to reach back over neither it nor a judged round."""
    latest = PoolVersion.objects.filter(pool=locked).select_related("pool").order_by("-version").first()
    if latest is not None and effective_from < latest.effective_from:
        raise PoolConfigError(
            f"version {latest.version} is in force from {latest.effective_from.isoformat()}; "
            "a new version cannot start before it.",
            field="effective_from",
        )
    # The rounds its versions judged, through their relation: rounds stand above this app.
    judged = (
        PoolVersion.objects.filter(pool=locked, rounds__dealt_at__gte=effective_from)
        .aggregate(last=Max("rounds__dealt_at"))["last"]
    )
    if judged is not None:
        raise PoolConfigError(
            f"a round dealt at {judged.isoformat()} was already judged by this pool; "
            "a new version must start after the last judged round.",
            field="effective_from",
        )
    if numbers.ceiling is not None and numbers.ceiling < locked.meter:
        raise PoolConfigError(
            f"the meter already holds {locked.meter}; a ceiling cannot be below it.",
            field="ceiling",
        )
    return latest


def _pool_version_made(locked: Pool, latest: PoolVersion | None, effective_from: datetime, numbers: PoolNumbers,
                       note: str, actor: Actor, request_id: str,
                       *, asked: PoolVersionRequest | None = None) -> PoolVersion:
    """Write and audit the next version of ``locked`` (row-locked, ``latest`` read under the lock)."""
    version = _version_write(locked, (latest.version if latest else 0) + 1, effective_from, numbers,
                             asked.requested_by_id if asked is not None else _user_id(actor), note)
    after = pool_version_snapshot(version)
    if asked is not None:
        after |= {"version_request": asked.pk, "requested_by": asked.requested_by_name, "approved_by": actor.name}
    audit_record(
        actor=actor, action="pool.version_created", obj=version,
        before=pool_version_snapshot(latest) if latest else None, after=after, request_id=request_id,
    )
    return version


def _pool_version_requested(locked: Pool, effective_from: datetime, numbers: PoolNumbers, note: str,
                            actor: Actor, request_id: str) -> PoolVersionRequest:
    asked = PoolVersionRequest.objects.create(
        pool=locked, effective_from=effective_from, numbers=_numbers_json(numbers), note=(note or "")[:200],
        requested_by_id=actor.user_id, requested_by_name=actor.name[:150], request_id=request_id,
    )
    audit_record(
        actor=actor, action="pool.version_requested", obj=asked,
        after={"pool": locked.code, "effective_from": effective_from, **asked.numbers, "note": asked.note},
        request_id=request_id,
    )
    return asked


def _numbers_json(numbers: PoolNumbers) -> dict:
    """``numbers`` as a request keeps them: each as ``pool_numbers_check`` reads it back."""
    def kept(value):
        return str(value) if isinstance(value, Decimal) else value
    return {name: kept(getattr(numbers, name)) for name in VERSION_NUMBERS}


def _version_write(pool, number, effective_from, numbers, created_by_id: int | None, note: str) -> PoolVersion:
    return PoolVersion.objects.create(
        pool=pool, version=number, effective_from=effective_from, note=(note or "")[:200],
        created_by_id=created_by_id, **{name: getattr(numbers, name) for name in VERSION_NUMBERS},
    )


def pool_version_snapshot(version: PoolVersion) -> dict:
    """What the chain records of a version as it is made, and what ``progressive.proof_versions`` holds it to."""
    return {"version": version.version, "effective_from": version.effective_from,
            **{name: getattr(version, name) for name in VERSION_NUMBERS}}


# ---- the meter ---------------------------------------------------------------


def meter_adjust(
    *, pool: Pool, delta: Decimal, actor: Actor, reason: str, request_id: str = ""
) -> MeterEvent | MeterAdjustmentRequest:
    """A person's correction of the meter: never without a reason, never below zero.

    Dual control: an adjustment that takes what the person moved alone on the
    pool within the window past ``METER_SECOND_APPROVAL_ABOVE`` in the pool's
    currency (``second_approval_needed``) does not move the meter; it is kept
    as a request (returned instead of the event) until a second supervisor
    approves it (``adjustment_approve``).
    """
    reason = _reason_check(reason, "a meter adjustment")
    delta = _amount_check(delta, pool, "delta", signed=True)
    if delta == ZERO:
        raise MeterError("an adjustment of zero changes nothing.", field="delta")
    with transaction.atomic():
        # Under the pool's lock: two adjustments of one person at once are judged one after the other.
        locked = pool_lock(pool_id=pool.pk)
        if second_approval_needed(pool=locked, delta=delta, actor=actor):
            return _adjustment_requested(locked, delta, actor, reason, request_id)
        return _adjusted(locked, delta, actor, reason, request_id)


def _adjusted(locked: Pool, delta: Decimal, actor: Actor, reason: str, request_id: str,
              *, asked: MeterAdjustmentRequest | None = None) -> MeterEvent:
    """The adjustment written to the ledger of ``locked`` (row-locked), and audited."""
    _adjustment_bounds_check(locked, delta)
    before = {"meter": locked.meter}
    event = _write_single(locked, MeterEvent.Kind.ADJUSTMENT, abs(delta), delta, actor, reason)
    after = {"meter": locked.meter, "delta": delta, "seq": event.seq, "reason": reason}
    if asked is not None:
        after |= {"adjustment_request": asked.pk, "requested_by": asked.requested_by_name,
                  "approved_by": actor.name}
    audit_record(actor=actor, action="meter.adjusted", obj=locked, before=before, after=after,
                 request_id=request_id)
    return event


def _adjustment_bounds_check(pool: Pool, delta: Decimal) -> None:
    if pool.meter + delta < 0:
        raise MeterError(
            f"the adjustment would take the meter of {pool.code} from {pool.meter} "
            f"to {pool.meter + delta}; a meter never goes below zero.",
            field="delta",
        )
    if pool.meter + delta >= MONEY_LIMIT:
        raise MeterError(
            f"the adjustment would take the meter of {pool.code} to {pool.meter + delta}, "
            f"beyond what a meter holds ({MONEY_LIMIT:,}).",
            field="delta",
        )


# ---- dual control: a second supervisor for a large adjustment ------------------


class ApprovalError(ProgressiveError):
    """A decision on a request for a second supervisor (an adjustment, a pool version) the rules
    refuse (its own asker, already decided)."""

    def __init__(self, message: str, *, field: str = NON_FIELD, conflict: bool = False, code: str = ""):
        super().__init__(message, field=field)
        self.conflict = conflict  # decided already, or an approver tied to the asker: the API answers 409
        self.code = code  # trail.approvals.Refusal.code


def second_approval_needed(*, pool: Pool, delta: Decimal, actor: Actor | None = None) -> bool:
    """Whether ``delta`` is more than ``actor`` may move the meter of ``pool`` alone.

    The limit, ``METER_SECOND_APPROVAL_ABOVE`` in the pool's currency, holds
    for what one person moves alone over ``METER_SECOND_APPROVAL_WINDOW_HOURS``,
    not for one adjustment: ``delta`` is added to the person's adjustments on
    the pool in that window that no second person approved, each counted by
    its size whichever its sign, so neither twelve small steps nor a +60,000
    and a -60,000 pass under a limit of 100,000. Requests a second person
    decides (pending or approved) count nothing here: someone else looks at
    them. A currency the setting does not name needs a second supervisor for
    every adjustment: an amount nobody configured is no licence.
    """
    above = settings.METER_SECOND_APPROVAL_ABOVE.get(pool.currency)
    if above is None:
        return True
    return abs(delta) + moved_alone(pool=pool, actor=actor) > above


def moved_alone(*, pool: Pool, actor: Actor | None) -> Decimal:
    """What ``actor`` moved the meter of ``pool`` alone within the dual-control window, by size."""
    if actor is None or actor.user_id is None:
        return ZERO
    since = timezone.now() - timedelta(hours=settings.METER_SECOND_APPROVAL_WINDOW_HOURS)
    deltas = MeterEvent.objects.filter(
        pool=pool, kind=MeterEvent.Kind.ADJUSTMENT, actor_id=actor.user_id, approval__isnull=True,
        created_at__gte=since,
    ).values_list("delta", flat=True)
    return sum((abs(delta) for delta in deltas), ZERO)


def _adjustment_requested(pool: Pool, delta: Decimal, actor: Actor, reason: str,
                          request_id: str) -> MeterAdjustmentRequest:
    """The request for ``delta`` on ``pool`` (row-locked by the caller), for a second supervisor."""
    if _user_id(actor) is None:
        raise MeterError("an adjustment this large is asked for by a person, for another to approve.",
                         field="delta")
    # Refused now if it could never be applied; the approval checks again under the lock.
    _adjustment_bounds_check(pool, delta)
    alone = moved_alone(pool=pool, actor=actor)
    with transaction.atomic():
        asked = MeterAdjustmentRequest.objects.create(
            pool=pool, delta=delta, reason=reason, requested_by_id=_user_id(actor),
            requested_by_name=actor.name[:150], request_id=request_id,
        )
        audit_record(
            actor=actor, action="meter.adjustment_requested", obj=asked,
            after={"pool": pool.code, "delta": delta, "reason": reason,
                   "above": settings.METER_SECOND_APPROVAL_ABOVE.get(pool.currency),
                   "moved_alone": alone, "window_hours": settings.METER_SECOND_APPROVAL_WINDOW_HOURS},
            request_id=request_id,
        )
    return asked


def adjustment_approve(*, asked: MeterAdjustmentRequest, actor: Actor, request_id: str = "") -> MeterAdjustmentRequest:
    """A second supervisor's approval: the meter moves by the request's delta, now."""
    with transaction.atomic():
        pool = pool_lock(pool_id=asked.pool_id)
        locked = _request_locked(asked, actor, approving=True)
        event = _adjusted(pool, locked.delta, actor, locked.reason, request_id, asked=locked)
        decision_write(asked=locked, state=MeterAdjustmentRequest.State.APPROVED, actor=actor, event=event)
        audit_record(
            actor=actor, action="meter.adjustment_approved", obj=locked,
            after={"pool": pool.code, "delta": locked.delta, "seq": event.seq,
                   "requested_by": locked.requested_by_name, "approved_by": actor.name},
            request_id=request_id,
        )
    return locked


def adjustment_reject(*, asked: MeterAdjustmentRequest, actor: Actor, note: str,
                      request_id: str = "") -> MeterAdjustmentRequest:
    """A supervisor's refusal of a request (the asker's own, to withdraw it): the meter stays."""
    note = rejection_note(note, MeterError)
    with transaction.atomic():
        pool_lock(pool_id=asked.pool_id)
        locked = _request_locked(asked, actor, approving=False)
        rejection_write(locked=locked, actor=actor, note=note, action="meter.adjustment_rejected",
                        about={"pool": locked.pool.code, "delta": locked.delta}, request_id=request_id)
    return locked


# What each kind of request on a pool is called in a refusal.
_REQUEST_NAMES = {MeterAdjustmentRequest: "adjustment request", PoolVersionRequest: "pool version request"}


def _request_locked(asked: SecondApproval, actor: Actor, *, approving: bool) -> SecondApproval:
    """``asked`` (a request on a pool whose lock the caller holds) locked, once ``actor`` may decide it."""
    return pending_locked(type(asked).objects.select_related("pool"), asked=asked, actor=actor, approving=approving,
                          what=lambda r: f"{_REQUEST_NAMES[type(r)]} {r.pk}", refused=ApprovalError)


# ---- dual control: a second supervisor for a pool version ----------------------


def pool_version_approve(*, asked: PoolVersionRequest, actor: Actor, request_id: str = "") -> PoolVersionRequest:
    """A second supervisor's approval: the version is written, in force from
    max(the asked ``effective_from``, now), so that no round judged while the
    request waited is judged anew."""
    with transaction.atomic():
        pool = pool_lock(pool_id=asked.pool_id)
        locked = _request_locked(asked, actor, approving=True)
        effective_from = max(locked.effective_from, timezone.now())
        # Checked again: the rules, and the meter a ceiling must hold, may have changed since it was asked.
        numbers = pool_numbers_check(currency=pool.currency, minor_unit=pool.minor_unit, **locked.numbers)
        latest = _latest_checked(pool, effective_from, numbers)
        version = _pool_version_made(pool, latest, effective_from, numbers, locked.note, actor, request_id,
                                     asked=locked)
        decision_write(asked=locked, state=PoolVersionRequest.State.APPROVED, actor=actor, version=version)
        audit_record(
            actor=actor, action="pool.version_approved", obj=locked,
            after={"pool": pool.code, "version": version.version, "effective_from": version.effective_from,
                   "asked_from": locked.effective_from, "requested_by": locked.requested_by_name,
                   "approved_by": actor.name},
            request_id=request_id,
        )
    return locked


def pool_version_reject(*, asked: PoolVersionRequest, actor: Actor, note: str,
                        request_id: str = "") -> PoolVersionRequest:
    """A supervisor's refusal (the asker's own, to withdraw it): no version is made."""
    note = rejection_note(note, PoolConfigError)
    with transaction.atomic():
        pool_lock(pool_id=asked.pool_id)
        locked = _request_locked(asked, actor, approving=False)
        rejection_write(locked=locked, actor=actor, note=note, action="pool.version_rejected",
                        about={"pool": locked.pool.code}, request_id=request_id)
    return locked


def meter_transfer_overflow(
    *, pool: Pool, actor: Actor, reason: str, amount: Decimal | None = None, request_id: str = ""
) -> MeterEvent:
    """Move what the ceiling sent to overflow back into the meter, as far as the ceiling allows.

    Without ``amount``, as much as the overflow holds and the ceiling leaves room for.
    """
    reason = _reason_check(reason, "an overflow transfer")
    if amount is not None:
        amount = _amount_check(amount, pool, "amount", signed=False)
    with transaction.atomic():
        locked = pool_lock(pool_id=pool.pk)
        ceiling = pool_version_in_force(pool=locked, at=timezone.now()).ceiling
        room = locked.overflow if ceiling is None else max(ZERO, min(locked.overflow, ceiling - locked.meter))
        if amount is None:
            amount = room
        if amount <= 0:
            raise MeterError(
                f"nothing to transfer: the overflow holds {locked.overflow}"
                + ("" if ceiling is None else f" and the meter {locked.meter} of its ceiling {ceiling}")
                + ".",
                field="amount",
            )
        if amount > locked.overflow:
            raise MeterError(f"the overflow holds only {locked.overflow}.", field="amount")
        if amount > room:
            raise MeterError(
                f"the meter {locked.meter} can take only {room} more under its ceiling {ceiling}.",
                field="amount",
            )
        before = {"meter": locked.meter, "overflow": locked.overflow}
        event = _write_single(
            locked, MeterEvent.Kind.OVERFLOW_TRANSFER, amount, amount, actor, reason, overflow_delta=-amount
        )
        audit_record(
            actor=actor, action="meter.overflow_transferred", obj=locked, before=before,
            after={"meter": locked.meter, "overflow": locked.overflow, "seq": event.seq, "reason": reason},
            request_id=request_id,
        )
    return event


def _write_single(
    pool: Pool, kind: str, amount: Decimal, delta: Decimal, actor: Actor, reason: str,
    *, overflow_delta: Decimal = ZERO,
) -> MeterEvent:
    draft = LedgerDraft(pool)
    draft.add(kind, amount, delta=delta, overflow_delta=overflow_delta,
              actor_id=_user_id(actor), actor_name=actor.name, reason=reason)
    [event] = ledger_write(draft)
    return event


def _reason_check(reason: object, what: str) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise MeterError(f"{what} needs a reason.", field="reason")
    return reason.strip()


def _amount_check(value: object, pool: Pool, field: str, *, signed: bool) -> Decimal:
    amount = decimal_of(value)
    if amount is None:
        raise MeterError(f"{value!r} is not an amount: send a decimal string.", field=field)
    if not signed and amount < 0:
        raise MeterError("cannot be negative.", field=field)
    if abs(amount) >= MONEY_LIMIT:
        raise MeterError(f"must be below {MONEY_LIMIT:,} in size.", field=field)
    if amount % pool.minor_unit:
        raise MeterError(f"must be a whole number of the minor unit {pool.minor_unit}.", field=field)
    return amount.quantize(Decimal("0.01"))


# ---- meter readings ----------------------------------------------------------


def reading_record(
    *,
    displayed: Decimal,
    reported_at: datetime,
    reporter: Actor,
    pool: Pool | None = None,
    table=None,
    request_id: str = "",
) -> MeterReading:
    """Keep what a meter display showed, beside the service's meter as the reading arrives.

    A table may report only for the pool its configuration feeds (without
    ``pool``, that one). The reading is flagged when the two differ by more
    than the tolerance of the pool version in force when it was read.
    """
    if not isinstance(reported_at, datetime):
        raise ReadingError("a date and time with its time zone.", field="reported_at")
    reported_at = _aware(reported_at, error=ReadingError, field="reported_at")
    if reported_at > timezone.now() + READING_CLOCK_SKEW:
        raise ReadingError("is in the future: check the reporter's clock.", field="reported_at")
    if table is not None:
        # The table's configuration versions through the table itself: tables are rounds'.
        linked_id = in_force(((v, v.effective_from, v.version) for v in table.config.versions.all()),
                             reported_at).pool_id
        if pool is None:
            if linked_id is None:
                raise ReadingError(f"table {table.code} feeds no progressive pool.", field="pool")
            pool = Pool.objects.get(pk=linked_id)
        elif linked_id != pool.pk:
            raise NotLinkedError(f"table {table.code} does not feed pool {pool.code}.", field="pool")
    if pool is None:
        raise ReadingError("which pool's meter was read.", field="pool")
    amount = decimal_of(displayed)
    if amount is None or amount < 0:
        raise ReadingError(f"{displayed!r} is not an amount a meter can show.", field="displayed")
    if amount % pool.minor_unit or amount >= MONEY_LIMIT:
        raise ReadingError(f"a meter shows whole units of {pool.minor_unit}.", field="displayed")
    version = pool_version_in_force(pool=pool, at=reported_at)
    with transaction.atomic():
        # The committed meter, no lock: a reading must never hold up the tables' rounds.
        meter, seq = Pool.objects.filter(pk=pool.pk).values_list("meter", "last_event_seq").get()
        difference = amount - meter
        reading = MeterReading.objects.create(
            pool=pool, pool_version=version, table=table, reporter=reporter.name[:150],
            actor_id=_user_id(reporter), reported_at=reported_at, displayed=amount,
            service_meter=meter, meter_seq=seq, difference=difference,
            tolerance=version.reading_tolerance, flagged=abs(difference) > version.reading_tolerance,
            request_id=request_id,
        )
        audit_record(
            actor=reporter,
            action="meter.reading_flagged" if reading.flagged else "meter.reading_recorded",
            obj=reading,
            after={"pool": pool.code, "displayed": amount, "service_meter": meter, "meter_seq": seq,
                   "difference": difference, "tolerance": version.reading_tolerance},
            request_id=request_id,
        )
    return reading


# ---- small helpers -------------------------------------------------------------


def _user_id(actor: Actor) -> int | None:
    return int(actor.id) if actor.kind == "user" and actor.id else None


def _aware(moment: datetime, *, error=PoolConfigError, field: str = "effective_from") -> datetime:
    if timezone.is_naive(moment):
        raise error("a date and time needs its time zone.", field=field)
    return moment


def _is_slug(code: str) -> bool:
    return all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in code)

