"""Reads for reconciliation: grouped sums in the database, rounds streamed for re-verification.

Every sum is a SQL ``SUM``/``COUNT`` … ``GROUP BY`` over one table's rounds of
the range (the players' over every table's); the rounds themselves are only
ever streamed through server-side cursors, so memory does not grow with the
number of rounds.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.db import connection, transaction
from django.db.models import (
    BooleanField, Case, CharField, Count, F, Max, Min, Q, QuerySet, Sum, Value, When,
)
from django.db.models.functions import Coalesce, ExtractHour, ExtractMinute

from audit.models import AuditEvent, ReconciliationReport
from audit.shifts import range_window, shift_minute_ranges
from audit.statistics import trips_math
from casino.jsons import read_json
from progressive.models import MeterEvent, Pool
from rounds.engine.findings import PAYOUT_MISMATCH
from rounds.engine.record import Amounts
from rounds.models import Finding, Round, Seat, Table, TableConfigVersion

from .config import ReconciliationSettings, engine_version
from .figures import BETS, Sums, Theory

ZERO = Decimal(0)
STREAM_CHUNK = 2000
FETCH_AHEAD = 500  # rows a fetch while re-verifying: the first wait of a table is short
NO_DEALER = "(none)"
# A round is void when the table reported it void, or when a supervisor voided
# it after the fact (its status says so; its record still shows what was dealt).
VOID = Q(void=True) | Q(status=Round.Status.VOID)
VOIDED_LATER = "voided_at" in {f.name for f in Round._meta.get_fields()}


def rounds_in_range(*, day_from: date, day_to: date) -> QuerySet[Round]:
    return Round.objects.filter(gaming_day__gte=day_from, gaming_day__lte=day_to)


def window_of(*, day_from: date, day_to: date, clock: ReconciliationSettings) -> tuple[datetime, datetime]:
    return range_window(day_from, day_to, time_zone=clock.time_zone, cutoff_hour=clock.cutoff_hour)


def shift_expression(*, dealt_at: str, clock: ReconciliationSettings):
    """The local minute of the day of ``dealt_at`` and the shift it names, as SQL expressions.

    The shift's ``Case`` reads the minute as ``_minute``: annotate that first.
    """
    zone = ZoneInfo(clock.time_zone)
    minute = ExtractHour(dealt_at, tzinfo=zone) * 60 + ExtractMinute(dealt_at, tzinfo=zone)
    whens = [
        When(Q(_minute__gte=low, _minute__lt=high), then=Value(shift.name))
        for shift, low, high in shift_minute_ranges(clock.shifts)
    ]
    return minute, Case(*whens, default=Value(clock.shifts[-1].name), output_field=CharField())


def _with_shift(queryset: QuerySet, *, dealt_at: str, clock: ReconciliationSettings) -> QuerySet:
    minute, shift = shift_expression(dealt_at=dealt_at, clock=clock)
    return queryset.annotate(_minute=minute).annotate(shift=shift)


# ---- what a report was computed from ------------------------------------------


def report_inputs(*, day_from: date, day_to: date, clock: ReconciliationSettings) -> dict:
    """The engine, clock, parameters and a fingerprint of the range's data.

    Two runs with equal inputs compute equal figures, which is what lets a
    rerun resume an unfinished report instead of starting again. (The
    configuration and pool versions the rounds were judged by are part of
    the rounds; the table parts collect them, ``report_finish`` records them.)
    """
    rounds = rounds_in_range(day_from=day_from, day_to=day_to)
    shape = rounds.aggregate(n=Count("id"), last=Max("id"))
    findings = Finding.objects.filter(round__in=rounds).aggregate(n=Count("id"), last=Max("id"))
    start, end = window_of(day_from=day_from, day_to=day_to, clock=clock)
    # Two aggregates, not one with OR: an OR across a join defeats every index.
    dealt = MeterEvent.objects.filter(
        round__gaming_day__gte=day_from, round__gaming_day__lte=day_to
    ).aggregate(n=Count("id"), last=Max("id"))
    by_hand = MeterEvent.objects.filter(round__isnull=True, created_at__lt=end).aggregate(
        n=Count("id"), last=Max("id")
    )
    return {
        "engine_version": engine_version(),
        "clock": clock.as_json(),
        "window": [start.isoformat(), end.isoformat()],
        "data": {
            "rounds": shape["n"], "last_round": shape["last"],
            "findings": findings["n"], "last_finding": findings["last"],
            "meter_events": [dealt["n"], by_hand["n"]],
            "last_meter_event": [dealt["last"], by_hand["last"]],
        },
    }


def tables_in_range(*, day_from: date, day_to: date) -> list[Table]:
    ids = rounds_in_range(day_from=day_from, day_to=day_to).values("table_id")
    return list(Table.objects.filter(pk__in=ids).order_by("code"))


def pools_for_report() -> list[Pool]:
    return list(Pool.objects.order_by("code"))


# ---- a table's sums ---------------------------------------------------------------


def theory_of_version(*, version: TableConfigVersion, clock: ReconciliationSettings) -> Theory:
    math = trips_math(version.rules().trips_pays)
    return Theory(base_edge=clock.base_edge, base_sd=clock.base_sd, trips_edge=math.edge, trips_sd=math.sd)


def _seats_of_days(day_from: date, day_to: date) -> dict:
    """The seats' own gaming day (always their round's): naming it lets PostgreSQL read only
    those days' partitions of seats, where a filter on the round's day reads every one."""
    return {"gaming_day__gte": day_from, "gaming_day__lte": day_to}


def _seat_sums_annotations() -> dict:
    live = Q(round__void=False) & ~Q(round__status=Round.Status.VOID)
    annotations = {
        "hands": Count("id", filter=live),
        "ante_squares": Coalesce(Sum(F("ante") * F("ante"), filter=live), ZERO),
        "trips_squares": Coalesce(Sum(F("trips") * F("trips"), filter=live), ZERO),
    }
    for bet in BETS:
        wagered = live & Q(progressive_lit=True) if bet == "progressive" else live
        annotations[f"handle_{bet}"] = Coalesce(Sum(bet, filter=wagered), ZERO)
        annotations[f"result_{bet}"] = Coalesce(Sum(f"settled_{bet}"), ZERO)
    return annotations


def _sums_from_seat_row(row: dict, theory: Theory) -> Sums:
    sums = Sums(
        hands=row["hands"],
        handle={bet: row[f"handle_{bet}"] for bet in BETS},
        win={bet: -row[f"result_{bet}"] for bet in BETS},
    )
    for name, value in theory.theoretical(
        ante=row["handle_ante"], ante_squares=row["ante_squares"],
        trips=row["handle_trips"], trips_squares=row["trips_squares"],
    ).items():
        setattr(sums, name, value)
    return sums


def table_cells(
    *, table_id: int, day_from: date, day_to: date, clock: ReconciliationSettings
) -> dict[tuple[str, str], Sums]:
    """A table's sums for the range, by (dealer, shift): four grouped queries."""
    rounds = rounds_in_range(day_from=day_from, day_to=day_to).filter(table_id=table_id)
    cells: dict[tuple[str, str], Sums] = {}

    def cell(dealer: str, shift: str) -> Sums:
        return cells.setdefault((dealer or NO_DEALER, shift), Sums())

    by_round = _with_shift(rounds, dealt_at="dealt_at", clock=clock).values("dealer", "shift").annotate(
        n=Count("id"), void=Count("id", filter=VOID)
    )
    for row in by_round:
        c = cell(row["dealer"], row["shift"])
        c.rounds += row["n"]
        c.void_rounds += row["void"]

    seats = Seat.objects.filter(round__in=rounds, **_seats_of_days(day_from, day_to))
    theories: dict[int, Theory] = {}
    by_seat = (
        _with_shift(seats, dealt_at="round__dealt_at", clock=clock)
        .values("round__dealer", "shift", "round__config_version_id")
        .annotate(**_seat_sums_annotations())
    )
    for row in by_seat:
        version_id = row["round__config_version_id"]
        if version_id not in theories:
            version = TableConfigVersion.objects.get(pk=version_id)
            theories[version_id] = theory_of_version(version=version, clock=clock)
        key = (row["round__dealer"] or NO_DEALER, row["shift"])
        cell(*key).add(_sums_from_seat_row(row, theories[version_id]))

    findings = Finding.objects.filter(round__in=rounds)
    by_finding = (
        _with_shift(findings, dealt_at="round__dealt_at", clock=clock)
        .values("round__dealer", "shift", "code")
        .annotate(
            n=Count("id"),
            over=Coalesce(Sum(F("claimed") - F("expected"), filter=Q(claimed__gt=F("expected"))), ZERO),
            under=Coalesce(Sum(F("expected") - F("claimed"), filter=Q(claimed__lt=F("expected"))), ZERO),
        )
    )
    for row in by_finding:
        c = cell(row["round__dealer"], row["shift"])
        c.findings[row["code"]] = c.findings.get(row["code"], 0) + row["n"]
        if row["code"] == PAYOUT_MISMATCH:
            c.mismatches += row["n"]
            c.overpaid += row["over"]
            c.underpaid += row["under"]
    return cells


def players_sums(*, day_from: date, day_to: date, clock: ReconciliationSettings) -> dict[str, Sums]:
    """Per player id (where tables sent one), over every table: hands, handle, win, theoretical win.

    One grouped query for the whole range: a player moves between tables, and
    the database adds up millions of seats faster than any merge of parts.
    """
    rows = (
        Seat.objects.filter(
            round__gaming_day__gte=day_from, round__gaming_day__lte=day_to, **_seats_of_days(day_from, day_to)
        )
        .exclude(player="")
        .values("player", "round__config_version_id")
        .annotate(**_seat_sums_annotations())
        .order_by("player")
    )
    players: dict[str, Sums] = {}
    theories: dict[int, Theory] = {}
    # A plain fetch, not a server-side cursor: the answer is one row per player,
    # and PostgreSQL plans a cursor for its first rows (here five times slower).
    for row in rows:
        version_id = row["round__config_version_id"]
        if version_id not in theories:
            theories[version_id] = theory_of_version(
                version=TableConfigVersion.objects.get(pk=version_id), clock=clock
            )
        sums = _sums_from_seat_row(row, theories[version_id])
        if row["player"] in players:
            players[row["player"]].add(sums)
        else:
            players[row["player"]] = sums
    return players


# ---- rounds streamed for re-verification -----------------------------------------


@dataclass(slots=True)  # not frozen: one is built per stored round (see rounds.engine.record.SeatRecord)
class StoredRound:
    pk: int
    round_id: str
    record: dict
    status: str
    meter_before: Decimal | None
    meter_after: Decimal | None
    config_version_id: int
    pool_version_id: int | None
    voided_later: bool  # a supervisor voided it after it was stored
    seats: list[tuple]  # (seat, settled ante, blind, play, trips, progressive)
    codes: list[str]
    events: list[tuple]  # (kind, seat, amount, meter_after, overflow_before, reserve_before)


def _grouped(rows: Iterator[tuple]) -> Iterator[tuple[int, list[tuple]]]:
    """``(round pk, rest…)`` rows, ordered by round pk, as one list per round."""
    current, bucket = None, []
    for row in rows:
        if row[0] != current:
            if current is not None:
                yield current, bucket
            current, bucket = row[0], []
        bucket.append(row[1:])
    if current is not None:
        yield current, bucket


def stored_rounds(*, table_id: int, day_from: date, day_to: date) -> Iterator[StoredRound]:
    """A table's rounds of the range with their stored verdicts, streamed in pk order.

    On PostgreSQL one query brings each round with its seats, finding codes
    and meter events, through a server-side cursor in a transaction of its
    own (a savepoint in the caller's), which a thread reads a chunk ahead of
    the caller; elsewhere four ordered ORM streams are merged by round pk.
    Either way memory holds a few chunks of rounds, however many there are.
    """
    if connection.vendor == "postgresql":
        return _stored_rounds_postgresql(table_id=table_id, day_from=day_from, day_to=day_to)
    return stored_rounds_portable(table_id=table_id, day_from=day_from, day_to=day_to)


def _stored_rounds_postgresql(*, table_id: int, day_from: date, day_to: date) -> Iterator[StoredRound]:
    settled = ", ".join(f"s.settled_{bet}" for bet in BETS)
    voided = "r.voided_at IS NOT NULL" if VOIDED_LATER else "false"
    # The table's round ids are sorted first, by ``id + 0``: a cursor is
    # planned for its first rows, and walking the primary key in order would
    # read every round of every table and day to find this table's. Each
    # round is then read, with its seats, findings and meter events, only as
    # the cursor is fetched, so the database works while the judging goes on;
    # by (id, gaming day), so only the round's own partitions are looked in.
    # Seats come as text, "seat,ante,blind,play,trips,progressive;…":
    # splitting it and looking each amount up costs a third of decoding
    # numeric arrays, and the same few settled amounts come back again and again.
    sql = f"""
        SELECT r.id, r.round_id, r.record::text, r.status, r.meter_before, r.meter_after,
               r.config_version_id, r.pool_version_id, {voided},
               (SELECT string_agg(concat_ws(',', s.seat, {settled}), ';' ORDER BY s.seat)
                FROM {Seat._meta.db_table} s WHERE s.round_id = r.id AND s.gaming_day = r.gaming_day),
               ARRAY(SELECT f.code FROM {Finding._meta.db_table} f
                     WHERE f.round_id = r.id ORDER BY f.id),
               ARRAY(SELECT ARRAY[e.kind, e.seat::text, e.amount::text, e.meter_after::text,
                                  (e.overflow_after - e.overflow_delta)::text,
                                  (e.reserve_after - e.reserve_delta)::text]
                     FROM {MeterEvent._meta.db_table} e WHERE e.round_id = r.id ORDER BY e.seq)
        FROM (SELECT id + 0 AS pk, gaming_day FROM {Round._meta.db_table}
              WHERE table_id = %s AND gaming_day >= %s AND gaming_day <= %s ORDER BY 1) mine
        CROSS JOIN LATERAL (SELECT * FROM {Round._meta.db_table} r
                            WHERE r.id = mine.pk AND r.gaming_day = mine.gaming_day) r
        ORDER BY mine.pk
    """
    amounts = Amounts()
    loads = read_json
    # In a transaction, so that the cursor is read as it is fetched (outside
    # one it would be held: the whole result made before the first row).
    with transaction.atomic():
        with connection.cursor() as settings:
            # Compiling the per-row expressions costs 20-40 ms a query, which a
            # few thousand rows never win back.
            settings.execute("SET LOCAL jit = off")
        with connection.chunked_cursor() as cursor:
            cursor.execute(sql, [table_id, day_from, day_to])
            for rows in fetched_ahead(cursor, FETCH_AHEAD):
                for pk, round_id, record, status, before, after, version, pool_version, voided_, seats, codes, events in rows:
                    seat_rows = []
                    if seats:
                        for text in seats.split(";"):
                            number, ante, blind, play, trips, progressive = text.split(",")
                            seat_rows.append((int(number), amounts[ante], amounts[blind], amounts[play],
                                              amounts[trips], amounts[progressive]))
                    yield StoredRound(
                        pk, round_id, loads(record), status, before, after, version, pool_version,
                        voided_, seat_rows, codes,
                        [(k, int(s) if s is not None else None, Decimal(a), Decimal(m), Decimal(o), Decimal(v))
                         for k, s, a, m, o, v in events] if events else [],
                    )


def fetched_ahead(cursor, size: int) -> Iterator[list[tuple]]:
    """``cursor``'s rows ``size`` at a time, the next chunk fetched while the caller works on this one.

    A thread waits for the database (which works on another core meanwhile);
    at most two chunks wait for the caller, so memory stays flat. The thread
    is done with the cursor before this generator ends, however it ends.
    """
    chunks: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()

    def fetch() -> None:
        try:
            # A small first chunk: the caller has nothing to do until it comes.
            ask = min(size, 100)
            while not stop.is_set():
                rows = cursor.fetchmany(ask)
                chunks.put(rows)
                if not rows:
                    return
                ask = size
        except BaseException as error:  # handed to the caller, raised there
            chunks.put(error)

    thread = threading.Thread(target=fetch, name="stored-rounds-fetch", daemon=True)
    thread.start()
    try:
        while True:
            rows = chunks.get()
            if isinstance(rows, BaseException):
                raise rows
            if not rows:
                return
            yield rows
    finally:
        stop.set()
        while thread.is_alive():  # make room for a chunk the thread may be putting
            try:
                chunks.get(timeout=0.05)
            except queue.Empty:
                pass
        thread.join()


def stored_rounds_portable(*, table_id: int, day_from: date, day_to: date) -> Iterator[StoredRound]:
    """``stored_rounds`` with the ORM only: four ordered streams merged by round pk."""
    rounds = rounds_in_range(day_from=day_from, day_to=day_to).filter(table_id=table_id)
    in_rounds = {"round__table_id": table_id, "round__gaming_day__gte": day_from,
                 "round__gaming_day__lte": day_to}
    voided_later = Q(voided_at__isnull=False) if VOIDED_LATER else Q(pk__in=[])
    round_rows = rounds.order_by("id").annotate(
        voided_later=Case(When(voided_later, then=Value(True)), default=Value(False),
                          output_field=BooleanField())
    ).values_list(
        "id", "round_id", "record", "status", "meter_before", "meter_after",
        "config_version_id", "pool_version_id", "voided_later",
    ).iterator(chunk_size=STREAM_CHUNK)
    seat_rows = Seat.objects.filter(**in_rounds, **_seats_of_days(day_from, day_to)).order_by(
        "round_id", "seat").values_list(
        "round_id", "seat", *(f"settled_{bet}" for bet in BETS)
    ).iterator(chunk_size=STREAM_CHUNK * 4)
    code_rows = Finding.objects.filter(**in_rounds).order_by("round_id", "id").values_list(
        "round_id", "code"
    ).iterator(chunk_size=STREAM_CHUNK)
    event_rows = MeterEvent.objects.filter(**in_rounds).order_by("round_id", "seq").values_list(
        "round_id", "kind", "seat", "amount", "meter_after",
        F("overflow_after") - F("overflow_delta"), F("reserve_after") - F("reserve_delta"),
    ).iterator(chunk_size=STREAM_CHUNK)

    seats, codes, events = _grouped(seat_rows), _grouped(code_rows), _grouped(event_rows)
    next_seats, next_codes, next_events = next(seats, None), next(codes, None), next(events, None)
    for pk, round_id, record, status, before, after, version_id, pool_version_id, voided in round_rows:
        mine_seats: list = []
        mine_codes: list = []
        mine_events: list = []
        if next_seats is not None and next_seats[0] == pk:
            mine_seats, next_seats = next_seats[1], next(seats, None)
        if next_codes is not None and next_codes[0] == pk:
            mine_codes, next_codes = [c for (c,) in next_codes[1]], next(codes, None)
        if next_events is not None and next_events[0] == pk:
            mine_events, next_events = next_events[1], next(events, None)
        yield StoredRound(
            pk, round_id, record, status, before, after, version_id, pool_version_id, voided,
            mine_seats, mine_codes, mine_events,
        )


# ---- a pool's ledger ---------------------------------------------------------------


def pool_ledger_figures(*, pool: Pool, day_from: date, day_to: date, start: datetime, end: datetime) -> dict:
    """The pool's meter over the range: opening, every kind of movement, closing.

    An event belongs to the range when its round was dealt on one of its
    gaming days, or, for an event a person made (an adjustment, a reseed by
    hand, the reversal of a round voided after the fact), when it was
    recorded inside the range's window. The range's ledger
    is the unbroken run of events from the first that belongs to the last;
    opening is the meter after the event before it. In the normal course that
    run holds nothing else; a round of another day stored late in between is
    counted in ``other_days_events``. The walk checks every event follows from
    the one before.
    """
    events = MeterEvent.objects.filter(pool=pool)
    by_hand = Q(round__isnull=True) | Q(kind=MeterEvent.Kind.REVERSAL)
    # Two aggregates, not one with OR: an OR across a join defeats every index.
    spans = [
        events.filter(round__gaming_day__gte=day_from, round__gaming_day__lte=day_to)
        .exclude(kind=MeterEvent.Kind.REVERSAL)
        .aggregate(first=Min("seq"), last=Max("seq"), n=Count("id")),
        events.filter(by_hand, created_at__gte=start, created_at__lt=end)
        .aggregate(first=Min("seq"), last=Max("seq"), n=Count("id")),
    ]
    firsts = [s["first"] for s in spans if s["first"] is not None]
    span = {
        "first": min(firsts, default=None),
        "last": max((s["last"] for s in spans if s["last"] is not None), default=None),
        "n": sum(s["n"] for s in spans),
    }
    if span["first"] is None:
        # Nothing moved the meter: it stood where the last event before the window left it.
        open_seq = close_seq = (
            events.filter(created_at__lt=end).aggregate(last=Max("seq"))["last"] or 0
        )
    else:
        open_seq, close_seq = span["first"] - 1, span["last"]
    before = events.filter(seq=open_seq).values("meter_after").first()
    through = events.filter(seq=close_seq).values("meter_after", "overflow_after", "reserve_after").first()
    opening = before["meter_after"] if before else ZERO
    closing = through["meter_after"] if through else ZERO
    segment = events.filter(seq__gt=open_seq, seq__lte=close_seq)

    by_kind = {
        row["kind"]: {"events": row["n"], "amount": str(row["amount"]), "delta": str(row["delta"]),
                      "overflow": str(row["overflow"])}
        for row in segment.values("kind").order_by("kind").annotate(
            n=Count("id"), amount=Sum("amount"), delta=Sum("delta"), overflow=Sum("overflow_delta")
        )
    }
    flows = segment.aggregate(
        inflow=Coalesce(Sum("delta", filter=Q(delta__gt=0)), ZERO),
        outflow=Coalesce(Sum(-F("delta"), filter=Q(delta__lt=0)), ZERO),
        overflow=Coalesce(Sum("overflow_delta"), ZERO),
    )

    breaks = []
    expected_seq, meter = open_seq + 1, opening
    walk = segment.order_by("seq").values_list("seq", "delta", "meter_after")
    for seq, delta, meter_after in walk.iterator(chunk_size=STREAM_CHUNK * 5):
        if seq != expected_seq:
            breaks.append(f"events {expected_seq}..{seq - 1} are missing")
        if meter + delta != meter_after:
            breaks.append(f"event {seq}: {meter} + {delta} is not its meter {meter_after}")
        expected_seq, meter = seq + 1, meter_after
        if len(breaks) >= 20:
            break

    # The meter over the range for a chart: about 200 points, wherever the events fall.
    step = max(1, (close_seq - open_seq) // 200)
    sampled = segment.filter(seq__in=range(open_seq + step, close_seq + 1, step)).order_by("seq")
    series = [[str(open_seq), str(opening)]] + [
        [str(seq), str(meter)] for seq, meter in sampled.values_list("seq", "meter_after")
    ]

    def amount(kind: str) -> str:
        return by_kind.get(kind, {}).get("amount", "0")

    adjustments = by_kind.get(MeterEvent.Kind.ADJUSTMENT, {}).get("delta", "0")
    balanced = opening + flows["inflow"] - flows["outflow"] == closing
    pool_now = Pool.objects.filter(pk=pool.pk).values("meter", "last_event_seq").first()
    figures = {
        "pool": pool.code,
        "events": span["n"],
        "other_days_events": segment.count() - span["n"],
        "currency": pool.currency,
        "opening": str(opening), "opening_seq": open_seq,
        "contributions": amount(MeterEvent.Kind.CONTRIBUTION),
        "awards": amount(MeterEvent.Kind.AWARD),
        "fixed_awards": amount(MeterEvent.Kind.FIXED_AWARD),
        "reseeds": amount(MeterEvent.Kind.RESEED),
        "adjustments": adjustments,
        "overflow": str(flows["overflow"]),
        "in": str(flows["inflow"]), "out": str(flows["outflow"]),
        "closing": str(closing), "closing_seq": close_seq,
        "closing_overflow": str(through["overflow_after"]) if through else "0",
        "closing_reserve": str(through["reserve_after"]) if through else "0",
        "by_kind": by_kind,
        "balanced": balanced and not breaks,
        "ledger_breaks": breaks,
        "series": series,
    }
    if pool_now and pool_now["last_event_seq"] == close_seq:
        # Nothing has moved the meter since the window closed: the pool row must agree.
        figures["pool_row_agrees"] = pool_now["meter"] == closing
    figures["readings"] = _meter_readings(pool=pool, start=start, end=end)
    return figures


def _meter_readings(*, pool: Pool, start: datetime, end: datetime) -> dict | None:
    """What the tables' meter displays said, beside the service's meter, where they report it."""
    readings = getattr(pool, "readings", None)
    if readings is None:
        return None
    rows = readings.filter(received_at__gte=start, received_at__lt=end)
    summary = rows.aggregate(n=Count("id"), flagged=Count("id", filter=Q(flagged=True)),
                             largest=Max("difference"))
    return {"readings": summary["n"], "flagged": summary["flagged"],
            "largest_difference": str(summary["largest"]) if summary["largest"] is not None else None}


# ---- the audit chain ------------------------------------------------------------------


def audit_last_before(*, end: datetime) -> dict:
    last = AuditEvent.objects.filter(at__lt=end).order_by("-seq").values("seq", "hash").first()
    return {"seq": last["seq"], "hash": last["hash"]} if last else {"seq": 0, "hash": "0" * 64}




# ---- reports -----------------------------------------------------------------------------


def report_current(*, day_from: date, day_to: date | None = None) -> ReconciliationReport | None:
    """The complete report of the range: the only one anybody should read."""
    return ReconciliationReport.objects.filter(
        day_from=day_from, day_to=day_to or day_from, status=ReconciliationReport.Status.COMPLETE
    ).first()


def report_rollup(*, day_from: date, day_to: date) -> dict:
    """Month- or year-to-date figures from the days' stored current reports, not recomputed.

    Every stored group carries its sums, so the range's figures are their
    sums, with ratios, bands and flags derived again. Days without a current
    report are listed in ``missing_days``.
    """
    from .figures import derive, flags_of

    reports = ReconciliationReport.objects.filter(
        status=ReconciliationReport.Status.COMPLETE, day_from__gte=day_from, day_to__lte=day_to,
        day_from=F("day_to"),
    ).order_by("day_from")
    groups: dict[str, dict[str, Sums]] = {"tables": {}, "dealers": {}, "shifts": {}, "players": {}}
    casino = Sums()
    pools: dict[str, dict] = {}
    days, drift = [], 0
    for figures, day in reports.values_list("figures", "day_from").iterator(chunk_size=5):
        days.append(day)
        casino.add(Sums.from_json(figures["casino"]))
        for scope, by_key in groups.items():
            for key, data in figures.get(scope, {}).items():
                by_key.setdefault(key, Sums()).add(Sums.from_json(data))
        drift += figures.get("reverification", {}).get("drift", 0)
        for code, pool in figures.get("pools", {}).items():
            into = pools.setdefault(code, {
                "opening": pool["opening"], "opening_seq": pool["opening_seq"],
                "closing": pool["closing"], "closing_seq": pool["closing_seq"], "in": "0", "out": "0",
                "contributions": "0", "awards": "0", "fixed_awards": "0", "reseeds": "0",
                "adjustments": "0", "balanced": True,
            })
            for name in ("in", "out", "contributions", "awards", "fixed_awards", "reseeds", "adjustments"):
                into[name] = str(Decimal(into[name]) + Decimal(pool[name]))
            # The ledger's own order decides where the range opens and closes.
            if pool["opening_seq"] < into["opening_seq"]:
                into["opening"], into["opening_seq"] = pool["opening"], pool["opening_seq"]
            if pool["closing_seq"] > into["closing_seq"]:
                into["closing"], into["closing_seq"] = pool["closing"], pool["closing_seq"]
            into["balanced"] = into["balanced"] and pool["balanced"]
    every_day = [day_from + timedelta(days=i) for i in range((day_to - day_from).days + 1)]
    derived = {scope: {k: derive(s) for k, s in sorted(by_key.items())} for scope, by_key in groups.items()}
    return {
        "day_from": str(day_from), "day_to": str(day_to),
        "days": [str(d) for d in days],
        "missing_days": [str(d) for d in every_day if d not in set(days)],
        "casino": derive(casino),
        **derived,
        "flags": [f for scope in ("tables", "dealers", "shifts", "players")
                  for f in flags_of(scope.rstrip("s"), derived[scope])],
        "pools": pools,
        "drift": drift,
    }


def month_to_date(*, day: date) -> dict:
    return report_rollup(day_from=day.replace(day=1), day_to=day)


def year_to_date(*, day: date) -> dict:
    return report_rollup(day_from=day.replace(month=1, day=1), day_to=day)
