"""A pool's meter over a report's range, read from the ledger events the range can hold, not from all of them.

Every ledger event belongs to one gaming day: a round's event (a
contribution, an award, a reseed after an award…) to its round's gaming day,
however late the round was stored; the opening reseed to the moment the
pool's books open (``progressive.selectors.books_opened``: the first moment
its terms are in force, if that is before it was recorded); any other event
a person made (an adjustment, an overflow transfer, the reversal of a round
voided after the fact) to the gaming day of the moment it was recorded. A day's
opening is every event of the days before it; its closing, the opening plus
its own events.

Summing the whole ledger each night grows with the history. So each report
keeps a **mark** of the ledger as it read it: the last event (``top``), how
many there were and their sum, and the first event of a day after the range
(``after_from``: no event of a later day comes before it). The next day's
report starts from the mark of the report that ended the day before:

- every event of its days or later is at or after ``after_from``, so it reads
  only the events from there (about a day or two of them), each classified
  by its day;
- its opening is the mark's closing plus the events of earlier days stored
  since the mark (a round stored late), which the ``continuity`` check names;
- the whole ledger's sum and count are the mark's plus the events since.

The mark is not taken on trust: the ``days`` check holds opening + range +
later days equal to the whole sum, and ``pool_row`` the whole sum equal to
the pool's meter, so a mark's closing or sum changed after the fact fails one
of them. The events before ``after_from`` are walked row by row in turn, one
segment a night (``ledger_turn``), as the audit chain's earlier segments are;
``verify_audit`` walks the whole ledger. With no mark (the first report, a
day without one, or one made before marks were kept) every event is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from django.db import DEFAULT_DB_ALIAS
from django.db.models import (
    BooleanField, Case, CharField, Count, F, Max, Min, OuterRef, Q, Subquery, Sum, Value, When,
)
from django.db.models.functions import Abs, Coalesce
from pydantic import ValidationError

from audit.models import ReconciliationReport
from books.report_figures import (
    PoolCheck, PoolFigures, PoolKindSums, PoolMark, PoolRead, PoolReadings, stored_name,
)
from progressive.models import MeterEvent, MeterReading, Pool
from progressive.selectors import METER_MOVES_OF_KIND, OPENING, books_opened, ledger_span_problems
from rounds.models import RoundKey

from .chain import segment_in_turn

ZERO = Decimal(0)
# Events of the ledger walked row by row each night, before where the night's reading starts.
TURN_SEGMENT = 100_000
CHART_POINTS = 200
# The kinds that always move the meter one way, as a multiple of their amount.
_SIGN_OF_KIND = {kind: moves[0] for kind, moves in METER_MOVES_OF_KIND.items() if len(moves) == 1}
_BEFORE, _WITHIN, _AFTER = "before", "within", "after"


@dataclass(frozen=True, slots=True)
class Mark:
    """Where a report left the pool's ledger: what the next day's report starts from."""

    day: date  # the report's last day
    report: int
    closing: Decimal
    closing_overflow: Decimal
    closing_reserve: Decimal
    top: int  # the last event it read
    n: int  # events up to ``top``
    total: Decimal  # their deltas added up
    after_from: int  # no event of a day after ``day`` comes before this one

    @classmethod
    def none(cls) -> Mark:
        """The ledger before its first event: reading from it reads everything."""
        return cls(date.min, 0, ZERO, ZERO, ZERO, 0, 0, ZERO, 1)


def pool_mark_reported(*, pool_code: str, day: date) -> tuple[dict | None, Mark | None]:
    """The closing the current report ending on ``day`` gave the pool, and its mark (None where it kept none)."""
    pools = stored_name("pools")
    report = (
        ReconciliationReport.objects.filter(
            status=ReconciliationReport.Status.COMPLETE, day_to=day, figures__has_key=stored_name("currencies"))
        .order_by("-finished_at").values("pk", f"figures__{pools}__{pool_code}").first()
    )
    stored = (report or {}).get(f"figures__{pools}__{pool_code}")
    if not stored:
        return None, None
    try:
        pool = PoolFigures.model_validate(stored)
    except ValidationError:
        # Not in its shape (edited since): every event is read, and continuity compares the
        # closing as it stands, which says what is wrong with it.
        closing = stored.get("closing") if isinstance(stored, dict) else None
        return {"day": str(day), "report": report["pk"], "closing": closing}, None
    closing = {"day": str(day), "report": report["pk"], "closing": str(pool.closing)}
    kept = pool.mark
    if kept is None:
        return closing, None  # a report made before marks were: every event is read
    mark = Mark(
        day=day, report=report["pk"], closing=pool.closing, closing_overflow=pool.closing_overflow,
        closing_reserve=pool.closing_reserve, top=kept.top, n=kept.n, total=kept.sum, after_from=kept.after_from,
    )
    return closing, mark


def _classified(
    events, *, day_from: date, day_to: date, start: datetime, end: datetime, opened: datetime | None, using: str,
):
    """``events`` each with the side of the range it falls on (``part``: before, within or after it);
    the pool's opening by when its books open (``opened``), not by when it was recorded."""
    of_a_round = Q(round__isnull=False) & ~Q(kind=MeterEvent.Kind.REVERSAL)
    day_of_round = RoundKey.objects.using(using).filter(pk=OuterRef("round_id")).values("gaming_day")[:1]
    opening = []
    if opened is not None:
        side = _BEFORE if opened < start else _WITHIN if opened < end else _AFTER
        opening = [When(OPENING, then=Value(side))]
    return events.annotate(round_day=Subquery(day_of_round)).annotate(part=Case(
        *opening,
        When(of_a_round & Q(round_day__lt=day_from), then=Value(_BEFORE)),
        When(of_a_round & Q(round_day__lte=day_to), then=Value(_WITHIN)),
        When(of_a_round, then=Value(_AFTER)),
        When(created_at__lt=start, then=Value(_BEFORE)),
        When(created_at__lt=end, then=Value(_WITHIN)),
        default=Value(_AFTER),
        output_field=CharField(),
    ))


@dataclass(slots=True)
class _Sums:
    n: int = 0
    meter: Decimal = ZERO
    overflow: Decimal = ZERO
    reserve: Decimal = ZERO

    def add(self, row: dict) -> None:
        self.n += row["n"]
        self.meter += row["delta"]
        self.overflow += row["overflow"]
        self.reserve += row["reserve"]


def _groups(events, *, mark: Mark, top: int, **window) -> list[dict]:
    """The events from the mark's ``after_from`` to ``top``, added up by side of the range, kind and
    whether the mark had read them: a few dozen rows, from one pass over about a day of events."""
    read = events.filter(seq__gte=mark.after_from, seq__lte=top)
    sums = {
        "n": Count("id"), "amount": Sum("amount"), "delta": Sum("delta"), "moved": Sum(Abs("delta")),
        "overflow": Sum("overflow_delta"), "reserve": Sum("reserve_delta"),
        "inflow": Coalesce(Sum("delta", filter=Q(delta__gt=0)), ZERO),
        "outflow": Coalesce(Sum(-F("delta"), filter=Q(delta__lt=0)), ZERO),
        "first": Min("seq"), "last": Max("seq"),
    }
    rows = (
        _classified(read, **window)
        .annotate(since=Case(When(seq__gt=mark.top, then=Value(True)), default=Value(False),
                             output_field=BooleanField()))
        .order_by().values("part", "kind", "since")
        # Named apart from the columns they add up: an aggregate named like a column hides it.
        .annotate(**{f"sum_{name}": total for name, total in sums.items()})
    )
    return [{key.removeprefix("sum_"): value for key, value in row.items()} for row in rows]


@dataclass(slots=True)
class _KindSums:
    """One kind's events within the range."""

    n: int = 0
    amount: Decimal = ZERO
    delta: Decimal = ZERO
    moved: Decimal = ZERO  # the deltas' sizes added up: an adjustment moves by its amount either way
    overflow: Decimal = ZERO
    reserve: Decimal = ZERO

    def add(self, row: dict) -> None:
        self.n += row["n"]
        self.amount += row["amount"]
        self.delta += row["delta"]
        self.moved += row["moved"]
        self.overflow += row["overflow"]
        self.reserve += row["reserve"]


@dataclass(slots=True)
class _Read:
    """The groups of ``_groups`` added up by where each falls against the range and the mark."""

    late: _Sums  # of the days before the range, stored since the mark
    within: _Sums
    after: _Sums
    since: _Sums  # every event after the mark's top
    by_kind: dict[str, _KindSums]  # within the range, by kind's name
    first: int | None = None  # the range's first and last event
    last: int | None = None
    after_first: int | None = None  # the first event of a day after the range
    inflow: Decimal = ZERO
    outflow: Decimal = ZERO


def _read(groups: list[dict]) -> _Read:
    read = _Read(late=_Sums(), within=_Sums(), after=_Sums(), since=_Sums(), by_kind={})
    for row in groups:
        if row["since"]:
            read.since.add(row)
        if row["part"] == _BEFORE and row["since"]:
            read.late.add(row)
        elif row["part"] == _AFTER:
            read.after.add(row)
            read.after_first = row["first"] if read.after_first is None else min(read.after_first, row["first"])
        elif row["part"] == _WITHIN:
            read.within.add(row)
            read.first = row["first"] if read.first is None else min(read.first, row["first"])
            read.last = row["last"] if read.last is None else max(read.last, row["last"])
            read.inflow += row["inflow"]
            read.outflow += row["outflow"]
            read.by_kind.setdefault(row["kind"], _KindSums()).add(row)
    read.by_kind = dict(sorted(read.by_kind.items()))
    return read


def _checked(name: str, problems: list[str]) -> PoolCheck:
    return PoolCheck(check=name, ok=not problems, problems=problems[:20])


def _kinds_check(by_kind: dict[str, _KindSums]) -> PoolCheck:
    """Each kind's meter moves against what its amounts say."""
    problems = []
    for kind, row in by_kind.items():
        sign = _SIGN_OF_KIND.get(kind)
        if sign is not None and row.delta != sign * row.amount:
            problems.append(f"{row.n} {kind} event(s) of {row.amount} moved the meter by {row.delta}")
        if kind == MeterEvent.Kind.ADJUSTMENT and row.moved != row.amount:
            problems.append(f"adjustments of {row.amount} moved the meter by {row.moved} in all")
        if sign is None and kind not in (MeterEvent.Kind.ADJUSTMENT, MeterEvent.Kind.REVERSAL):
            problems.append(f"{row.n} event(s) of an unknown kind {kind!r}")
    return _checked("kinds", problems)


def _ledger_check(*, pool: Pool, read: _Read, using: str) -> PoolCheck:
    """The range's events follow each other, row by row."""
    if read.first is None:
        return _checked("ledger", [])
    return _checked("ledger", ledger_span_problems(pool=pool, first=read.first, last=read.last, using=using))


def _running_meter_check(events, *, read: _Read, mark: Mark) -> PoolCheck:
    """The meter the range's last event stored against every delta up to it."""
    if read.last is None:
        return _checked("running_meter", [])
    stored = events.filter(seq=read.last).values_list("meter_after", flat=True).first()
    summed = mark.total + _delta_between(events, mark.top, read.last)
    return _checked("running_meter", [] if stored == summed else [
        f"event {read.last} says the meter stood at {stored}; the events up to it add up to {summed}"
    ])


def _pool_row_check(*, meter: Decimal, top: int, total: Decimal, n: int) -> PoolCheck:
    """The pool's meter and last event against its whole ledger."""
    problems = []
    if meter != total:
        problems.append(f"the pool's meter {meter} is not the sum of its ledger {total}")
    if n != top:
        problems.append(f"the pool says its last event is {top}; the ledger holds {n} event(s) up to it")
    return _checked("pool_row", problems)


def _days_check(*, opening: Decimal, read: _Read, total: Decimal, mark: Mark) -> PoolCheck:
    """The days before the range, the range and the days after it add up to the whole ledger."""
    split = opening + read.within.meter + read.after.meter
    return _checked("days", [] if split == total else [
        f"the days before the range ({opening}), the range ({read.within.meter}) and the days after it "
        f"({read.after.meter}) add up to {split}, the whole ledger to {total}"
        + (f": the report of {mark.day} (the ledger up to event {mark.top}) no longer agrees with it"
           if mark.report else "")
    ])


def _turn_check(*, pool: Pool, turn: tuple[int, int] | None, using: str) -> PoolCheck:
    """Tonight's segment of the ledger before where the night's read starts, row by row."""
    return _checked("ledger_turn", ledger_span_problems(pool=pool, first=turn[0], last=turn[1], using=using)
                    if turn else [])


def _continuity_check(reported_closing: dict | None, opening: Decimal) -> PoolCheck:
    """The opening against the closing the report of the day before said."""
    if reported_closing is None:
        return _checked("continuity", [])
    try:
        claimed = Decimal(str(reported_closing["closing"]))
    except ArithmeticError:
        claimed = None
    if claimed is None or not claimed.is_finite():
        return _checked("continuity", [f"the report of {reported_closing['day']} says it closed at "
                                       f"{reported_closing['closing']!r}, not an amount: its figures were changed"])
    if claimed == opening:
        return _checked("continuity", [])
    return _checked("continuity", [
        f"the report of {reported_closing['day']} closed at {claimed}; the days up to it now add up to "
        f"{opening} ({opening - claimed:+}): events of those days were recorded after it was made "
        "(a round stored late) or the ledger changed; reconcile them again"
    ])


def pool_ledger_figures(
    *, pool: Pool, day_from: date, day_to: date, start: datetime, end: datetime,
    reported_closing: dict | None = None, mark: Mark | None = None, turn_size: int = TURN_SEGMENT,
    using: str = DEFAULT_DB_ALIAS,
) -> PoolFigures:
    """The pool's meter over the range, and the checks that prove it.

    ``mark`` is where the report of the day before left the ledger (none: read
    it all); ``reported_closing`` what that report said the pool closed at.
    ``balanced`` holds only when every check passes, each comparing figures
    found two ways:

    - ``kinds``: each kind's meter moves against what its amounts say;
    - ``ledger``: the events from the range's first to its last follow each
      other, row by row (``progressive.selectors.ledger_span_problems``);
    - ``running_meter``: the meter the last of them stored against the sum
      of every delta up to it;
    - ``pool_row``: the pool's meter against the sum of its whole ledger;
    - ``days``: the days before the range, the range and the days after it
      against the whole ledger (they add up to it);
    - ``ledger_turn``: tonight's earlier segment of the ledger, row by row;
    - ``readings``: the meter the service told each table reporting a display
      reading against the ledger's meter at that point;
    - ``continuity``: the opening against the closing that the report of the
      day before said, which a round of an earlier day stored late, or a
      changed ledger, moves.
    """
    mark = mark or Mark.none()
    now = Pool.objects.using(using).filter(pk=pool.pk).values("meter", "last_event_seq").get()
    # Every event up to the pool's last one has been committed with it: the
    # reads below see the same ledger however many rounds are stored meanwhile.
    top = now["last_event_seq"]
    events = MeterEvent.objects.using(using).filter(pool=pool)
    window = {"day_from": day_from, "day_to": day_to, "start": start, "end": end,
              "opened": books_opened(pool=pool, using=using), "using": using}
    read = _read(_groups(events, mark=mark, top=top, **window))
    within = read.within

    opening = mark.closing + read.late.meter
    opening_overflow = mark.closing_overflow + read.late.overflow
    opening_reserve = mark.closing_reserve + read.late.reserve
    total, n = mark.total + read.since.meter, mark.n + read.since.n
    turn = segment_in_turn(last=mark.after_from - 1, size=turn_size, day=day_to)
    readings, reading_problems = _meter_readings(pool=pool, start=start, end=end, using=using)
    checks = [
        _kinds_check(read.by_kind),
        _ledger_check(pool=pool, read=read, using=using),
        _running_meter_check(events, read=read, mark=mark),
        _pool_row_check(meter=now["meter"], top=top, total=total, n=n),
        _days_check(opening=opening, read=read, total=total, mark=mark),
        _turn_check(pool=pool, turn=turn, using=using),
        _checked("readings", reading_problems),
        _continuity_check(reported_closing, opening),
    ]

    def kind_sum(kind: str, of: str = "amount") -> Decimal:
        return getattr(read.by_kind[kind], of) if kind in read.by_kind else ZERO

    return PoolFigures(
        pool=pool.code,
        currency=pool.currency,
        events=within.n,
        first_seq=read.first, last_seq=read.last,
        # Events of other days between the range's first and last (a late round, say).
        interleaved_events=(read.last - read.first + 1 - within.n) if read.first is not None else 0,
        events_after=read.after.n,
        opening=opening, opening_overflow=opening_overflow, opening_reserve=opening_reserve,
        contributions=kind_sum(MeterEvent.Kind.CONTRIBUTION),
        awards=kind_sum(MeterEvent.Kind.AWARD),
        fixed_awards=kind_sum(MeterEvent.Kind.FIXED_AWARD),
        reseeds=kind_sum(MeterEvent.Kind.RESEED),
        adjustments=kind_sum(MeterEvent.Kind.ADJUSTMENT, "delta"),
        reversals=kind_sum(MeterEvent.Kind.REVERSAL, "delta"),
        overflow=within.overflow,
        inflow=read.inflow, outflow=read.outflow,
        closing=opening + within.meter,
        closing_overflow=opening_overflow + within.overflow,
        closing_reserve=opening_reserve + within.reserve,
        by_kind={kind: PoolKindSums(events=row.n, amount=row.amount, delta=row.delta, overflow=row.overflow,
                                    reserve=row.reserve)
                 for kind, row in read.by_kind.items()},
        checks=checks,
        balanced=all(c.ok for c in checks),
        series=_series(_classified(events.filter(seq__gte=read.first or 0, seq__lte=read.last or 0), **window),
                       opening=opening, n=within.n),
        readings=readings,
        # What the next day's report starts from, and what this one read.
        mark=PoolMark(top=top, n=n, sum=total,
                      after_from=read.after_first if read.after_first is not None else top + 1),
        read=PoolRead(from_report=mark.report or None, events_from=mark.after_from,
                      turn=list(turn) if turn else None),
    )


def _delta_between(events, seq_a: int, seq_b: int) -> Decimal:
    """The deltas of events after ``seq_a`` up to ``seq_b`` (negated when ``seq_b`` comes first)."""
    low, high = sorted((seq_a, seq_b))
    moved = events.filter(seq__gt=low, seq__lte=high).aggregate(total=Coalesce(Sum("delta"), ZERO))["total"]
    return moved if seq_b >= seq_a else -moved


def _series(classified, *, opening: Decimal, n: int) -> list[tuple[str, Decimal]]:
    """The meter over the range for a chart: about ``CHART_POINTS`` of its events, wherever they fall."""
    step = max(1, n // CHART_POINTS)
    series = [("opening", opening)]
    running = opening
    rows = classified.filter(part=_WITHIN).order_by("seq").values_list("seq", "delta")
    for i, (seq, delta) in enumerate(rows.iterator(chunk_size=10_000)):
        running += delta
        if (i + 1) % step == 0 or i + 1 == n:
            series.append((str(seq), running))
    return series


def _meter_readings(
    *, pool: Pool, start: datetime, end: datetime, using: str = DEFAULT_DB_ALIAS,
) -> tuple[PoolReadings, list[str]]:
    """What the tables' meter displays said in the window, and whether the ledger still says
    what the service told them then (each reading keeps the meter and the event it stood at)."""
    rows = MeterReading.objects.using(using).filter(pool=pool, received_at__gte=start, received_at__lt=end)
    summary = rows.aggregate(n=Count("id"), flagged=Count("id", filter=Q(flagged=True)),
                             largest=Max(Abs("difference")))
    ledger = MeterEvent.objects.filter(pool=pool, seq=OuterRef("meter_seq")).order_by().values("meter_after")[:1]
    disagree = (
        rows.filter(meter_seq__gt=0).annotate(ledger=Subquery(ledger))
        .filter(Q(ledger__isnull=True) | ~Q(ledger=F("service_meter"))).order_by("received_at")
        .values_list("pk", "meter_seq", "service_meter", "ledger")[:20]
    )
    problems = [
        f"reading {pk} was told the meter stood at {told} after event {seq}; "
        + (f"the ledger now says {now}" if now is not None else "the ledger has no such event")
        for pk, seq, told, now in disagree
    ]
    return PoolReadings(readings=summary["n"], flagged=summary["flagged"],
                        largest_difference=summary["largest"]), problems
