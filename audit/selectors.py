"""Reads of the audit log, and the walk that proves the chain unbroken."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from django.db.models import Count, DateField, F, OuterRef, Q, Subquery
from django.db.models.functions import TruncWeek
from django.utils import timezone

from progressive.models import MeterEvent, Pool
from rounds.engine.findings import PAYOUT_MISMATCH
from rounds.models import Finding
from rounds.selectors import OVERPAID, UNDERPAID

from .chain import GENESIS, HASHED_FIELDS, event_hash
from .models import AuditEvent, ChainHead, ReconciliationReport, ReportBand


@dataclass(frozen=True, slots=True)
class ChainBreak:
    seq: int
    problem: str


@dataclass(frozen=True, slots=True)
class ChainVerification:
    ok: bool
    checked: int
    last_seq: int
    last_hash: str
    break_seq: int | None = None  # the first break's, as ``breaks[0]``
    problem: str = ""
    breaks: tuple[ChainBreak, ...] = ()
    walked_from: int = 1  # the first event read whole; those before it were held to their anchors


def anchor_latest(anchors: Sequence[tuple[int, str]]) -> tuple[int, str] | None:
    """The anchor a walk may start from: the latest one, or none."""
    return max(anchors, default=None)


def audit_chain_verify(
    *, batch_size: int = 5000, anchor: tuple[int, str] | None = None,
    anchors: Sequence[tuple[int, str]] = (), since: tuple[int, str] | None = None,
) -> ChainVerification:
    """Walk every event in order; report every one that does not follow from the one before.

    An edited event no longer matches its hash; a deleted one leaves a gap in
    ``seq`` and a ``prev_hash`` that points at nothing; a reordered one points
    at the wrong predecessor. The walk goes on past a break, each event held
    to the one stored before it, so one run names every damaged place, not
    only the first. Memory stays flat: events stream in batches.

    A chain rehashed from an edited event follows from itself again; what
    catches it is an anchor, an event's (seq, hash) kept outside the
    database when it was written: each of ``anchors`` (and ``anchor``) must
    still be in the chain with that hash.

    ``since``, one of those anchors, starts the walk after its event: every
    event before it is held to its anchors only (one look-up), so the walk's
    cost follows what was written since. Whoever rewrites an event before it
    and every hash after is still caught (the anchored event no longer has its
    hash); an edit that leaves the hashes as they were is found only by the
    walk from the first event, which the nightly report does one segment at a
    time (``audit.reconciliation.chain``) and ``verify_audit --full`` at once.
    """
    held = dict(anchors)
    if anchor is not None:
        held[anchor[0]] = anchor[1]
    # The head is read first: events written while the walk runs lie beyond it
    # and are left for the next walk, so a busy service never looks broken.
    head = ChainHead.objects.filter(pk=1).first()
    events = AuditEvent.objects.order_by("seq")
    if head is not None:
        events = events.filter(seq__lte=head.seq)
    breaks: list[ChainBreak] = []
    expected_seq, prev_hash, checked = 1, GENESIS, 0
    if since is not None:
        held[since[0]] = since[1]
    if since is not None and head is not None and since[0] > head.seq:
        # Anchored beyond the head: said below as events removed from the end; walk from the one before.
        since = anchor_latest([(seq, digest) for seq, digest in held.items() if seq <= head.seq])
    if since is not None:
        breaks += anchors_not_held({seq: digest for seq, digest in held.items() if seq <= since[0]})
        # From the anchor's own hash: a chain rewritten from before it does not follow it.
        expected_seq, prev_hash = since[0] + 1, since[1]
        events = events.filter(seq__gt=since[0])
    for row in events.values_list(*HASHED_FIELDS, "hash").iterator(chunk_size=batch_size):
        fields = dict(zip(HASHED_FIELDS, row[:-1]))
        stored_hash = row[-1]
        seq = fields["seq"]
        if seq != expected_seq:
            gone = f"event {expected_seq}" if seq == expected_seq + 1 else f"events {expected_seq} to {seq - 1}"
            breaks.append(ChainBreak(expected_seq, f"{gone} {'is' if seq == expected_seq + 1 else 'are'} missing"))
        elif fields["prev_hash"] != prev_hash:
            breaks.append(ChainBreak(seq, f"event {seq} does not follow event {seq - 1}"))
        if event_hash(fields) != stored_hash:
            breaks.append(ChainBreak(seq, f"event {seq} was changed after it was written"))
        if seq in held and stored_hash != held[seq]:
            breaks.append(anchor_broken(seq))
        prev_hash, expected_seq, checked = stored_hash, seq + 1, checked + 1
    last_seq = expected_seq - 1
    for seq in sorted(s for s in held if s > last_seq):
        breaks.append(ChainBreak(
            last_seq + 1, f"the chain ends at event {last_seq}, before the anchored event {seq}: events were removed"))
    if head is not None and (head.seq, head.hash) != (last_seq, prev_hash):
        breaks.append(ChainBreak(
            last_seq + 1,
            f"the chain ends at event {last_seq} but its head says {head.seq}: events were removed from the end",
        ))
    walked_from = since[0] + 1 if since is not None else 1
    if not breaks:
        return ChainVerification(True, checked, last_seq, prev_hash, walked_from=walked_from)
    first = breaks[0]
    return ChainVerification(False, checked, last_seq, prev_hash, first.seq, first.problem, tuple(breaks),
                             walked_from)


def anchors_not_held(held: dict[int, str]) -> list[ChainBreak]:
    """Each anchored event that is gone or no longer has its anchored hash (one look-up by ``seq``)."""
    found = dict(AuditEvent.objects.filter(seq__in=list(held)).values_list("seq", "hash"))
    breaks = []
    for seq in sorted(held):
        if seq not in found:
            breaks.append(ChainBreak(seq, f"event {seq}, anchored outside, is missing: events were removed"))
        elif found[seq] != held[seq]:
            breaks.append(anchor_broken(seq))
    return breaks


def anchor_broken(seq: int) -> ChainBreak:
    return ChainBreak(seq, f"event {seq} is not the one anchored outside: the chain was written again from there")


# ---- series for the staff pages' charts ------------------------------------------------------
# Each reads what a chart needs in one bounded query (or three, for a meter), never a day's rounds.

BAND_PERIODS = ("day", "month_to_date", "year_to_date")


@dataclass(frozen=True, slots=True)
class BandSeries:
    """Groups' total bands over days, from the days' current single-day reports.

    ``bands[(period, key, currency)][day]`` is the band the report of ``day``
    stored for the group: of the day itself, or of its month or year to that
    day (``BAND_PERIODS``); a day without a current report has none.
    """

    days: list[date]
    reports: dict[date, int]
    bands: dict[tuple[str, str, str], dict[date, dict]]


def report_band_series(
    *, scope: str, groups: Sequence[tuple[str, str]], day_to: date, days: int = 30,
) -> BandSeries:
    """The day's, month-to-date's and year-to-date's total band of each ``(key, currency)`` of
    ``scope`` ("tables" or "dealers"), for the ``days`` days up to ``day_to`` and from the 1st of
    ``day_to``'s month at least: two reads by index, the days' current reports and their bands
    (``ReportBand``), never the reports' figures."""
    first = min(day_to - timedelta(days=days - 1), day_to.replace(day=1))
    current = {"report__status": ReconciliationReport.Status.COMPLETE, "day__gte": first, "day__lte": day_to}
    by_day = dict(
        ReconciliationReport.objects.filter(
            status=ReconciliationReport.Status.COMPLETE, day_from=F("day_to"),
            day_from__gte=first, day_from__lte=day_to,
        ).order_by("day_from").values_list("day_from", "pk")
    )
    found: dict[tuple[str, str, str], dict[date, dict]] = {
        (period, key, currency): {} for key, currency in groups for period in BAND_PERIODS}
    if groups:
        wanted = Q()
        for key, currency in groups:
            wanted |= Q(key=key, currency=currency)
        rows = ReportBand.objects.filter(wanted, scope=scope, **current).values_list(
            "period", "key", "currency", "day", "band")
        for period, key, currency, day, band in rows:
            if (period, key, currency) in found:
                found[period, key, currency][day] = band
    every_day = [first + timedelta(days=i) for i in range((day_to - first).days + 1)]
    return BandSeries(days=every_day, reports=by_day, bands=found)


@dataclass(frozen=True, slots=True)
class DealerWeek:
    dealer: str
    week: date  # the Monday its ISO week starts on
    mismatches: int
    overpaid: int  # of them, claimed more than due
    underpaid: int


# A finding is written when its round is stored, which is no earlier than the round was dealt
# less a table clock's lead: a day's slack lets the (code, created_at) index bound the read.
FINDING_LEAD = timedelta(days=2)


def dealer_mismatches_by_week(*, day_to: date, weeks: int = 8) -> list[DealerWeek]:
    """Payout mismatches (never the informational findings) per dealer per ISO week, for the
    ``weeks`` weeks that end with ``day_to``'s, by the rounds' gaming days: one grouped query."""
    first = day_to - timedelta(days=day_to.weekday()) - timedelta(weeks=weeks - 1)
    rows = (
        Finding.objects.filter(
            code=PAYOUT_MISMATCH, informational=False,
            created_at__gte=datetime.combine(first, datetime.min.time(), tzinfo=UTC) - FINDING_LEAD,
            round__gaming_day__gte=first, round__gaming_day__lte=day_to,
        )
        .annotate(week=TruncWeek("round__gaming_day", output_field=DateField()))
        .values("round__dealer", "week").order_by()
        .annotate(
            n=Count("id"),
            over=Count("id", filter=OVERPAID),
            under=Count("id", filter=UNDERPAID),
        )
    )
    return sorted(
        (DealerWeek(dealer=row["round__dealer"] or "(none)", week=_as_date(row["week"]),
                    mismatches=row["n"], overpaid=row["over"], underpaid=row["under"]) for row in rows),
        key=lambda w: (w.dealer, w.week),
    )


def _as_date(value) -> date:
    return value.date() if isinstance(value, datetime) else value


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
