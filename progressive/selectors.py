"""Reads of pools, their ledgers, hits and readings, and the walk that proves a ledger."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import NamedTuple

from django.db import DEFAULT_DB_ALIAS
from django.db.models import (
    Count, Exists, F, FilteredRelation, Min, OuterRef, Prefetch, Q, QuerySet, Subquery, Sum,
)
from django.db.models.functions import Coalesce, Least
from django.utils import timezone

from game.versions import in_force
from game.vocabulary import METER_MOVES
from infra.models import ZERO

from .models import MeterAdjustmentRequest, MeterEvent, MeterReading, Pool, PoolVersion, PoolVersionRequest

# A hit is a seat paid by the pool's pay table; the reseed that follows a
# 100 % award is listed with it so the history shows the meter restarting.
HIT_KINDS = (MeterEvent.Kind.AWARD, MeterEvent.Kind.FIXED_AWARD)
HISTORY_KINDS = (*HIT_KINDS, MeterEvent.Kind.RESEED)
# The least a controller must keep at hand (New York asks for the last 25 hits).
HIT_HISTORY_MINIMUM = 25


def pool_list() -> QuerySet[Pool]:
    """Pools with their versions at hand (``pool_version_current`` reads them without a query)."""
    return Pool.objects.prefetch_related(
        Prefetch("versions", queryset=PoolVersion.objects.order_by("-effective_from", "-version"))
    )


def pool_version_request_list() -> QuerySet[PoolVersionRequest]:
    """Pool version requests with their pool and, once approved, the version written."""
    return PoolVersionRequest.objects.select_related("pool", "version__pool")


def adjustment_request_list() -> QuerySet[MeterAdjustmentRequest]:
    """Adjustment requests with their pool and, once approved, the event that moved the meter."""
    return MeterAdjustmentRequest.objects.select_related("pool", "event__pool", "event__round__table")


def pool_version_in_force(*, pool: Pool, at: datetime) -> PoolVersion:
    """The version of ``pool`` that judges a round dealt at ``at`` (``game.versions.in_force``)."""
    versions = list(PoolVersion.objects.filter(pool=pool).select_related("pool"))
    if not versions:
        raise PoolVersion.DoesNotExist(f"pool {pool.code} has no version")
    return in_force(((v, v.effective_from, v.version) for v in versions), at)


def pool_version_current(*, pool: Pool, at: datetime | None = None) -> PoolVersion | None:
    """The version in force at ``at`` (now), from the prefetched versions of ``pool_list``."""
    versions = list(pool.versions.all())
    if not versions:
        return None
    return in_force(((v, v.effective_from, v.version) for v in versions), at or timezone.now())


# A pool's opening: the first event of its ledger, the reseed its creation wrote.
OPENING = Q(seq=1, round__isnull=True, kind=MeterEvent.Kind.RESEED)


def openings(using: str = DEFAULT_DB_ALIAS) -> QuerySet[MeterEvent]:
    """Each pool's opening (``OPENING``), with ``books_open``: the moment its pool's books open.

    That is the earlier of the moment the opening was recorded and the first
    moment any of the pool's versions is in force. The opening belongs there,
    not to the moment it was recorded: a pool whose terms are in force from an
    earlier day (the shipped pool's from 2000, one created with its terms dated
    back) held its opening from that day, before the rounds dealt since that
    fed it, not after them.
    """
    terms = (PoolVersion.objects.using(using).filter(pool=OuterRef("pool_id")).order_by()
             .values("pool_id").annotate(at=Min("effective_from")).values("at")[:1])
    return MeterEvent.objects.using(using).filter(OPENING).annotate(
        books_open=Least("created_at", Coalesce(Subquery(terms), "created_at")))


def books_opened(*, pool: Pool, using: str = DEFAULT_DB_ALIAS) -> datetime | None:
    """When ``pool``'s books open (``openings``); None if it has no opening."""
    return openings(using).filter(pool=pool).values_list("books_open", flat=True).first()


def pool_version_list() -> QuerySet[PoolVersion]:
    return PoolVersion.objects.select_related("pool", "created_by").order_by("pool__code", "-version")


def meter_event_list() -> QuerySet[MeterEvent]:
    """The ledger of every pool, with the round (and its table) each event belongs to."""
    return MeterEvent.objects.select_related("pool", "round__table")


def pool_hit_history(*, pool: Pool | None = None, include_reseeds: bool = True) -> QuerySet[MeterEvent]:
    """Awards and fixed awards (and the reseeds they caused), newest first, with round, seat and hand.

    Nothing is ever pruned, so the history reaches back far beyond the last
    ``HIT_HISTORY_MINIMUM`` hits.
    """
    # The seat's hand through the event's round and its seats (rounds stand above this app).
    seat_of_event = FilteredRelation("round__seats", condition=Q(round__seats__seat=F("seat")))
    # A voided round's events are reversed, never removed: its hits stay, marked.
    reversed_ = MeterEvent.objects.filter(round=OuterRef("round"), kind=MeterEvent.Kind.REVERSAL)
    events = (
        meter_event_list()
        .filter(kind__in=HISTORY_KINDS if include_reseeds else HIT_KINDS, round__isnull=False)
        .annotate(seat_of_event=seat_of_event)
        .annotate(hand=F("seat_of_event__hand"), reversed=Exists(reversed_))
        .order_by("-id")
    )
    return events.filter(pool=pool) if pool is not None else events


def meter_reading_list() -> QuerySet[MeterReading]:
    return MeterReading.objects.select_related("pool", "table", "pool_version").order_by("-received_at", "-id")


# ---- proving a ledger ------------------------------------------------------------

# The meter moves a kind may make (one table, the engine's, for the writer and this check).
METER_MOVES_OF_KIND = METER_MOVES


@dataclass(frozen=True, slots=True)
class LedgerCheck:
    ok: bool
    pool: str
    events: int  # rows walked before the first problem (all of them when ok)
    meter: Decimal  # the pool's meter
    delta_sum: Decimal  # the sum of every event's delta
    seq: int | None = None  # the first event that does not follow (None when ok or at the end)
    problem: str = ""


class _Row(NamedTuple):
    seq: int
    kind: str
    amount: Decimal
    delta: Decimal
    meter_after: Decimal
    overflow_delta: Decimal
    overflow_after: Decimal
    reserve_delta: Decimal
    reserve_after: Decimal


def pool_ledger_check(*, pool: Pool, batch_size: int = 5000) -> LedgerCheck:
    """Prove the ledger: seq runs 1..n, each row follows from the one before, the pool matches.

    Each row's ``meter_after`` must be the previous row's plus its ``delta``
    (and likewise overflow and reserve), its ``delta`` what its kind and
    amount say, and the pool's meter the sum of every delta. The first row
    that breaks any of it is reported.
    """
    pool = Pool.objects.get(pk=pool.pk)  # fresh: the caller's copy may be stale
    delta_sum = MeterEvent.objects.filter(pool=pool).aggregate(total=Sum("delta"))["total"] or ZERO

    def broken(walked: int, seq: int | None, problem: str) -> LedgerCheck:
        return LedgerCheck(False, pool.code, walked, pool.meter, delta_sum, seq, problem)

    rows = MeterEvent.objects.filter(pool=pool).order_by("seq").values_list(*_Row._fields)
    meter = overflow = reserve = ZERO
    walked = 0
    for values in rows.iterator(chunk_size=batch_size):
        row = _Row(*values)
        if row.seq != walked + 1:
            return broken(walked, walked + 1, f"event {walked + 1} is missing (the next is {row.seq})")
        problem = _row_problem(row, meter, overflow, reserve)
        if problem:
            return broken(walked, row.seq, f"event {row.seq}{problem}")
        meter, overflow, reserve = row.meter_after, row.overflow_after, row.reserve_after
        walked += 1
    if pool.last_event_seq != walked:
        return broken(walked, None, f"the ledger ends at event {walked} but the pool says {pool.last_event_seq}")
    if pool.meter != delta_sum:
        return broken(walked, None, f"the meter {pool.meter} is not the sum of its events {delta_sum}")
    if (pool.meter, pool.overflow, pool.reserve) != (meter, overflow, reserve):
        return broken(
            walked, None,
            f"the pool shows meter/overflow/reserve {pool.meter}/{pool.overflow}/{pool.reserve}, "
            f"its ledger ends at {meter}/{overflow}/{reserve}",
        )
    return LedgerCheck(True, pool.code, walked, pool.meter, delta_sum)


_AFTER = ("meter_after", "overflow_after", "reserve_after")


def ledger_positions() -> dict[str, dict]:
    """Where each pool's ledger stands: its last event and the meter, overflow and reserve after it.

    Kept in the chain with each anchor (``audit.anchors``), so that a later
    proof walks the ledger from there (``pool_ledger_check_since``) instead of
    from its first event.
    """
    last = MeterEvent.objects.filter(pool=OuterRef("pk"), seq=OuterRef("last_event_seq"))
    rows = Pool.objects.order_by("code").values("code", "last_event_seq").annotate(
        **{name: Subquery(last.values(name)[:1]) for name in _AFTER})
    return {
        row["code"]: {"seq": row["last_event_seq"],
                      **{name: str(row[name]) if row[name] is not None else None for name in _AFTER}}
        for row in rows
    }


def pool_ledger_check_since(*, pool: Pool, position: dict | None) -> LedgerCheck:
    """``pool_ledger_check`` from ``position`` (``ledger_positions``' entry kept with an anchor) on:
    the event there still says what was kept, and every event after it follows the one before.

    The events before it were proved when they were walked (each night's report
    walks the ledger a segment at a time; ``verify_audit --full`` all of it).
    Without a position, the whole ledger is walked.
    """
    try:
        kept = int(position["seq"])
        wanted = [str(position[name]) for name in _AFTER]
    except (KeyError, TypeError, ValueError):
        kept = 0  # none kept, or not in the shape kept: the chain walk names an edited event
    if kept <= 0:
        return pool_ledger_check(pool=pool)
    pool = Pool.objects.get(pk=pool.pk)
    events = MeterEvent.objects.filter(pool=pool)
    since = events.filter(seq__gt=kept).aggregate(n=Count("id"), total=Sum("delta"))

    def broken(seq: int | None, problem: str) -> LedgerCheck:
        return LedgerCheck(False, pool.code, since["n"], pool.meter, since["total"] or ZERO, seq, problem)

    stored = events.filter(seq=kept).values_list(*_AFTER).first()
    if stored is None:
        return broken(kept, f"event {kept}, kept with the anchor, is missing")
    if [str(value) for value in stored] != wanted:
        return broken(kept, f"event {kept} says meter/overflow/reserve {'/'.join(map(str, stored))}; the anchor "
                            f"kept {'/'.join(wanted)}: the ledger was changed")
    if pool.last_event_seq < kept:
        return broken(None, f"the pool says its last event is {pool.last_event_seq}, before event {kept} "
                            "kept with the anchor: events were removed")
    problems = ledger_span_problems(pool=pool, first=kept + 1, last=pool.last_event_seq, limit=1)
    if problems:
        return broken(None, problems[0])
    beyond = events.filter(seq__gt=pool.last_event_seq).order_by("seq").values_list("seq", flat=True).first()
    if beyond is not None:
        return broken(beyond, f"the ledger goes on to event {beyond} but the pool says {pool.last_event_seq}")
    last = events.filter(seq=pool.last_event_seq).values_list(*_AFTER).first()
    if (pool.meter, pool.overflow, pool.reserve) != tuple(last):
        return broken(None, f"the pool shows meter/overflow/reserve {pool.meter}/{pool.overflow}/{pool.reserve}, "
                            f"its ledger ends at {'/'.join(map(str, last))}")
    return LedgerCheck(True, pool.code, since["n"], pool.meter, since["total"] or ZERO)


def ledger_span_problems(
    *, pool: Pool, first: int, last: int, limit: int = 20, using: str = DEFAULT_DB_ALIAS,
) -> list[str]:
    """What is wrong with events ``first..last`` of ``pool``'s ledger (at most ``limit``; [] if nothing).

    The same row rules as ``pool_ledger_check``, walked from the event before
    ``first`` as it is stored: a part of the ledger proved without reading all of it.
    """
    events = MeterEvent.objects.using(using).filter(pool=pool)
    meter = overflow = reserve = ZERO
    if first > 1:
        before = events.filter(seq=first - 1).values_list("meter_after", "overflow_after", "reserve_after").first()
        if before is None:
            return [f"event {first - 1} is missing"]
        meter, overflow, reserve = before
    problems: list[str] = []
    expected = first
    rows = events.filter(seq__gte=first, seq__lte=last).order_by("seq").values_list(*_Row._fields)
    for values in rows.iterator(chunk_size=5000):
        row = _Row(*values)
        if row.seq != expected:
            problems.append(f"events {expected}..{row.seq - 1} are missing")
        problem = _row_problem(row, meter, overflow, reserve)
        if problem:
            problems.append(f"event {row.seq}{problem}")
        if len(problems) >= limit:
            return problems
        meter, overflow, reserve = row.meter_after, row.overflow_after, row.reserve_after
        expected = row.seq + 1
    if expected <= last:
        problems.append(f"events {expected}..{last} are missing")
    return problems


def _row_problem(row: _Row, meter: Decimal, overflow: Decimal, reserve: Decimal) -> str:
    """What is wrong with ``row`` after a ledger standing at meter/overflow/reserve ("" if nothing)."""
    signs = METER_MOVES_OF_KIND.get(row.kind)
    if signs is None:
        return f" has an unknown kind {row.kind!r}"
    if all(row.delta != sign * row.amount for sign in signs) or (
        row.kind == MeterEvent.Kind.ADJUSTMENT and not row.delta
    ):
        return f" ({row.kind} {row.amount}) moves the meter by {row.delta}"
    if row.kind == MeterEvent.Kind.OVERFLOW_TRANSFER and row.overflow_delta != -row.amount:
        return f" transfers {row.amount} but moves the overflow by {row.overflow_delta}"
    if row.meter_after != meter + row.delta:
        return f": meter {meter} + {row.delta} is not its meter_after {row.meter_after}"
    if row.overflow_after != overflow + row.overflow_delta:
        return f": overflow {overflow} + {row.overflow_delta} is not {row.overflow_after}"
    if row.reserve_after != reserve + row.reserve_delta:
        return f": reserve {reserve} + {row.reserve_delta} is not {row.reserve_after}"
    if row.meter_after < 0:
        return " takes the meter below zero"
    return ""


# ---- the pool page's meter chart ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MeterMoment:
    seq: int
    at: datetime
    meter: Decimal  # after the event
    kind: str = ""
    amount: Decimal | None = None
    before: Decimal | None = None  # the meter just before the event
    round: str = ""  # "table/round id" of a round's event


@dataclass(frozen=True, slots=True)
class MeterHistory:
    points: list[MeterMoment]  # the meter, sampled evenly over the window's events
    hits: list[MeterMoment]  # the window's awards, fixed awards and reseeds (the last ``hits``)
    first_seq: int
    last_seq: int
    since: datetime | None  # the window's start; None: the pool was quiet, these are its last events


def pool_meter_history(
    *, pool: Pool, days: int = 30, points: int = 240, hits: int = 100, now: datetime | None = None,
) -> MeterHistory:
    """A pool's meter over its last ``days`` days from its ledger, in three indexed reads.

    The window's first event is found through the (pool, kind, created_at)
    index, kind by kind; the meter at about ``points`` events spread evenly
    over the window by seq, then the window's last ``hits`` awards and
    reseeds. A quiet pool shows its last ``points`` events instead.
    """
    Kind = MeterEvent.Kind
    since = (now or timezone.now()) - timedelta(days=days)
    firsts = {
        f"first_{kind}": Subquery(
            MeterEvent.objects.filter(pool_id=OuterRef("pk"), kind=kind, created_at__gte=since)
            .order_by("created_at").values("seq")[:1]
        )
        for kind in Kind.values
    }
    row = Pool.objects.filter(pk=pool.pk).values("last_event_seq", **firsts).first() or {}
    last = row.get("last_event_seq") or 0
    starts = [row[f"first_{kind}"] for kind in Kind.values if row.get(f"first_{kind}")]
    first = min(starts) if starts else max(1, last - points + 1)
    if last == 0:
        return MeterHistory(points=[], hits=[], first_seq=0, last_seq=0, since=since)
    span = last - first + 1
    step = max(1, span // points)
    seqs = set(range(first, last + 1, step)) | {first, last}
    events = MeterEvent.objects.filter(pool=pool)
    # The hits through the (pool, kind, created_at) index: a few rows, not the window's every event.
    in_window = {"created_at__gte": since} if starts else {"seq__gte": first}
    found = list(
        events.filter(kind__in=(Kind.AWARD, Kind.FIXED_AWARD, Kind.RESEED), **in_window)
        .order_by("-seq").values("seq", "created_at", "meter_after", "delta", "kind", "amount",
                                 "round__round_id", "round__table__code")[:hits]
    )
    marks = [
        MeterMoment(seq=e["seq"], at=e["created_at"], meter=e["meter_after"], kind=e["kind"], amount=e["amount"],
                    before=e["meter_after"] - e["delta"],
                    round=f"{e['round__table__code']}/{e['round__round_id']}" if e["round__round_id"] else "")
        for e in reversed(found)
    ]
    line = {
        e["seq"]: MeterMoment(seq=e["seq"], at=e["created_at"], meter=e["meter_after"])
        for e in events.filter(seq__in=sorted(seqs - {m.seq for m in marks})).values("seq", "created_at", "meter_after")
    }
    for mark in marks:  # the line passes through each hit: up to the meter it was paid from, then down
        line[mark.seq] = mark
    return MeterHistory(points=[line[s] for s in sorted(line)], hits=marks, first_seq=first, last_seq=last,
                        since=since if starts else None)
