"""Reads for reconciliation: grouped sums in the database, rounds streamed for re-verification.

Every sum is a SQL ``SUM``/``COUNT`` … ``GROUP BY`` over one table's rounds of
the range (the players' over every table's); the rounds themselves are only
ever streamed through server-side cursors, so memory does not grow with the
number of rounds.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import (
    BooleanField, Case, CharField, Count, DecimalField, F, Max, Min, Q, QuerySet, Sum, Value,
    When,
)
from django.db.models.functions import Coalesce, ExtractHour, ExtractMinute
from pydantic import ValidationError

from audit.models import ReconciliationReport, SeatScore
from audit.shifts import range_window, shift_minute_ranges
from books.figures import (
    BETS, SCOPE_OF, ByCurrency, CurrencyMismatch, Sums, Theory, Wagers, derive, derive_by_currency, flags_of,
    scoring_of,
)
from books.report_figures import TO_DATES, ToDate, figures_json, stored_name
from books.report_reader import read_to_date
from books.seat_covariance import SeatCovarianceMissing, load_seat_covariance
from books.statistics import trips_math
from game.findings import PAYOUT_MISMATCH
from game.record import Amounts
from infra.jsons import read_json
from progressive.models import MeterEvent, Pool
from progressive.selectors import OPENING
from rounds.models import DayTotal, Finding, Round, Seat, Table, TableConfigVersion
from rounds.selectors import LIVE_SEAT, OVERPAID, UNDERPAID, rounds_in_range, seat_money_annotations
from trail.models import AuditEvent, ChainHead

from .config import ReconciliationSettings, engine_version
from .staleness import days_stale

SCOPES = tuple(SCOPE_OF)

logger = logging.getLogger("audit.reconciliation")
ZERO = Decimal(0)
STREAM_CHUNK = 2000
FETCH_AHEAD = 500  # rows a fetch while re-verifying: the first wait of a table is short
NO_DEALER = "(none)"
# A round is void when the table reported it void, or when a supervisor voided
# it after the fact (its status says so; its record still shows what was dealt).
VOID = Q(void=True) | Q(status=Round.Status.VOID)
VOIDED_LATER = "voided_at" in {f.name for f in Round._meta.get_fields()}


def rounds_held() -> dict:
    """The rounds held apart from the books, whatever their day, awaiting a supervisor: how many,
    and the oldest received (read from their own small index)."""
    held = Round.objects.filter(held=True).aggregate(n=Count("id"), oldest=Min("received_at"))
    return {"rounds": held["n"], "oldest_received": held["oldest"].isoformat() if held["oldest"] else None}


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
    # A pool's opening counts whenever it was recorded: its books may open before (``books_opened``).
    by_hand = MeterEvent.objects.filter(Q(created_at__lt=end) | OPENING, round__isnull=True).aggregate(
        n=Count("id"), last=Max("id")
    )
    # Scores are written once and kept: their count and last id say whether more came since.
    scores = SeatScore.objects.filter(gaming_day__gte=day_from, gaming_day__lte=day_to).aggregate(
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
            "seat_scores": scores["n"], "last_seat_score": scores["last"],
        },
    }


def tables_in_range(*, day_from: date, day_to: date) -> list[Table]:
    ids = rounds_in_range(day_from=day_from, day_to=day_to).values("table_id")
    return list(Table.objects.filter(pk__in=ids).order_by("code"))


def pools_for_report() -> list[Pool]:
    return list(Pool.objects.order_by("code"))


# ---- a table's sums ---------------------------------------------------------------


def theory_of_version(*, version: TableConfigVersion, clock: ReconciliationSettings) -> Theory:
    """What the version's rounds should win, per unit wagered, with the spread of one round's seats."""
    rules = version.rules()
    math = trips_math(rules.trips_pays)
    try:
        covariance = load_seat_covariance(rules.blind_pays, rules.dealer_qualifier)
    except SeatCovarianceMissing:
        # A Blind table nobody derived yet: the shipped game's covariance is the
        # nearest at hand; the log says so until its own is derived and shipped.
        logger.warning("no seat covariance derived for %s's Blind table: the shipped game's is used "
                       "(docs/VARIANCE.md)", version)
        covariance = clock.covariance
    return Theory(
        base_edge=clock.base_edge, base_sd=clock.base_sd, trips_edge=math.edge, trips_sd=math.sd,
        base_covariance=covariance.base_covariance,
        trips_covariance=covariance.trips_covariance(rules.trips_pays),
        base_trips_same=covariance.base_trips_covariance(rules.trips_pays, same_seat=True),
        base_trips_other=covariance.base_trips_covariance(rules.trips_pays, same_seat=False),
    )


def covariance_fallbacks(*, version_ids: list[int]) -> list[str]:
    """The configuration versions whose Blind table has no derived seat covariance of its own."""
    missing = []
    for version in TableConfigVersion.objects.filter(pk__in=version_ids).select_related("config"):
        rules = version.rules()
        try:
            load_seat_covariance(rules.blind_pays, rules.dealer_qualifier)
        except SeatCovarianceMissing:
            missing.append(str(version))
    return missing


class _Theories(dict):
    """Each configuration version's ``Theory`` and currency, read once per query."""

    def __init__(self, clock: ReconciliationSettings) -> None:
        super().__init__()
        self.clock = clock

    def __missing__(self, version_id: int) -> tuple[Theory, str]:
        version = TableConfigVersion.objects.get(pk=version_id)
        self[version_id] = found = (theory_of_version(version=version, clock=self.clock), version.currency)
        return found


def _seats_of_days(day_from: date, day_to: date) -> dict:
    """The seats' own gaming day (always their round's): naming it lets PostgreSQL read only
    those days' partitions of seats, where a filter on the round's day reads every one."""
    return {"gaming_day__gte": day_from, "gaming_day__lte": day_to}


def _seat_sums_annotations() -> dict:
    live = LIVE_SEAT
    return {
        **seat_money_annotations(),
        "ante_squares": Coalesce(Sum(F("ante") * F("ante"), filter=live), ZERO),
        "trips_squares": Coalesce(Sum(F("trips") * F("trips"), filter=live), ZERO),
        "ante_trips": Coalesce(Sum(F("ante") * F("trips"), filter=live), ZERO),
    }


def _round_pairs_annotations() -> dict:
    """Per round of two or more live seats: the sums its seat pairs' products come from."""
    return {
        "live_seats": Count("id"),
        "a": Sum("ante"), "aa": Sum(F("ante") * F("ante")),
        "t": Sum("trips"), "tt": Sum(F("trips") * F("trips")), "at": Sum(F("ante") * F("trips")),
    }


@dataclass(slots=True)
class _Group:
    """One group's seat sums before they become ``Sums``: the pairs are added from another query."""

    row: dict
    ante_pairs: Decimal = ZERO
    trips_pairs: Decimal = ZERO
    ante_trips_other: Decimal = ZERO

    def add_round(self, row: dict) -> None:
        self.ante_pairs += row["a"] * row["a"] - row["aa"]
        self.trips_pairs += row["t"] * row["t"] - row["tt"]
        self.ante_trips_other += row["a"] * row["t"] - row["at"]

    def sums(self, theory: Theory, currency: str) -> Sums:
        row = self.row
        sums = Sums(
            currency=currency,
            hands=row["hands"],
            handle={bet: row[f"handle_{bet}"] for bet in BETS},
            win={bet: -row[f"result_{bet}"] for bet in BETS},
            win_paid={bet: -row[f"paid_{bet}"] for bet in BETS},
        )
        wagers = Wagers(
            ante=row["handle_ante"], ante_squares=row["ante_squares"], ante_pairs=self.ante_pairs,
            trips=row["handle_trips"], trips_squares=row["trips_squares"], trips_pairs=self.trips_pairs,
            ante_trips_same=row["ante_trips"], ante_trips_other=self.ante_trips_other,
        )
        for name, value in theory.theoretical(wagers).items():
            setattr(sums, name, value)
        return sums


# Ante (two places) times Antes lost (six): kept whole, so that groups add up to the cent and beyond.
_SKILL = DecimalField(max_digits=30, decimal_places=8)


def seat_scores_of_days(day_from: date, day_to: date, *, using: str = DEFAULT_DB_ALIAS) -> QuerySet[SeatScore]:
    """The range's scored seats of live rounds: what a group's skill amount adds up.

    A seat game protection could not value (``scored`` false) gives no amount
    and counts as not scored; a round voided after it was scored counts no
    more than its seats' wagers do. The round's own gaming day is named so
    that only those days' partitions of rounds are joined.
    """
    return SeatScore.objects.using(using).filter(
        LIVE_SEAT, scored=True, gaming_day__gte=day_from, gaming_day__lte=day_to,
        round__gaming_day__gte=day_from, round__gaming_day__lte=day_to,
    )


def _skill_by(
    scores: QuerySet, group_by: tuple[str, ...], theories: _Theories,
) -> Iterator[tuple[tuple, str, int, Decimal]]:
    """``(group, currency, scored hands, Σ Ante × Antes lost)`` per group of ``scores``.

    The currency is the one of the configuration version the round was judged
    by, as for its seats; a score that names another is refused, never added in.
    """
    rows = scores.values(*group_by, "round__config_version_id", "currency").annotate(
        scored_hands=Count("id"),
        skill=Coalesce(Sum(F("ante") * F("ev_lost"), output_field=_SKILL), ZERO),
    ).order_by()
    for row in rows:
        _, currency = theories[row["round__config_version_id"]]
        if row["currency"] != currency:
            raise CurrencyMismatch(
                f"seats scored in {row['currency']} belong to rounds judged in {currency}")
        yield tuple(row[k] for k in group_by), currency, row["scored_hands"], row["skill"]


def table_cells(
    *, table_id: int, day_from: date, day_to: date, clock: ReconciliationSettings, using: str = DEFAULT_DB_ALIAS,
) -> dict[tuple[str, str, str], Sums]:
    """A table's sums for the range, by (dealer, shift, currency): six grouped queries.

    The currency is the one of the configuration version each round was judged by.
    """
    rounds = rounds_in_range(day_from=day_from, day_to=day_to, using=using).filter(table_id=table_id)
    cells: dict[tuple[str, str, str], Sums] = {}

    def cell(dealer: str, shift: str, currency: str) -> Sums:
        key = (dealer or NO_DEALER, shift, currency)
        if key not in cells:
            cells[key] = Sums(currency=currency)
        return cells[key]

    by_round = _with_shift(rounds, dealt_at="dealt_at", clock=clock).values(
        "dealer", "shift", "config_version__currency"
    ).annotate(n=Count("id"), void=Count("id", filter=VOID))
    for row in by_round:
        c = cell(row["dealer"], row["shift"], row["config_version__currency"])
        c.rounds += row["n"]
        c.void_rounds += row["void"]

    seats = _with_shift(
        Seat.objects.using(using).filter(round__in=rounds, **_seats_of_days(day_from, day_to)),
        dealt_at="round__dealt_at", clock=clock,
    )
    group_by = ("round__dealer", "shift", "round__config_version_id")
    groups = {
        tuple(row[k] for k in group_by): _Group(row)
        for row in seats.values(*group_by).annotate(**_seat_sums_annotations())
    }
    pairs = seats.filter(LIVE_SEAT).values("round_id", *group_by).annotate(**_round_pairs_annotations())
    for row in pairs.filter(live_seats__gt=1):
        groups[tuple(row[k] for k in group_by)].add_round(row)
    theories = _Theories(clock)
    for (dealer, shift, version_id), group in groups.items():
        theory, currency = theories[version_id]
        cell(dealer, shift, currency).add(group.sums(theory, currency))

    scores = _with_shift(
        seat_scores_of_days(day_from, day_to, using=using).filter(table_id=table_id),
        dealt_at="round__dealt_at", clock=clock,
    )
    for (dealer, shift), currency, scored_hands, skill in _skill_by(scores, ("round__dealer", "shift"), theories):
        c = cell(dealer, shift, currency)
        c.scored_hands += scored_hands
        c.skill += skill

    findings = Finding.objects.using(using).filter(round__in=rounds)
    by_finding = (
        _with_shift(findings, dealt_at="round__dealt_at", clock=clock)
        .values("round__dealer", "shift", "round__config_version__currency", "code")
        .annotate(
            n=Count("id"),
            over=Coalesce(Sum(F("claimed") - F("expected"), filter=OVERPAID), ZERO),
            under=Coalesce(Sum(F("expected") - F("claimed"), filter=UNDERPAID), ZERO),
        )
    )
    for row in by_finding:
        c = cell(row["round__dealer"], row["shift"], row["round__config_version__currency"])
        c.findings[row["code"]] = c.findings.get(row["code"], 0) + row["n"]
        if row["code"] == PAYOUT_MISMATCH:
            c.mismatches += row["n"]
            c.overpaid += row["over"]
            c.underpaid += row["under"]
    return cells


def players_sums(
    *, day_from: date, day_to: date, clock: ReconciliationSettings, using: str = DEFAULT_DB_ALIAS,
) -> dict[str, ByCurrency]:
    """Per player id (where tables sent one), over every table, per currency: hands, handle,
    win, theoretical win, and what the player's scored decisions gave up.

    One grouped query for the whole range: a player moves between tables, and
    the database adds up millions of seats faster than any merge of parts.
    A player's seats are independent but where one player held several seats
    of one round; those rounds (rare: the rules flag them) add their pairs.
    """
    seats = Seat.objects.using(using).filter(
        round__gaming_day__gte=day_from, round__gaming_day__lte=day_to, round__held=False,
        **_seats_of_days(day_from, day_to)
    ).exclude(player="")
    group_by = ("player", "round__config_version_id")
    # A plain fetch, not a server-side cursor: the answer is one row per player,
    # and PostgreSQL plans a cursor for its first rows, a slower plan here (docs/SCALING.md).
    groups = {
        tuple(row[k] for k in group_by): _Group(row)
        for row in seats.values(*group_by).annotate(**_seat_sums_annotations()).order_by("player")
    }
    pairs = seats.filter(LIVE_SEAT).values("round_id", *group_by).annotate(**_round_pairs_annotations())
    for row in pairs.filter(live_seats__gt=1).order_by():
        groups[tuple(row[k] for k in group_by)].add_round(row)
    players: dict[str, ByCurrency] = {}
    theories = _Theories(clock)
    for (player, version_id), group in groups.items():
        theory, currency = theories[version_id]
        players.setdefault(player, ByCurrency()).add(group.sums(theory, currency))
    scores = seat_scores_of_days(day_from, day_to, using=using).exclude(player="")
    for (player,), currency, scored_hands, skill in _skill_by(scores, ("player",), theories):
        players.setdefault(player, ByCurrency()).add(
            Sums(currency=currency, scored_hands=scored_hands, skill=skill))
    return players


# ---- rounds streamed for re-verification -----------------------------------------


@dataclass(slots=True)  # not frozen: one is built per stored round (see game.record.SeatRecord)
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
    received_at: datetime | None = None  # what its clock finding was judged against
    # (seat, paid ante, blind, play, trips, progressive) of each seat whose payouts the table
    # reported: what the kept body says they paid, kept apart from the verdict. None: not read.
    paid: list[tuple] | None = None


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


def stored_rounds(*, table_id: int, day_from: date, day_to: date, using: str = DEFAULT_DB_ALIAS) -> Iterator[StoredRound]:
    """A table's rounds of the range with their stored verdicts, streamed in pk order.

    On PostgreSQL one query brings each round with its seats, finding codes
    and meter events, through a server-side cursor in a transaction of its
    own (a savepoint in the caller's), which a thread reads a chunk ahead of
    the caller; elsewhere four ordered ORM streams are merged by round pk.
    Either way memory holds a few chunks of rounds, however many there are.
    """
    span = {"table_id": table_id, "day_from": day_from, "day_to": day_to, "using": using}
    if connections[using].vendor == "postgresql":
        return _stored_rounds_postgresql(**span)
    return stored_rounds_portable(**span)


def _stored_rounds_postgresql(
    *, table_id: int, day_from: date, day_to: date, using: str = DEFAULT_DB_ALIAS,
) -> Iterator[StoredRound]:
    settled = ", ".join(f"s.settled_{bet}" for bet in BETS)
    # A seat's payouts follow its settlement in the same text, where the table reported them.
    paid = ", ".join(f"coalesce(s.paid_{bet}::text, '')" for bet in BETS)
    voided = "r.voided_at IS NOT NULL" if VOIDED_LATER else "false"
    # The table's round ids are sorted first, by ``id + 0``: a cursor is
    # planned for its first rows, and walking the primary key in order would
    # read every round of every table and day to find this table's. Each
    # round is then read, with its seats, findings and meter events, only as
    # the cursor is fetched, so the database works while the judging goes on;
    # by (id, gaming day), so only the round's own partitions are looked in.
    # Seats come as text, "seat,ante,blind,play,trips,progressive;…":
    # splitting it and looking each amount up costs less than decoding numeric
    # arrays (docs/SCALING.md), and the same few settled amounts come back again and again.
    sql = f"""
        SELECT r.id, r.round_id, r.record::text, r.status, r.meter_before, r.meter_after,
               r.config_version_id, r.pool_version_id, {voided}, r.received_at,
               (SELECT string_agg(concat_ws(',', s.seat, {settled},
                                            CASE WHEN s.paid_reported THEN concat_ws(',', {paid}) END),
                                  ';' ORDER BY s.seat)
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
    connection = connections[using]
    with transaction.atomic(using=using):
        with connection.cursor() as settings:
            # Compiling the per-row expressions costs more than a few thousand
            # rows ever win back (docs/SCALING.md, "Figures behind the comments").
            settings.execute("SET LOCAL jit = off")
        with connection.chunked_cursor() as cursor:
            cursor.execute(sql, [table_id, day_from, day_to])
            for rows in fetched_ahead(cursor, FETCH_AHEAD):
                for (pk, round_id, record, status, before, after, version, pool_version, voided_, received,
                     seats, codes, events) in rows:
                    seat_rows, paid_rows = [], []
                    if seats:
                        for text in seats.split(";"):
                            number, ante, blind, play, trips, progressive, *claimed = text.split(",")
                            seat_rows.append((int(number), amounts[ante], amounts[blind], amounts[play],
                                              amounts[trips], amounts[progressive]))
                            if claimed:
                                paid_rows.append((int(number), *(amounts[c] if c else None for c in claimed)))
                    yield StoredRound(
                        pk, round_id, loads(record), status, before, after, version, pool_version,
                        voided_, seat_rows, codes,
                        [(k, int(s) if s is not None else None, Decimal(a), Decimal(m), Decimal(o), Decimal(v))
                         for k, s, a, m, o, v in events] if events else [],
                        received, paid_rows,
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


def stored_rounds_portable(
    *, table_id: int, day_from: date, day_to: date, using: str = DEFAULT_DB_ALIAS,
) -> Iterator[StoredRound]:
    """``stored_rounds`` with the ORM only: four ordered streams merged by round pk."""
    rounds = rounds_in_range(day_from=day_from, day_to=day_to, using=using).filter(table_id=table_id)
    in_rounds = {"round__table_id": table_id, "round__gaming_day__gte": day_from,
                 "round__gaming_day__lte": day_to}
    voided_later = Q(voided_at__isnull=False) if VOIDED_LATER else Q(pk__in=[])
    round_rows = rounds.order_by("id").annotate(
        voided_later=Case(When(voided_later, then=Value(True)), default=Value(False),
                          output_field=BooleanField())
    ).values_list(
        "id", "round_id", "record", "status", "meter_before", "meter_after",
        "config_version_id", "pool_version_id", "voided_later", "received_at",
    ).iterator(chunk_size=STREAM_CHUNK)
    seat_rows = Seat.objects.using(using).filter(**in_rounds, **_seats_of_days(day_from, day_to)).order_by(
        "round_id", "seat").values_list(
        "round_id", "seat", *(f"settled_{bet}" for bet in BETS), "paid_reported", *(f"paid_{bet}" for bet in BETS)
    ).iterator(chunk_size=STREAM_CHUNK * 4)
    code_rows = Finding.objects.using(using).filter(**in_rounds).order_by("round_id", "id").values_list(
        "round_id", "code"
    ).iterator(chunk_size=STREAM_CHUNK)
    event_rows = MeterEvent.objects.using(using).filter(**in_rounds).order_by("round_id", "seq").values_list(
        "round_id", "kind", "seat", "amount", "meter_after",
        F("overflow_after") - F("overflow_delta"), F("reserve_after") - F("reserve_delta"),
    ).iterator(chunk_size=STREAM_CHUNK)

    seats, codes, events = _grouped(seat_rows), _grouped(code_rows), _grouped(event_rows)
    next_seats, next_codes, next_events = next(seats, None), next(codes, None), next(events, None)
    for pk, round_id, record, status, before, after, version_id, pool_version_id, voided, received in round_rows:
        mine_seats: list = []
        mine_codes: list = []
        mine_events: list = []
        mine_paid: list = []
        if next_seats is not None and next_seats[0] == pk:
            rows, next_seats = next_seats[1], next(seats, None)
            mine_seats = [row[:6] for row in rows]
            mine_paid = [(row[0], *row[7:]) for row in rows if row[6]]
        if next_codes is not None and next_codes[0] == pk:
            mine_codes, next_codes = [c for (c,) in next_codes[1]], next(codes, None)
        if next_events is not None and next_events[0] == pk:
            mine_events, next_events = next_events[1], next(events, None)
        yield StoredRound(
            pk, round_id, record, status, before, after, version_id, pool_version_id, voided,
            mine_seats, mine_codes, mine_events, received, mine_paid,
        )


# ---- the audit chain ------------------------------------------------------------------


def audit_chain_of_window(*, start: datetime, end: datetime) -> dict:
    """The audit events written inside the window: how many, and the last one's seq and hash.

    A window without events says so (``events: 0`` and no hash), rather than
    showing the hash of an earlier day's event, or zeros, as if it were the day's.
    """
    inside = AuditEvent.objects.filter(at__gte=start, at__lt=end)
    n = inside.count()
    last = inside.order_by("-seq").values("seq", "hash").first() if n else None
    return {"day_events": n, "day_last_seq": last["seq"] if last else None,
            "day_last_hash": last["hash"] if last else None}


def audit_chain_head() -> dict:
    """The chain's head as it stands now: the report says which chain it was made against."""
    head = ChainHead.objects.filter(pk=1).values("seq", "hash").first()
    if not head or not head["seq"]:
        return {"seq": 0, "hash": None}
    return {"seq": head["seq"], "hash": head["hash"]}


# ---- reports -----------------------------------------------------------------------------


def report_current(*, day_from: date, day_to: date | None = None) -> ReconciliationReport | None:
    """The complete report of the range: the only one anybody should read."""
    return ReconciliationReport.objects.filter(
        day_from=day_from, day_to=day_to or day_from, status=ReconciliationReport.Status.COMPLETE
    ).first()


def report_rollup(*, day_from: date, day_to: date, scopes: tuple[str, ...] = SCOPES) -> ToDate:
    """Month- or year-to-date figures from the days' stored current reports, not recomputed.

    Every stored group carries its sums, per currency, so the range's figures
    are their sums, with ratios, bands and flags derived again. Days without
    a current report are listed in ``missing_days``. A pool's range opens
    where its first day opened and closes where its last day closed; it
    balances when every day did and each day opened where the one before it
    closed (a day changed after it was reported breaks that). ``reports``
    names the reports added up, which ``report_rollup_on`` holds a kept
    roll-up to.
    """
    rolling = _Rolling(scopes)
    for row in _rollup_rows(day_from=day_from, day_to=day_to, scopes=scopes):
        rolling.add(row)
    return rolling.result(day_from=day_from, day_to=day_to)


def report_rollup_on(
    *, kept: dict | None, day_from: date, day_to: date, scopes: tuple[str, ...] = SCOPES
) -> ToDate:
    """``report_rollup`` of ``day_from..day_to``, read as the roll-up ``kept`` (of ``day_from`` to the
    day before ``day_to``, as the report of that day stored it) plus the report of ``day_to``, where
    ``kept`` still adds up exactly the current reports of its days; else every day's report again.

    So a day's month and year to date read two reports, not every day of the
    year: what they add up to is the same (a day reconciled again since
    ``kept`` was made makes it not hold, and the days are read again).
    """
    before = day_to - timedelta(days=1)
    holds = (
        isinstance(kept, dict) and before >= day_from and kept.get("day_from") == str(day_from)
        and kept.get("day_to") == str(before) and isinstance(kept.get("reports"), list)
        and all(isinstance(kept.get(scope), dict) for scope in scopes)
        and all(isinstance((kept.get("days_dealt") or {}).get(scope), dict) for scope in scopes)
        and sorted(kept["reports"]) == sorted(_current_single_days(day_from=day_from, day_to=before))
    )
    try:
        rolling = _Rolling.from_kept(read_to_date(kept), scopes) if holds else None
    except (ValidationError, CurrencyMismatch):
        rolling = None  # kept, but not in the shape a roll-up is written in: its figures were changed
    if rolling is None:
        return report_rollup(day_from=day_from, day_to=day_to, scopes=scopes)
    for row in _rollup_rows(day_from=day_to, day_to=day_to, scopes=scopes):
        rolling.add(row)
    return rolling.result(day_from=day_from, day_to=day_to)


def _current_single_days(*, day_from: date, day_to: date) -> list[int]:
    """The current single-day reports of the days, by the status index (their figures unread)."""
    return list(ReconciliationReport.objects.filter(
        status=ReconciliationReport.Status.COMPLETE, day_from__gte=day_from, day_from__lte=day_to,
        day_to=F("day_from"),
    ).values_list("pk", flat=True))


def _rollup_rows(*, day_from: date, day_to: date, scopes: tuple[str, ...]):
    # A report made before figures kept their currency cannot be added to one
    # that did: its day counts as missing until it is reconciled again.
    reports = ReconciliationReport.objects.filter(
        status=ReconciliationReport.Status.COMPLETE, day_from__gte=day_from, day_to__lte=day_to,
        day_from=F("day_to"), figures__has_key=stored_name("currencies"),
    ).order_by("day_from")
    names = ("casino", "reverification", "pools", *scopes)
    wanted = ["pk", "day_from", *(f"figures__{stored_name(name)}" for name in names)]
    return reports.values(*wanted).iterator(chunk_size=5)


class _Rolling:
    """Days' figures added up, a report's row at a time."""

    def __init__(self, scopes: tuple[str, ...]):
        self.scopes = scopes
        self.groups: dict[str, dict[str, ByCurrency]] = {scope: {} for scope in scopes}
        self.casino = ByCurrency()
        self.pools: dict[str, dict] = {}
        self.days: list[date] = []
        self.days_dealt: dict[str, dict[str, dict[str, int]]] = {scope: {} for scope in scopes}
        self.reports: list[int] = []
        self.drift = 0

    @classmethod
    def from_kept(cls, kept: ToDate, scopes: tuple[str, ...]) -> _Rolling:
        rolling = cls(scopes)
        rolling.casino = ByCurrency.of_groups(kept.casino)
        for scope in scopes:
            rolling.groups[scope] = {key: ByCurrency.of_groups(by) for key, by in kept.groups(scope).items()}
        rolling.pools = {code: figures_json(pool) for code, pool in kept.pools.items()}
        rolling.days = list(kept.days)
        rolling.days_dealt = {scope: {key: dict(by) for key, by in (kept.days_dealt or {})[scope].items()}
                              for scope in scopes}
        rolling.reports = list(kept.reports)
        rolling.drift = kept.drift
        return rolling

    def add(self, row: dict) -> None:
        self.days.append(row["day_from"])
        self.reports.append(row["pk"])
        self.casino.add_all(ByCurrency.from_json(row["figures__casino"] or {}))
        for scope, by_key in self.groups.items():
            for key, data in (row[f"figures__{scope}"] or {}).items():
                by_key.setdefault(key, ByCurrency()).add_all(ByCurrency.from_json(data))
                dealt = self.days_dealt[scope].setdefault(key, {})
                for currency, group in data.items():
                    if int(group.get("rounds", 0)):
                        dealt[currency] = dealt.get(currency, 0) + 1
        self.drift += (row["figures__reverification"] or {}).get("drift", 0)
        for code, pool in (row["figures__pools"] or {}).items():
            _roll_pool(self.pools, code, pool, row["day_from"])

    def result(self, *, day_from: date, day_to: date) -> ToDate:
        every_day = [day_from + timedelta(days=i) for i in range((day_to - day_from).days + 1)]
        reported = set(self.days)
        derived = {scope: derive_by_currency(by_key) for scope, by_key in self.groups.items()}
        return ToDate(
            day_from=day_from, day_to=day_to, days=self.days, reports=self.reports,
            missing_days=[d for d in every_day if d not in reported],
            currencies=sorted(self.casino),
            casino={currency: derive(sums) for currency, sums in sorted(self.casino.items())},
            **derived,
            flags=[f for scope in self.scopes for f in flags_of(SCOPE_OF[scope], derived[scope])],
            scoring=scoring_of(self.casino, derived),
            pools=self.pools,
            drift=self.drift,
            days_dealt=self.days_dealt,
        )


POOL_FLOWS = ("in", "out", "contributions", "awards", "fixed_awards", "reseeds", "adjustments", "reversals", "overflow")


def _roll_pool(pools: dict, code: str, day: dict, on: date) -> None:
    into = pools.get(code)
    if into is None:
        pools[code] = into = {
            "pool": code, "currency": day["currency"], "opening": day["opening"], "closing": day["opening"],
            "events": 0, **dict.fromkeys(POOL_FLOWS, "0"), "balanced": True, "problems": [],
        }
    if day["currency"] != into["currency"]:
        raise CurrencyMismatch(f"pool {code} reported {day['currency']} and {into['currency']}")
    if Decimal(day["opening"]) != Decimal(into["closing"]):
        into["problems"].append(f"{on} opened at {day['opening']}; the day before it closed at {into['closing']}")
    for name in POOL_FLOWS:
        into[name] = str(Decimal(into[name]) + Decimal(day.get(name, "0")))
    into["events"] += day["events"]
    into["closing"] = day["closing"]
    if not day["balanced"]:
        into["problems"].append(f"{on} does not balance")
    into["balanced"] = not into["problems"]


def periods_kept(*, day: date) -> dict:
    """The month and year to date the current report of ``day`` kept, as stored ({} without one):
    ``report_rollup_on`` judges whether they still hold before it reads them."""
    periods = [stored_name(name) for name in TO_DATES]
    row = (
        ReconciliationReport.objects.filter(status=ReconciliationReport.Status.COMPLETE, day_from=day, day_to=day)
        .values(*(f"figures__{period}" for period in periods)).first()
    ) or {}
    return {period: row.get(f"figures__{period}") for period in periods}


def month_to_date(*, day: date, scopes: tuple[str, ...] = SCOPES, kept: dict | None = None) -> dict:
    return report_rollup_on(kept=kept, day_from=day.replace(day=1), day_to=day, scopes=scopes)


def year_to_date(*, day: date, scopes: tuple[str, ...] = SCOPES, kept: dict | None = None) -> dict:
    return report_rollup_on(kept=kept, day_from=day.replace(month=1, day=1), day_to=day, scopes=scopes)


def first_reported_day() -> date | None:
    """The first gaming day any current report (with currencies) covers: where a table's lifetime starts."""
    return (
        ReconciliationReport.objects.filter(
            status=ReconciliationReport.Status.COMPLETE, figures__has_key=stored_name("currencies"))
        .order_by("day_from").values_list("day_from", flat=True).first()
    )


@dataclass(frozen=True, slots=True)
class ReportsKept:
    """Whether every ended gaming day has its report: what an operator watches (``/metrics``)."""

    days_missing: int  # ended gaming days of the books without a current report of the day
    oldest_missing: date | None
    last_complete_day: date | None  # the latest day whose own report is current
    oldest_running_since: datetime | None  # when the oldest report still running was opened
    days_stale: int = 0  # days whose current report was made before late rounds of the day came
    oldest_stale: date | None = None


def reports_kept(*, books_open: date, last_ended: date) -> ReportsKept:
    """``ReportsKept`` over the gaming days from ``books_open`` to ``last_ended``: three small reads
    (the days' current reports of one day each, by the status index; the oldest running report;
    the current reports a late round made stale, from the few late rounds)."""
    reported = _days_reported(books_open, last_ended)
    missing = _days_missing(books_open, last_ended, reported)
    running = (ReconciliationReport.objects.filter(status=ReconciliationReport.Status.RUNNING)
               .order_by("created_at").values_list("created_at", flat=True).first())
    stale = days_stale(books_open=books_open, last_ended=last_ended)
    return ReportsKept(len(missing), missing[0] if missing else None, max(reported, default=None), running,
                       len(stale), stale[0] if stale else None)


def days_without_report(*, books_open: date, last_ended: date) -> list[date]:
    """The ended gaming days from ``books_open`` to ``last_ended`` that had rounds in the books and
    have no current report of their own (never made, failed, or still running), oldest first: a
    day nothing was dealt on needs none. One read of the reports, and one of the days' totals."""
    return _days_missing(books_open, last_ended, _days_reported(books_open, last_ended))


def _days_reported(books_open: date, last_ended: date) -> set[date]:
    return set(
        ReconciliationReport.objects.filter(status=ReconciliationReport.Status.COMPLETE, day_from=F("day_to"),
                                            day_from__gte=books_open, day_to__lte=last_ended)
        .values_list("day_from", flat=True)
    )


def _days_missing(books_open: date, last_ended: date, reported: set[date]) -> list[date]:
    days = (books_open + timedelta(days=n) for n in range(max((last_ended - books_open).days + 1, 0)))
    unreported = [day for day in days if day not in reported]
    dealt = _dealt_on(unreported)
    return [day for day in unreported if day in dealt]


def _dealt_on(days: list[date]) -> set[date]:
    """Which of ``days`` had rounds in the books: one read of their days' totals
    (``rounds.DayTotal``, a few rows a table a day), however many days the books hold."""
    if not days:
        return set()
    dealt = (DayTotal.objects.filter(gaming_day__gte=min(days), gaming_day__lte=max(days), rounds__gt=0)
             .order_by().values_list("gaming_day", flat=True).distinct())
    return set(dealt) & set(days)
