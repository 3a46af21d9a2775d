"""What went wrong since the last shift: the figures of the tonight page, per gaming day and currency.

Each tile is one grouped query over one gaming day's rows (rounds are
partitioned by it), or a read of the few pools, the last reports and the chain
head: the page costs the same whether the casino kept a month or ten years.
A tile knows the address of the filtered list behind it, so the page links each
figure to the rows it counts.

Each table's money leads: rounds, hands per hour, handle, the house's win by
the rules and by what its dealers paid, and hold, from the day's totals that
every stored round adds to as it is stored (``rounds.DayTotal``: counted as
the nightly report counts seats, which recounts them), with whether it is
dealing now. Money at stake is |expected − claimed| of a finding; a dealer's mismatch is a
``payout_mismatch`` finding (as the nightly report counts them), over- or
underpaid by the sign of claimed − expected. Findings still to work are the
actionable ones open or acknowledged (``rounds.selectors.TO_WORK``): acknowledged
is being worked, not settled; a day's, and all of them before the page's days
(the backlog), are read from their tally (``rounds.WorkTally``), kept by every
write that raises or moves one and recounted by the nightly report. Game
protection's findings (players, dealers and tables over many rounds, not one
day's rounds) are counted by code over every unresolved one: one grouped query
over the state index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import (
    Count, DurationField, Exists, ExpressionWrapper, F, Max, Min, OuterRef, Sum, Value, Window,
)
from django.db.models.functions import Lag
from django.urls import reverse
from django.utils import timezone

from books.figures import dealer_order, hours_of, per_hour, percent
from books.report_figures import BandFigures, stored_name
from game.rules import BETS
from game.vocabulary import FindingCode
from infra.admin_links import changelist_url
from infra.gaming_day import gaming_day_of
from infra.json_columns import KeysOf
from infra.work import UNRESOLVED
from progressive.models import MeterReading, Pool
from rounds import mistakes
from rounds.models import DayTotal, Finding, LateRound, Round, Table, WorkTally
from rounds.services.day_totals import MONEY
from rounds.window import window_opens
from trail.models import AuditEvent, ChainHead

from .models import ProtectionFinding, ReconciliationReport, ReportBand, VarianceFinding
from .notices import notices_unsent
from .reconciliation.config import report_maker
from .reconciliation.selectors import ReportsKept, reports_kept

ZERO = Value(Decimal(0))
TOP_DEALERS = 5


@dataclass(frozen=True, slots=True)
class TableMoney:
    """A table's day so far, in its currency (a table that changed currency has a row for each)."""

    table: str
    currency: str
    rounds: int  # in the books (not held apart)
    hands: int
    hands_per_hour: Decimal | None  # over its first to its last round, its breaks left out (``figures.per_hour``)
    handle: Decimal
    win: Decimal  # the house's, by the rules
    win_paid: Decimal  # the house's, by what the dealers paid
    hold_percent: Decimal | None
    dealing: bool  # a round within TABLE_SILENT_AFTER of now, on the current day
    last_round: datetime
    url: str

    @property
    def dealer_difference(self) -> Decimal:
        return self.win_paid - self.win


@dataclass(frozen=True, slots=True)
class Dealt:
    currency: str
    rounds: int
    tables: int
    url: str


@dataclass(frozen=True, slots=True)
class OpenFindings:
    code: str
    currency: str
    count: int
    at_stake: Decimal
    url: str


@dataclass(frozen=True, slots=True)
class DealerMismatches:
    dealer: str
    currency: str
    mismatches: int
    overpaid: int  # paid the player more than due
    underpaid: int
    overpaid_amount: Decimal
    underpaid_amount: Decimal
    day: date

    @property
    def url(self) -> str:
        """His payout mismatches of the day in the findings' queue (made for the dealers shown only:
        a casino's day has a thousand dealers)."""
        return changelist_url(Finding, state="all", gaming_day=self.day.isoformat(),
                              code=FindingCode.PAYOUT_MISMATCH.value, round__dealer=self.dealer,
                              currency=self.currency)


@dataclass(frozen=True, slots=True)
class OutsideBand:
    table: str
    currency: str
    win: Decimal
    low: Decimal
    high: Decimal
    side: str  # "above its 95 % band" (the house won more than the band), "below its 99.7 % band", …
    url: str


@dataclass(frozen=True, slots=True)
class Silence:
    table: str
    table_id: int
    longest: timedelta
    since: datetime  # the round before the longest gap
    until: datetime | None  # the round after it; None: still silent now
    url: str


@dataclass(slots=True)
class Day:
    day: date
    current: bool
    dealt: list[Dealt] = field(default_factory=list)
    money: list[TableMoney] = field(default_factory=list)
    findings: list[OpenFindings] = field(default_factory=list)
    dealers: list[DealerMismatches] = field(default_factory=list)
    dealers_more: int = 0  # dealers with mismatches past the ones shown
    silent: list[Silence] = field(default_factory=list)
    report: ReconciliationReport | None = None  # the day's current (complete) report
    outside: list[OutsideBand] = field(default_factory=list)

    @property
    def findings_url(self) -> str:
        return changelist_url(Finding, state="unresolved", gaming_day=self.day.isoformat())


@dataclass(frozen=True, slots=True)
class PoolState:
    pool: Pool
    reading: MeterReading | None
    url: str

    @property
    def difference(self) -> Decimal | None:
        """What the last display showed against what the service's meter held when it was read
        (the reading's own comparison: the meter has moved since with every contribution)."""
        return None if self.reading is None else self.reading.difference


@dataclass(frozen=True, slots=True)
class ChainState:
    head_seq: int
    checked_by: ReconciliationReport | None  # the last report that walked the chain
    events_since: int | None  # written after the event it found last; None: not known
    url: str


@dataclass(frozen=True, slots=True)
class ProtectionOpen:
    code: str
    count: int  # unresolved: open or acknowledged
    url: str


@dataclass(frozen=True, slots=True)
class Late:
    """A table's rounds stored in the last day after their gaming day had ended, and how many of them
    came after their day's report was made (each makes that report stale, for the healer to remake)."""

    table: str
    rounds: int
    after_report: int
    last_hour: int = 0  # of them, stored in the last hour
    alarming: bool = False  # more in the last hour than LATE_ROUNDS_ALERT_PER_HOUR


# How far back the tonight page counts rounds stored late.
LATE_OVER = timedelta(hours=24)


@dataclass(frozen=True, slots=True)
class Tonight:
    now: datetime
    days: list[Day]
    backlog: int  # actionable findings still to work, of the days before these
    backlog_url: str
    pools: list[PoolState]
    last_report: ReconciliationReport | None
    chain: ChainState
    silent_after: timedelta
    protection: list[ProtectionOpen] = field(default_factory=list)
    kept: ReportsKept | None = None  # whether every ended day has its current report
    reports_url: str = ""
    stale_url: str = ""  # the stale days' reports, as many as the page counts
    late: list[Late] = field(default_factory=list)  # by table, most first
    unsent: dict[str, int] = field(default_factory=dict)  # notices of the last day not sent, by why
    late_alert: int = 0  # LATE_ROUNDS_ALERT_PER_HOUR
    report_maker: str = ""  # what makes a missing or stale day's report (reconciliation.config)

    @property
    def protection_url(self) -> str:
        return changelist_url(ProtectionFinding, state="unresolved")

    @property
    def report_slow(self) -> bool:
        """A report running for more than an hour: longer than the heaviest day's takes."""
        since = self.kept.oldest_running_since if self.kept else None
        return since is not None and self.now - since > timedelta(hours=1)

    @property
    def alerts(self) -> list[str]:
        """What the last report raised an alert about (results outside the 99.7 % band)."""
        return list((self.last_report.figure_alerts if self.last_report else None) or [])


def tonight(*, now: datetime | None = None) -> Tonight:
    """The current and the last gaming day, the pools, the last report and the chain."""
    now = now or timezone.now()
    current = gaming_day_of(now)
    days = [_day(current, now=now, current=True), _day(current - timedelta(days=1), now=now, current=False)]
    return Tonight(
        now=now, days=days,
        backlog=_backlog(before=days[-1].day),
        backlog_url=changelist_url(Finding, state="unresolved", before_day=days[-1].day.isoformat()),
        pools=_pools(), last_report=_with_alerts(_reports().order_by("-created_at", "-id").first()),
        chain=_chain(), silent_after=settings.TABLE_SILENT_AFTER, protection=_protection(),
        kept=reports_kept(books_open=window_opens(), last_ended=current - timedelta(days=1)),
        reports_url=changelist_url(ReconciliationReport),
        stale_url=changelist_url(ReconciliationReport, stale="yes"),
        report_maker=report_maker(),
        late=late_rounds(since=now - LATE_OVER, now=now),
        unsent=notices_unsent(since=now - LATE_OVER), late_alert=settings.LATE_ROUNDS_ALERT_PER_HOUR,
    )


def late_rounds(*, since: datetime, now: datetime | None = None) -> list[Late]:
    """Each table's rounds stored since ``since`` for a gaming day already ended, most first; a
    table storing more of them in the last hour than ``LATE_ROUNDS_ALERT_PER_HOUR`` is alarming
    (each makes a reported day stale for the healer to remake)."""
    now = now or timezone.now()
    late = LateRound.objects.filter(received_at__gte=since).order_by()
    reported = Exists(ReconciliationReport.objects.filter(
        day_from=OuterRef("gaming_day"), day_to=OuterRef("gaming_day"), created_at__lt=OuterRef("received_at")))
    counted = dict(late.values_list("table__code").annotate(n=Count("id")))
    after = dict(late.filter(reported).values_list("table__code").annotate(n=Count("id")))
    hour = dict(late.filter(received_at__gte=now - timedelta(hours=1)).values_list("table__code")
                .annotate(n=Count("id")))
    most = settings.LATE_ROUNDS_ALERT_PER_HOUR
    return sorted((Late(table, n, after.get(table, 0), hour.get(table, 0), hour.get(table, 0) > most)
                   for table, n in counted.items()), key=lambda one: (-one.rounds, one.table))


def _backlog(*, before: date) -> int:
    """Findings still to work whose round was dealt before ``before``, one a mistake as the queue the
    count links to lists them, from their tally (``rounds.WorkTally``: a few rows a day)."""
    return WorkTally.objects.filter(gaming_day__lt=before).aggregate(n=Sum("mistakes"))["n"] or 0


def _day(day: date, *, now: datetime, current: bool) -> Day:
    rounds = Round.objects.filter(gaming_day=day).order_by()
    result = Day(day=day, current=current)
    # The day's totals by table and currency (``rounds.DayTotal``: a few rows a table): the dealt
    # tile, each table's money, and each table's last round for the current day's silence.
    per_table = list(DayTotal.objects.filter(gaming_day=day).order_by()
                     .values("table_id", currency=F("config_version__currency"))
                     .annotate(in_books=Sum("rounds"), held=Sum("held"), first=Min("first_at"),
                               last=Max("last_at"), **_money_sums()))
    dealt: dict[str, tuple[int, set]] = {}
    for row in per_table:
        count, tables = dealt.get(row["currency"], (0, set()))
        dealt[row["currency"]] = (count + row["in_books"] + row["held"], tables | {row["table_id"]})
    result.dealt = [
        Dealt(currency=currency, rounds=count, tables=len(tables),
              url=changelist_url(Round, gaming_day=day.isoformat(), currency=currency))
        for currency, (count, tables) in sorted(dealt.items())
    ]
    # The day's gaps read once, for both the breaks its hands an hour leave out and its silences.
    gaps = list(_gaps(rounds, longer_than=min(settings.STINT_BREAK, settings.TABLE_SILENT_AFTER)))
    result.money = _money(day, per_table, now=now, current=current, breaks=_breaks(gaps))
    result.findings, dealers = _findings(day)
    result.dealers, result.dealers_more = dealers[:TOP_DEALERS], max(0, len(dealers) - TOP_DEALERS)
    last_round = {}
    for row in per_table:
        last_round[row["table_id"]] = max(row["last"], last_round.get(row["table_id"], row["last"]))
    result.silent = _silent(gaps, day, now=now, last_round=last_round if current else {})
    result.report = _reports().filter(
        day_from=day, day_to=day, status=ReconciliationReport.Status.COMPLETE).order_by("-version").first()
    result.outside = _outside(result.report, day) if result.report else []
    return result


def _money_sums() -> dict:
    """A group of day totals' hands and money (``rounds.DayTotal``'s columns, summed)."""
    return {name: Sum(name) for name in ("hands", *MONEY)}


def _findings(day: date) -> tuple[list[OpenFindings], list[DealerMismatches]]:
    """The findings still to work by code, and the dealers' mismatches (from the day's totals)."""
    return _open_findings(day), _dealers(day)


def _open_findings(day: date) -> list[OpenFindings]:
    """The findings still to work by code and currency, one a mistake as the queue the counts link
    to lists them, from their tally (``rounds.WorkTally``)."""
    rows = (WorkTally.objects.filter(gaming_day=day, mistakes__gt=0).order_by()
            .values("code", currency=F("config_version__currency"))
            .annotate(n=Sum("mistakes"), stake=Sum("at_stake")))
    return sorted(
        (OpenFindings(code=row["code"], currency=row["currency"], count=row["n"], at_stake=row["stake"],
                      url=changelist_url(Finding, state="unresolved", gaming_day=day.isoformat(), code=row["code"],
                                         currency=row["currency"]))
         for row in rows),
        key=lambda o: (o.currency, -o.at_stake, -o.count, o.code),
    )


def _dealers(day: date) -> list[DealerMismatches]:
    """The dealers with payout mismatches on ``day``, over and under, from its totals
    (``rounds.DayTotal``), the worst first (``dealer_order``)."""
    rows = (DayTotal.objects.filter(gaming_day=day, mismatches__gt=0).order_by()
            .values("dealer", currency=F("config_version__currency"))
            .annotate(n=Sum("mismatches"), over=Sum("overpaid"), under=Sum("underpaid"),
                      over_amount=Sum("overpaid_amount"), under_amount=Sum("underpaid_amount")))
    return sorted(
        (DealerMismatches(
            dealer=row["dealer"], currency=row["currency"], mismatches=row["n"], overpaid=row["over"],
            underpaid=row["under"], overpaid_amount=row["over_amount"], underpaid_amount=row["under_amount"],
            day=day)
         for row in rows),
        key=lambda d: dealer_order(overpaid=d.overpaid_amount, underpaid=d.underpaid_amount,
                                   mismatches=d.mismatches, dealer=d.dealer, currency=d.currency),
    )


def _money(day: date, per_table: list[dict], *, now: datetime, current: bool,
           breaks: dict[int, timedelta]) -> list[TableMoney]:
    """Each table's money of the day so far, from its day totals (``per_table``, held rounds
    counting in nothing but the dealt tile); its hands an hour over the time it dealt, its
    ``breaks`` left out."""
    codes = dict(Table.objects.filter(pk__in={row["table_id"] for row in per_table}).values_list("pk", "code"))
    money = []
    for row in per_table:
        if not row["in_books"]:
            continue
        first, last = row["first"], row["last"]
        handle = sum(row[f"handle_{bet}"] for bet in BETS)
        win = -sum(row[f"result_{bet}"] for bet in BETS)
        money.append(TableMoney(
            table=codes[row["table_id"]], currency=row["currency"], rounds=row["in_books"], hands=row["hands"],
            hands_per_hour=per_hour(row["hands"], hours_of(max(
                last - first - breaks.get(row["table_id"], timedelta(0)), timedelta(0)))),
            handle=handle, win=win, win_paid=-sum(row[f"paid_{bet}"] for bet in BETS),
            hold_percent=percent(win, handle), dealing=current and now - last <= settings.TABLE_SILENT_AFTER,
            last_round=last,
            url=changelist_url(Round, gaming_day=day.isoformat(), table__id__exact=row["table_id"]),
        ))
    return sorted(money, key=lambda m: (m.currency, m.table))


def _gaps(rounds, *, longer_than: timedelta):
    """Each table's gaps between two of ``rounds`` longer than ``longer_than``: (table, the round before,
    the round after), found in the database by the (gaming day, table, dealt at) index alone (only
    the rounds after a gap come back)."""
    return (
        rounds.annotate(previous=Window(Lag("dealt_at"), partition_by=[F("table_id")], order_by=F("dealt_at").asc()))
        .annotate(gap=ExpressionWrapper(F("dealt_at") - F("previous"), output_field=DurationField()))
        .filter(gap__gt=longer_than)
        .values_list("table_id", "previous", "dealt_at")
    )


def _breaks(gaps) -> dict[int, timedelta]:
    """Each table's breaks of the day, added up: its ``gaps`` longer than ``STINT_BREAK`` (``books.stints``),
    which its hands an hour leave out, as a dealer's page does."""
    breaks: dict[int, timedelta] = {}
    for table_id, previous, dealt_at in gaps:
        if dealt_at - previous > settings.STINT_BREAK:
            breaks[table_id] = breaks.get(table_id, timedelta(0)) + (dealt_at - previous)
    return breaks


def silences_of(day: date, *, table_id: int) -> list[Silence]:
    """A table's longest silence between two rounds of ``day`` (none, or one): its page's."""
    rounds = Round.objects.filter(gaming_day=day, table_id=table_id).order_by()
    return _silent(_gaps(rounds, longer_than=settings.TABLE_SILENT_AFTER), day, now=timezone.now(), last_round={})


def _silent(gaps, day: date, *, now: datetime, last_round: dict[int, datetime]) -> list[Silence]:
    """Tables whose rounds stopped for longer than ``TABLE_SILENT_AFTER``: between two rounds of
    the day (among ``gaps``, ``_gaps``'s), and since the last one up to now (``last_round``,
    given on the current day only)."""
    gap = settings.TABLE_SILENT_AFTER
    longest: dict[int, tuple[timedelta, datetime, datetime | None]] = {}
    for table_id, previous, dealt_at in gaps:
        if dealt_at - previous <= gap:
            continue
        if table_id not in longest or dealt_at - previous > longest[table_id][0]:
            longest[table_id] = (dealt_at - previous, previous, dealt_at)
    for table_id, last in last_round.items():
        if now - last > gap and (table_id not in longest or now - last > longest[table_id][0]):
            longest[table_id] = (now - last, last, None)
    codes = dict(Table.objects.filter(pk__in=longest).values_list("pk", "code"))
    return sorted(
        (Silence(table=codes[table_id], table_id=table_id, longest=span, since=since, until=until,
                 url=changelist_url(Round, gaming_day=day.isoformat(), table__id__exact=table_id))
         for table_id, (span, since, until) in longest.items()),
        key=lambda s: (-s.longest, s.table),
    )


def _reports(*parts: str):
    """Reports without their figures, megabytes on a busy day: only the ``parts`` the page shows,
    as ``figure_<part>`` (``report_figures.stored_name``), read out of their summary in one pass."""
    reports = ReconciliationReport.objects.defer("figures", "summary", "inputs")
    if not parts:
        return reports
    return reports.annotate(figure_parts=KeysOf("summary", [stored_name(part) for part in parts]))


def _with_alerts(report: ReconciliationReport | None) -> ReconciliationReport | None:
    """``report`` with its alerts as ``figure_alerts``: as the audit event of its completion recorded
    them (a row by index), or else read out of its figures (a report not complete has none)."""
    if report is None:
        return None
    completed = (AuditEvent.objects.filter(object_type=report._meta.label_lower, object_id=str(report.pk),
                                           action="reconciliation.completed")
                 .order_by("-seq").values_list("after", flat=True).first())
    if completed is not None and "alerts" in completed:
        report.figure_alerts = completed["alerts"]
        return report
    return _with_parts(_reports("alerts").filter(pk=report.pk).first())


def _with_parts(report: ReconciliationReport | None) -> ReconciliationReport | None:
    if report is not None:
        for name, value in (getattr(report, "figure_parts", None) or {}).items():
            setattr(report, f"figure_{name}", value)
    return report


def _outside(report: ReconciliationReport, day: date) -> list[OutsideBand]:
    """The tables the day's report found outside their band, as it found them: its bands kept
    apart from its figures (``ReportBand``, written as it completed), a few rows by index."""
    bands = (ReportBand.objects.filter(report=report, scope="tables", period="day")
             .order_by("key", "currency").values_list("key", "currency", "band"))
    found = [(code, currency, band) for code, currency, stored in bands
             if (band := BandFigures.model_validate(stored)).outside]
    ids = dict(Table.objects.filter(code__in=[code for code, _, _ in found]).values_list("code", "id"))
    return [
        OutsideBand(table=code, currency=currency, win=band.actual, low=band.low_95, high=band.high_95,
                    side=f"{'above' if band.actual > band.high_95 else 'below'} its {band.outside} % band",
                    url=changelist_url(Round, gaming_day=day.isoformat(), table__id__exact=ids.get(code, "")))
        for code, currency, band in found
    ]


def _protection() -> list[ProtectionOpen]:
    """Game protection's findings still to work, by code, the most first."""
    rows = (ProtectionFinding.objects.filter(state__in=UNRESOLVED).order_by()
            .values("code").annotate(n=Count("id")).values_list("code", "n"))
    return sorted(
        (ProtectionOpen(code=code, count=n, url=changelist_url(ProtectionFinding, state="unresolved", code=code))
         for code, n in rows),
        key=lambda p: (-p.count, p.code),
    )


@dataclass(frozen=True, slots=True)
class Cases:
    """One kind of finding's cases as they stand for the one looking: his, past due, escalated."""

    kind: str  # the queue's name
    mine: int
    overdue: int
    escalated: int
    url: str  # the queue
    unresolved: dict[str, str]  # how the queue is asked for its unresolved findings

    def link(self, case: str) -> str:
        return f"{self.url}?{urlencode({'case': case, **self.unresolved})}"

    @property
    def link_mine(self) -> str:
        return self.link("mine")

    @property
    def link_overdue(self) -> str:
        return self.link("overdue")

    @property
    def link_escalated(self) -> str:
        return self.link("escalated")


def cases_of(user, *, now: datetime | None = None) -> list[Cases]:
    """For each kind of finding ``user`` may read, the unresolved cases that are his, past their due
    time and escalated (``case_queries``)."""
    now = now or timezone.now()
    kinds = []
    for model, name, unresolved_query in (
            (Finding, "rounds' findings", {"state": "unresolved"}),
            (VarianceFinding, "variance findings", {"state__in": ",".join(sorted(UNRESOLVED))}),
            (ProtectionFinding, "game protection", {"state": "unresolved"})):
        if not user.has_perm(f"{model._meta.app_label}.view_{model._meta.model_name}"):
            continue
        counts = {case: sum(1 for state in states if state in UNRESOLVED)
                  for case, states in case_queries(model, user=user, now=now).items()}
        kinds.append(Cases(
            kind=name, url=reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"),
            unresolved=unresolved_query, **counts))
    return kinds


def case_queries(model, *, user, now: datetime) -> dict[str, object]:
    """The cases of ``model`` that are ``user``'s, past their due time and escalated, as their states:
    three reads, each of a partial index of the findings somebody worked (``infra.work``), the
    unresolved counted from them. Asked with the state in the query, the planner may read the state's
    index instead: every unresolved finding, most of them never worked."""
    cases = model.objects.order_by()
    if model is Finding:
        cases = cases.filter(informational=False)
    # A rounds' finding's mates count once, as the queue lists them (``rounds.mistakes``).
    one_each = mistakes.one_row_each if model is Finding else (lambda rows: rows)
    return {case: one_each(rows).values_list("state", flat=True) for case, rows in (
        ("mine", cases.filter(assignee=user)), ("overdue", cases.filter(due_at__lt=now)),
        ("escalated", cases.filter(escalated_at__isnull=False)))}


def _pools() -> list[PoolState]:
    pools = list(Pool.objects.order_by("code"))
    readings = {}
    for pool in pools:
        readings[pool.pk] = MeterReading.objects.filter(pool=pool).order_by("-received_at", "-id").first()
    return [PoolState(pool=pool, reading=readings[pool.pk],
                      url=reverse("admin:progressive_pool_change", args=[pool.pk])) for pool in pools]


def _chain() -> ChainState:
    head = ChainHead.objects.first()
    checked_by = (_reports().filter(chain_ok__isnull=False)
                  .order_by(F("finished_at").desc(nulls_last=True), "-id").first())
    events_since = None
    head_seq = head.seq if head else 0
    if checked_by is not None and checked_by.chain_last_hash:
        last = AuditEvent.objects.filter(hash=checked_by.chain_last_hash).values_list("seq", flat=True).first()
        events_since = None if last is None else head_seq - last
    return ChainState(head_seq=head_seq, checked_by=checked_by, events_since=events_since,
                      url=reverse("admin:trail_auditevent_changelist"))

