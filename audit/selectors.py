"""Reads for the staff pages' charts and a dealer's page: report bands, a report's dealers, dealers'
mismatches by week, and what one dealer dealt week by week."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, DateField, F, Max, Q, Sum, Window
from django.db.models.functions import Cast, TruncWeek

from books.figures import hours_of, per_hour
from books.stints import Stint, stints_of
from game.rules import BETS
from progressive.selectors import openings
from rounds.models import DayTotal, Round
from rounds.services.day_totals import MISMATCHES, MONEY
from trail.models import AuditEvent

from .models import ProtectionFinding, ReconciliationReport, ReportBand, ReportDealer, ReportFlag


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


def report_to_date_bands(*, report_id: int, scope: str, keys: Iterable[str]) -> dict[tuple[str, str, str], dict]:
    """One single-day report's month- and year-to-date total band of each of ``keys`` of ``scope``,
    by ``(period, key, currency)``, as it stored them (``ReportBand``): a few rows by index, where
    its figures carry every dealer's months and years (megabytes)."""
    rows = ReportBand.objects.filter(report_id=report_id, scope=scope, key__in=list(keys),
                                     period__in=BAND_PERIODS[1:]).values_list("period", "key", "currency", "band")
    return {(period, key, currency): band for period, key, currency, band in rows}


@dataclass(frozen=True, slots=True)
class KeptDealer:
    dealer: str
    currency: str
    tables: list[str]  # the tables he dealt at in the report's range
    figures: dict  # his figures as the report stores them


@dataclass(frozen=True, slots=True)
class KeptDealers:
    count: int  # the report's dealers, one for each currency each dealt in
    largest_rate: Decimal  # the most mismatches per 1,000 hands among all of them
    by_accuracy: list[KeptDealer]  # the first of them by the money their mismatches put at stake
    charted: list[KeptDealer]  # the first of them outside their band, then by handle


def report_dealers(*, report_id: int, shown: int | None, charted: int) -> KeptDealers | None:
    """A finished report's dealers as it kept them apart (``ReportDealer``): how many, the first
    ``shown`` in the order of accuracy (all where None) and the first ``charted`` in the charts'
    order; None where it has none. Three reads by index, whatever the casino's size."""
    rows = ReportDealer.objects.filter(report_id=report_id)
    totals = rows.order_by().aggregate(count=Count("pk"), largest=Max("per_1000"))
    if not totals["count"]:
        return None
    fields = ("dealer", "currency", "tables", "figures")
    accuracy = rows.order_by("accuracy_rank").values_list(*fields)
    return KeptDealers(
        count=totals["count"], largest_rate=totals["largest"] or Decimal(0),
        by_accuracy=[KeptDealer(*row) for row in (accuracy if shown is None else accuracy[:shown])],
        charted=[KeptDealer(*row) for row in rows.order_by("chart_rank").values_list(*fields)[:charted]],
    )


@dataclass(frozen=True, slots=True)
class KeptFlags:
    count: int  # the report's flags
    first: list[dict]  # the first of them in its order, as it stores them


def report_flags(*, report_id: int, shown: int | None) -> KeptFlags:
    """A finished report's flags as it kept them apart (``ReportFlag``): how many, and the first
    ``shown`` in its order (all where None). One read by index, whatever the casino's size: the
    count comes with each row (a window over all of them, counted before the first are taken)."""
    rows = (ReportFlag.objects.filter(report_id=report_id).order_by("rank")
            .annotate(total=Window(Count("pk"))).values_list("figures", "total"))
    first = list(rows if shown is None else rows[:shown])
    return KeptFlags(count=first[0][1] if first else 0, first=[figures for figures, _ in first])


@dataclass(frozen=True, slots=True)
class DealerWeek:
    dealer: str
    week: date  # the Monday its ISO week starts on
    mismatches: int
    overpaid: int  # of them, claimed more than due
    underpaid: int


@dataclass(frozen=True, slots=True)
class MismatchWeeks:
    dealers: list[str]  # the dealers charted, most mismatches first
    weeks: list[DealerWeek]  # theirs, by dealer and week
    others: int  # the dealers with mismatches not charted
    overpaid: int  # of every dealer's mismatches, claimed more than due
    underpaid: int


def dealer_mismatches_by_week(*, day_to: date, weeks: int = 8, top: int | None = None) -> MismatchWeeks:
    """Payout mismatches (never the informational findings) per dealer per ISO week, for the
    ``weeks`` weeks that end with ``day_to``'s, by the rounds' gaming days, of the ``top`` dealers
    with the most (all where None): grouped reads of the days' totals (``rounds.DayTotal``), which
    count them as their rounds are stored. Only the dealers charted are read week by week: a
    casino's dealers' weeks are thousands of rows."""
    first = day_to - timedelta(days=day_to.weekday()) - timedelta(weeks=weeks - 1)
    days = DayTotal.objects.filter(gaming_day__gte=first, gaming_day__lte=day_to, mismatches__gt=0).order_by()
    per_dealer = list(days.values_list("dealer").annotate(n=Sum("mismatches"), over=Sum("overpaid"),
                                                          under=Sum("underpaid")))
    totals = {dealer or "(none)": n for dealer, n, _, _ in per_dealer}
    charted = sorted(totals, key=lambda d: (-totals[d], d))[:top]
    rows = (
        days.filter(dealer__in=["" if d == "(none)" else d for d in charted])
        # A date, not the timestamp date_trunc makes of it.
        .annotate(week=Cast(TruncWeek("gaming_day", output_field=DateField()), DateField()))
        .values_list("dealer", "week")
        .annotate(n=Sum("mismatches"), over=Sum("overpaid"), under=Sum("underpaid"))
    ) if charted else []
    found = sorted(
        (DealerWeek(dealer=dealer or "(none)", week=_as_date(week), mismatches=n, overpaid=over, underpaid=under)
         for dealer, week, n, over, under in rows),
        key=lambda w: (w.dealer, w.week),
    )
    return MismatchWeeks(dealers=charted, weeks=found, others=len(totals) - len(charted),
                         overpaid=sum(row[2] for row in per_dealer), underpaid=sum(row[3] for row in per_dealer))


def _as_date(value) -> date:
    return value.date() if isinstance(value, datetime) else value


# ---- a dealer's page ---------------------------------------------------------------------------


@dataclass(slots=True)
class DealtWeek:
    """A dealer's ISO week in one currency: what he dealt and what his payouts got wrong."""

    week: date  # its Monday
    currency: str
    rounds: int = 0
    hands: int = 0
    hours: Decimal = Decimal(0)  # dealt: each stint's first round to its last (``books.stints``)
    handle: Decimal = Decimal(0)
    win: Decimal = Decimal(0)  # the house's, by the rules
    win_paid: Decimal = Decimal(0)  # the house's, by what he paid
    overpaid: int = 0
    underpaid: int = 0
    overpaid_amount: Decimal = Decimal(0)
    underpaid_amount: Decimal = Decimal(0)

    @property
    def mismatches(self) -> int:
        return self.overpaid + self.underpaid

    @property
    def at_stake(self) -> Decimal:
        return self.overpaid_amount + self.underpaid_amount

    def per_1000(self, count: int) -> Decimal | None:
        return (Decimal(count) * 1000 / self.hands).quantize(Decimal("0.01")) if self.hands else None

    @property
    def over_per_1000(self) -> Decimal | None:
        return self.per_1000(self.overpaid)

    @property
    def under_per_1000(self) -> Decimal | None:
        return self.per_1000(self.underpaid)

    @property
    def hands_per_hour(self) -> Decimal | None:
        return per_hour(self.hands, self.hours)


def dealer_weeks(*, dealer: str, day_to: date, weeks: int = 8) -> list[DealtWeek]:
    """What ``dealer`` dealt in the ``weeks`` ISO weeks that end with ``day_to``'s (``weeks_dealt``),
    by the (dealer, dealt at) index and the gaming-day partitions; his hours are his stints'."""
    return weeks_dealt(Q(dealer=dealer), day_to=day_to, weeks=weeks, by_dealer=True)


def table_weeks(*, table_id: int, day_to: date, weeks: int = 8) -> list[DealtWeek]:
    """What a table dealt in the ``weeks`` ISO weeks that end with ``day_to``'s (``weeks_dealt``),
    by the (gaming day, table, dealt at) index; its hours are its own stints' (any dealer)."""
    return weeks_dealt(Q(table_id=table_id), day_to=day_to, weeks=weeks, by_dealer=False)


def dealer_stints(*, dealer: str, since: datetime) -> list[Stint]:
    """``dealer``'s stints whose rounds were dealt since ``since``, newest first (``books.stints``)."""
    rounds = (Round.objects.filter(dealer=dealer, dealt_at__gte=since, held=False)
              .order_by("table__code", "dealt_at").values_list("table__code", "dealer", "dealt_at", "gaming_day"))
    return sorted(stints_of(rounds.iterator(chunk_size=2000), gap=settings.STINT_BREAK),
                  key=lambda s: s.first, reverse=True)


def weeks_dealt(whose: Q, *, day_to: date, weeks: int, by_dealer: bool) -> list[DealtWeek]:
    """The rounds ``whose`` picks out (a dealer's, a table's) in the ``weeks`` ISO weeks that end
    with ``day_to``'s, week by week and currency by currency: rounds and the hours dealt (over
    stints, a break ending one: ``books.stints``, a dealer's at each table where ``by_dealer``,
    else the table's by any dealer), hands, handle and the house's win settled and as paid (the
    days' totals, ``rounds.DayTotal``, counted as the nightly report counts seats), and the payout
    mismatches over and under (never the informational findings; from the totals too, held rounds'
    among them). One grouped read of the totals and one of the rounds' moments."""
    first = day_to - timedelta(days=day_to.weekday()) - timedelta(weeks=weeks - 1)
    found: dict[tuple[date, str], DealtWeek] = {}

    def week_of(week, currency: str) -> DealtWeek:
        key = (_as_date(week), currency)
        if key not in found:
            found[key] = DealtWeek(week=key[0], currency=currency)
        return found[key]

    # Rounds, hands and money from the days' totals (``rounds.DayTotal``): a few rows a day.
    totals = (DayTotal.objects.filter(whose, gaming_day__gte=first, gaming_day__lte=day_to)
              .annotate(week=TruncWeek("gaming_day", output_field=DateField()))
              .values("week", currency=F("config_version__currency")).order_by()
              .annotate(n=Sum("rounds"), **{name: Sum(name) for name in ("hands", *MONEY, *MISMATCHES)}))
    for row in totals:
        if not row["n"] and not row["mismatches"]:
            continue  # held rounds alone: in no week's books
        week = week_of(row["week"], row["currency"])
        week.rounds += row["n"]
        week.hands += row["hands"]
        week.handle += sum(row[f"handle_{bet}"] for bet in BETS)
        week.win -= sum(row[f"result_{bet}"] for bet in BETS)
        week.win_paid -= sum(row[f"paid_{bet}"] for bet in BETS)
        week.overpaid += row["overpaid"]
        week.underpaid += row["underpaid"]
        week.overpaid_amount += row["overpaid_amount"]
        week.underpaid_amount += row["underpaid_amount"]
    rounds = Round.objects.filter(whose, gaming_day__gte=first, gaming_day__lte=day_to, held=False)
    # A stint is credited to the week and currency of its first round's gaming day.
    moments = (rounds.order_by("table_id", *(["dealer"] if by_dealer else []), "dealt_at")
               .values_list("table_id", "dealer" if by_dealer else "table_id", "dealt_at",
                            "gaming_day", "config_version__currency"))
    rows = ((table, who, at, (day, currency)) for table, who, at, day, currency in moments.iterator(chunk_size=5000))
    for stint in stints_of(rows, gap=settings.STINT_BREAK):
        day, currency = stint.tag
        week_of(day - timedelta(days=day.weekday()), currency).hours += hours_of(stint.span)
    return sorted(found.values(), key=lambda w: (w.currency, w.week))


@dataclass(frozen=True, slots=True)
class ConfigGiven:
    at: datetime
    config: str
    actor_name: str
    action: str  # the event's: "table.key_issued" (registered), "table.key_rotated" (a key, perhaps a new config)


def table_configs(*, table) -> list[ConfigGiven]:
    """The configurations ``table`` was given, oldest first, as the trail recorded its registration and
    each later registration under another configuration (``rounds.services.table_register``)."""
    events = AuditEvent.objects.filter(object_type="rounds.table", object_id=str(table.pk),
                                       action__in=("table.key_issued", "table.key_rotated")).order_by("seq")
    given, last = [], None
    for event in events:
        config = (event.after or {}).get("config") if isinstance(event.after, dict) else None
        if config and config != last:
            given.append(ConfigGiven(event.at, config, event.actor_name, event.action))
            last = config
    return given


@dataclass(frozen=True, slots=True)
class PoolOpened:
    pool: str
    currency: str
    seq: int
    at: datetime
    amount: Decimal


def pools_opened(*, codes: list[str]) -> list[PoolOpened]:
    """Each pool's opening, at the moment its books open (``progressive.selectors.openings``)."""
    first = openings().filter(pool__code__in=codes).select_related("pool").order_by("pool__code")
    return [PoolOpened(e.pool.code, e.pool.currency, e.seq, e.books_open, e.amount) for e in first]


# The latest of game protection's findings a page reads the evidence of: far more than a floor has.
FINDINGS_READ = 500


def protection_findings_about(*, table: str = "", dealer: str = "", most: int = 50) -> list[ProtectionFinding]:
    """Game protection's findings that name ``table`` (or ``dealer``), or whose evidence's decisions
    were dealt at that table (by that dealer): a hole-carder's finding names a player, yet every
    step of it may have been dealt at one table. Newest first, at most ``most``; read over the latest
    ``FINDINGS_READ`` findings (a floor's whole history of them)."""
    latest = list(ProtectionFinding.objects.order_by("-day_to", "-id")[:FINDINGS_READ])
    his: set[int] = set()
    if dealer:
        steps = {step.get("round") for f in latest for step in (f.evidence or {}).get("steps", [])}
        his = set(Round.objects.filter(pk__in={pk for pk in steps if isinstance(pk, int)}, dealer=dealer)
                  .values_list("pk", flat=True))
    about = []
    for finding in latest:
        steps = (finding.evidence or {}).get("steps", [])
        if table:
            named = finding.table == table or any(step.get("table") == table for step in steps)
        else:
            named = finding.dealer == dealer or any(step.get("round") in his for step in steps)
        if named:
            finding.named_directly = (finding.table == table) if table else (finding.dealer == dealer)
            about.append(finding)
    return about[:most]
