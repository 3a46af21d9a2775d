"""Reconciliation reports in the admin: read-only, as tables and charts (infra.charts).

Money is written with its currency and grouped digits (infra.money_display),
hold in percent, a band on one line; every flag links to the rounds behind it.

Registered by ``audit/admin.py``. Reports are written by the nightly job and
``manage.py reconcile`` only; here they are read.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe

from books.figures import chart_order
from books.report_figures import (
    ChainFigures, Figures, GroupFigures, Groups, PoolFigures, ReportFigures, figures_json,
)
from books.report_reader import Unreadable, read_figures, read_flag, read_group, read_summary
from game.findings import PAYOUT_MISMATCH
from game.rules import BETS
from infra.moments import moment_shown, moments_shown_in
from infra import charts
from infra.gaming_day import ClockError, gaming_day_of, gaming_day_window
from infra.money_display import percent, whole
from rounds.models import Table
from rounds.window import window_opens
from trail.admin import ReadOnlyAdmin
from trail.admin_exports import CsvExportAdmin

from . import selectors
from .admin_floor import FloorPages, dealer_url, table_url
from .counts import current_counts
from .exports import REPORTS
from .models import ReconciliationReport
from .reconciliation.config import day_to_reconcile, report_maker
from .reconciliation.staleness import late_rounds_of, stale_days_reports, stale_marked
from .reconciliation.selectors import NO_DEALER, reports_kept
from .shifts import parse_shifts

# Charts of a table's or dealer's days on one page: the flagged first, then the largest handle.
CHARTED_GROUPS = 6
STANDING_GROUPS = 24  # in the chart of where each stands in its band
CHART_DAYS = 30
MISMATCH_WEEKS = 8
CHARTED_DEALERS = 8
# The rows a long table of the page shows before "and N more": the page stays light on a busy day.
SHOWN_ROWS = 25
WHOLE = "whole"  # the query parameter naming the tables shown whole
LONG_TABLES = ("dealers", "flags", "tripped")
ROUNDS_LIST = "admin:rounds_round_changelist"
TEMPLATES = "admin/audit/reconciliationreport/"


# ---- the page's numbers: one form each ------------------------------------------------------


# A report's money as the casino writes it: "68,235.00 SEK" (Decimal only: infra.money_display).
amount = charts.amount_text


def count(value) -> str:
    """Rounds, hands, events: digits grouped ("100,000")."""
    if value in (None, ""):
        return "–"
    return whole(int(value))


def hold(value) -> SafeString | str:
    """A hold the report keeps in percent to four places, shown to two ("5.76 %"), exact on hover."""
    if value in (None, ""):
        return "–"
    return format_html('<span title="{} %" class="nowrap">{}</span>', value, percent(value))


def band_text(low, high, currency: str) -> SafeString:
    """The 95 % band on one line: "-1,200.00 … 3,400.00 SEK"."""
    return format_html('<span class="nowrap">{} … {}</span>', amount(low, ""), amount(high, currency))


def scored_text(g: GroupFigures) -> SafeString | str:
    """The share of a group's hands game protection scored, and a word when it is not all of them."""
    if g.scored_percent is None:
        return "–"
    share = hold(g.scored_percent)
    if g.fully_scored:
        return share
    return format_html('<strong class="report-partly" title="{} of {} hands scored: its bands judge by the '
                       'theoretical at optimal play">{} partly</strong>',
                       count(g.scored_hands), count(g.hands), share)


def theoretical_cells(g: GroupFigures, currency: str) -> list:
    """Both theoretical wins of a group (base game and Trips), the skill amount between them,
    the scored share, and which of the two its bands judged by (a report made before decisions
    were scored: the optimal one, ``report_figures.upgraded``)."""
    return [amount(g.theoretical_optimal, currency), amount(g.skill, currency),
            amount(g.theoretical_actual, currency), scored_text(g), g.bands.total.theoretical]


THEORETICAL_HEADERS = ["theoretical, optimal play", "skill", "theoretical, actual play", "scored",
                       "band judged at"]


def _difference(paid, settled, currency: str) -> SafeString | str:
    """What the dealers' errors gave the house (paid − settled), marked where they paid out more."""
    if paid is None or settled is None:
        return "–"  # a report made before what was paid was kept
    difference = Decimal(paid) - Decimal(settled)
    if difference < 0:
        return format_html('<span class="report-alert">{}</span>', amount(difference, currency))
    return amount(difference, currency)


def _kept_groups(kept: list[selectors.KeptDealer]) -> list[tuple[str, str, GroupFigures]] | Unreadable:
    """Dealers kept apart as ``(dealer, currency, figures)``, read through their declaration; a row in
    no shape it reads (edited by hand) makes the section say so, never fail."""
    rows = []
    for d in kept:
        figures = read_group(d.figures)
        if isinstance(figures, Unreadable):
            return Unreadable(f"dealer {d.dealer} ({d.currency}): {figures.reason}")
        rows.append((d.dealer, d.currency, figures))
    return rows


def _table(headers: list[str], rows: list[list]) -> SafeString:
    return render_to_string(TEMPLATES + "table.html", {"headers": headers, "rows": rows})


def _shown(report, section: str, rows: list, total: int | None = None) -> tuple[list, SafeString | str]:
    """The first ``SHOWN_ROWS`` of ``rows`` and a line saying how many more and linking to all of
    them (the page again with ``?whole=<section>``); all of them when the page was asked so.
    ``total``: how many there are where ``rows`` were read as the page shows them (the first only)."""
    whole = getattr(report, "_whole", ())
    total = len(rows) if total is None else total
    if total <= SHOWN_ROWS or section in whole:
        return rows, ""
    query = f"{WHOLE}={','.join(sorted({*whole, section}))}"  # names of LONG_TABLES only: nothing to quote
    return rows[:SHOWN_ROWS], format_html(
        '<p class="help chart-caption shown-rows">The first {} of {}: '
        '<a href="?{}#{}">and {} more</a>.</p>', SHOWN_ROWS, count(total), query, section,
        count(total - SHOWN_ROWS))


def _table_shown(report, section: str, headers: list[str], rows: list, cells, total: int | None = None) -> SafeString:
    """``rows`` as ``_shown`` keeps them, each made a row of cells by ``cells``, under an anchor."""
    kept, more = _shown(report, section, rows, total)
    return format_html('<span id="{}"></span>{}{}', section, _table(headers, [cells(row) for row in kept]), more)


def key_values(value) -> SafeString | str:
    """A nested record (a report's inputs, its re-verification) as key/value tables, not JSON; its
    moments on the casino's clock, as every page writes them."""
    if isinstance(value, Figures):
        value = figures_json(value)
    value = moments_shown_in(value)
    if value is None or value == {} or value == []:
        return "–"
    if isinstance(value, dict):
        rows = [(str(k).replace("_", " "), key_values(v)) for k, v in value.items()]
        return render_to_string(TEMPLATES + "key_values.html", {"rows": rows})
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            texts = ["–" if v is None else str(v) for v in value]
            if sum(len(t) for t in texts) <= 80:
                return ", ".join(texts)
            return format_html_join(mark_safe("<br>"), "{}", ((t,) for t in texts))
        return format_html_join(mark_safe("<br>"), "{}", ((key_values(v),) for v in value))
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _checks(pool: PoolFigures) -> SafeString | str:
    failed = [c for c in pool.checks if not c.ok]
    if not failed:
        return "yes"
    return format_html_join(
        mark_safe("<br>"), '<strong class="report-alert wraps">NO: {}</strong> {}',
        ((c.check, "; ".join(c.problems[:3])) for c in failed),
    )


def bar(value: Decimal, largest: Decimal) -> SafeString:
    width = int(value / largest * 60) if largest else 0
    return format_html('<svg width="60" height="10"><rect width="{}" height="10" fill="#a33"/></svg>', width)


# ---- the rounds behind a figure ---------------------------------------------------------------


def _days_query(day_from: date, day_to: date) -> dict:
    if day_from == day_to:
        return {"gaming_day": str(day_from)}
    return {"gaming_day__gte": str(day_from), "gaming_day__lt": str(day_to + timedelta(days=1))}


def rounds_list() -> str:
    """The rounds list's address ("" where its admin is not registered)."""
    try:
        return reverse(ROUNDS_LIST)
    except NoReverseMatch:
        return ""


def rounds_url(scope: str, key: str, *, day_from: date, day_to: date, table_ids: dict[str, int],
               clock: dict | None = None, listed_at: str | None = None) -> str:
    """The rounds list filtered to those behind a table's, dealer's, player's or shift's figures.

    The parameters are the rounds list's own filters (rounds.admin.rounds): ``table__id__exact``,
    ``dealer`` (``dealer__exact`` for rounds with none), ``player``, and the gaming days; a shift
    is the dealt_at window it covers on a single day. Empty when the list cannot say it.
    ``listed_at``: the list's address (``rounds_list``), where a page that links hundreds of
    figures has looked it up once.
    """
    query = _days_query(day_from, day_to)
    if scope == "table":
        if key not in table_ids:
            return ""
        query = {"table__id__exact": table_ids[key], **query}
    elif scope == "dealer":
        query = {**({"dealer__exact": ""} if key == NO_DEALER else {"dealer": key}), **query}
    elif scope == "player":
        query = {"player": key, **query}
    elif scope == "shift":
        window = _shift_window(key, day_from, day_to, clock or {})
        if window is None:
            return ""
        query = {"dealt_at__gte": window[0].isoformat(), "dealt_at__lt": window[1].isoformat()}
    else:
        return ""
    listed_at = rounds_list() if listed_at is None else listed_at
    return f"{listed_at}?{urlencode(query)}" if listed_at else ""


def _shift_window(name: str, day_from: date, day_to: date, clock: dict):
    """A shift's one stretch of a single gaming day, in UTC; None when it has two (it spans the
    cut-off) or the report covers several days."""
    if day_from != day_to or not clock.get("shifts") or "time_zone" not in clock:
        return None
    try:
        shifts = parse_shifts(",".join(f"{n}={start}" for n, start in clock["shifts"]))
    except ClockError:
        return None
    day_start, day_end = gaming_day_window(day_from, time_zone=clock["time_zone"],
                                           cutoff_hour=int(clock.get("cutoff_hour", 0)))
    zone = ZoneInfo(clock["time_zone"])
    starts = [datetime.combine(day_from, s.start, tzinfo=zone) for s in shifts]
    # A start before the cut-off falls on the gaming day's second calendar day.
    starts = [s + timedelta(days=1) if s < day_start else s for s in starts]
    order = sorted(zip(starts, shifts, strict=True), key=lambda pair: pair[0])
    for i, (start, shift) in enumerate(order):
        if shift.name != name:
            continue
        end = order[i + 1][0] if i + 1 < len(order) else day_end
        if i == len(order) - 1 and order[0][0] != day_start:
            return None  # the shift running at the cut-off also ends this day: two stretches
        return start.astimezone(UTC), end.astimezone(UTC)
    return None


def _flag_link(text: str, url: str) -> SafeString | str:
    if not url:
        return text
    return format_html('<a href="{}" title="the rounds behind it">{}</a>', url, text)


class StaleFilter(admin.SimpleListFilter):
    """The ended days' current reports that did not count a round of their day: the list the pages'
    count of stale reports opens (``staleness.stale_days_reports``)."""

    title = "stale"
    parameter_name = "stale"

    def lookups(self, request, model_admin):
        return [("yes", "stale: rounds of its day it did not count")]

    def queryset(self, request, queryset):
        if self.value() != "yes":
            return queryset
        stale = stale_days_reports(books_open=window_opens(), last_ended=day_to_reconcile())
        return queryset.filter(pk__in=[report.pk for report in stale])


@admin.register(ReconciliationReport)
class ReconciliationReportAdmin(FloorPages, CsvExportAdmin, ReadOnlyAdmin):
    csv_export = REPORTS

    list_display = ("__str__", "status", "stale", "rounds", "flags", "drift", "chain_ok", "created_at",
                    "finished_at")
    list_filter = ("status", "chain_ok", StaleFilter)
    date_hierarchy = "day_from"

    def get_queryset(self, request):
        # The list's rows (and its stale column, ``staleness``) never read the figures or inputs,
        # megabytes each on a busy day; the report's page reads them (``get_object``).
        return stale_marked(super().get_queryset(request)).defer("figures", "summary", "inputs")

    def get_object(self, request, object_id, from_field=None):
        """The report with its summary (its figures but each player's and dealer's parts and its
        flags: tens of megabytes on a busy day), read through their declaration, and the dealers the
        page shows read from their rows (``ReportDealer``) by their places; its flags are read from
        theirs (``ReportFlag``, ``_flags``). The charts read the to-date bands of the dealers they
        show from ``ReportBand``."""
        meta = ReconciliationReport._meta
        field = meta.pk if from_field is None else meta.get_field(from_field)
        try:
            key = {field.name: field.to_python(object_id)}
            report = self.get_queryset(request).defer(None).defer("figures").get(**key)
        except (ReconciliationReport.DoesNotExist, ValidationError, ValueError):
            return None
        report._whole = set(request.GET.get(WHOLE, "").split(",")) & set(LONG_TABLES)
        report._dealers = selectors.report_dealers(
            report_id=report.pk, shown=None if "dealers" in report._whole else SHOWN_ROWS,
            charted=max(STANDING_GROUPS, CHARTED_GROUPS))
        report._read_figures = read_summary(report.summary)
        return report

    @admin.display(description="stale", boolean=True)
    def stale(self, report) -> bool:
        """Rounds of its days it did not count were stored after it: a new version is to be made."""
        return bool(getattr(report, "may_be_stale", False)) and bool(late_rounds_of(report))

    def changelist_view(self, request, extra_context=None):
        # What an operator must not have to look for: ended days without their report, stale ones, a stuck run.
        from django.contrib import messages
        kept = reports_kept(books_open=window_opens(), last_ended=day_to_reconcile())
        if kept.days_missing:
            messages.warning(request, f"{kept.days_missing} ended gaming day(s) have no current report "
                             f"(the oldest {kept.oldest_missing}): {report_maker()}.")
        if kept.days_stale:
            messages.warning(request, f"{kept.days_stale} day(s) have a stale report: rounds of the day it did not "
                             f"count were stored after it (the oldest {kept.oldest_stale}); {report_maker()}.")
        if kept.oldest_running_since and timezone.now() - kept.oldest_running_since > timedelta(hours=1):
            messages.warning(request, f"A report has been running since {moment_shown(kept.oldest_running_since)}: "
                             "longer than any day takes.")
        return super().changelist_view(request, extra_context)
    fieldsets = (
        (None, {"fields": ("day_from", "day_to", "version", "status", "late_rounds", "requested_by",
                           "created_at", "finished_at", "failures", "retry_at", "error")}),
        ("Headline", {"fields": ("rounds", "flags", "drift", "alerts", "scoring", "casino_table")}),
        ("Tables: house win against the theoretical band", {"fields": ("tables_table", "tables_chart")}),
        ("Tables: the cage's count against the books", {"fields": ("counts_table",)}),
        ("Tables: month and year to date", {"fields": ("to_date_table",)}),
        ("Dealers: accuracy", {"fields": ("dealers_table", "dealers_chart", "mismatches_chart")}),
        ("Shifts", {"fields": ("shifts_table",)}),
        ("Progressive pools", {"fields": ("pools_table",)}),
        ("Flags", {"fields": ("flags_table",)}),
        ("Dual control: meter adjustments and versions", {"fields": ("dual_control_table",)}),
        ("Regulators' variance tests", {"fields": ("variance_table",)}),
        ("Re-verification and audit chain", {"fields": (
            "reverification", "chain_ok", "chain_walked", "chain_last_hash", "chain_day", "chain_head")}),
        ("Inputs", {"fields": ("engine_version", "inputs_json")}),
        ("Parts", {"fields": ("parts_table",)}),
    )

    def _figures(self, report) -> ReportFigures | Unreadable | None:
        """The report's figures read through their declaration, once a page (``report_figures``)."""
        if not hasattr(report, "_read_figures"):
            report._read_figures = read_figures(report.figures)
        return report._read_figures

    def _dealers(self, report) -> selectors.KeptDealers | None:
        """The report's dealers the page shows, from their rows (``get_object`` reads them)."""
        if not hasattr(report, "_dealers"):
            report._dealers = selectors.report_dealers(report_id=report.pk, shown=SHOWN_ROWS,
                                                       charted=max(STANDING_GROUPS, CHARTED_GROUPS))
        return report._dealers

    def _table_ids(self, report) -> dict[str, int]:
        """The report's tables by code, for the links to their rounds: one query a page."""
        cached = getattr(report, "_table_ids", None)
        if cached is None:
            figures = self._figures(report)
            codes = set(figures.tables) if figures else set()  # a table flagged is one of them
            cached = dict(Table.objects.filter(code__in=codes).values_list("code", "pk")) if codes else {}
            report._table_ids = cached
        return cached

    def _rounds_url(self, report, scope: str, key: str) -> str:
        figures = self._figures(report)
        if not hasattr(report, "_rounds_list"):
            report._rounds_list = rounds_list()  # a page links hundreds of figures: looked up once
        return rounds_url(scope, key, day_from=report.day_from, day_to=report.day_to,
                          table_ids=self._table_ids(report), listed_at=report._rounds_list,
                          clock=(figures.parameters if figures else None) or report.inputs.get("clock"))

    @admin.display(description="parts")
    def parts_table(self, report) -> SafeString | str:
        """Each piece of the run (a table's rounds, the players, a pool's ledger, a segment of the
        chain) with its state, attempts and moments: a table of text, where an inline of a form a
        part weighed much of a busy night's page (a part a table)."""
        parts = report.parts.defer("figures").order_by("kind", "key")
        rows = [[part.get_kind_display(), part.key, part.get_status_display(), count(part.attempts),
                 moment_shown(part.started_at), moment_shown(part.heartbeat_at), moment_shown(part.finished_at),
                 part.error or "–"] for part in parts]
        if not rows:
            return "–"
        return _table(["part", "key", "status", "attempts", "started", "last heartbeat", "finished", "error"], rows)

    @admin.display(description="rounds stored after it")
    def late_rounds(self, report) -> SafeString | str:
        """Rounds of its days stored after it opened (``staleness``): it undercounts until superseded."""
        late = late_rounds_of(report, self._figures(report))
        if not late:
            return "none"
        return format_html(
            '<strong class="report-alert">stale: {} round(s) of its days stored after it ({})</strong>; '
            "{} (a new version)", sum(late.values()),
            ", ".join(f"{code}: {n}" for code, n in late.items()), report_maker())

    @admin.display(description="alerts")
    def alerts(self, report) -> SafeString | str:
        figures = self._figures(report)
        if not figures or not figures.alerts:
            return "none"
        return format_html_join(mark_safe("<br>"), '<strong class="report-alert">{}</strong>',
                                ((a,) for a in figures.alerts))

    @admin.display(description="decisions scored")
    def scoring(self, report) -> SafeString | str:
        figures = self._figures(report)
        if not figures:
            return "–"
        scoring = figures.scoring
        if scoring is None:
            return "made before decisions were scored: every band judged at optimal play"
        if not scoring.casino:
            return "no rounds were dealt in the range"
        shares = format_html_join(
            ", ", "{} of {} {} hands ({})",
            ((count(c.scored_hands), count(c.hands), currency, hold(c.scored_percent))
             for currency, c in scoring.casino.items()))
        partly = [f"{n} {scope}" for scope, n in scoring.not_fully_scored.items() if n]
        if not partly:
            return format_html("{}; every group fully scored, every band judged at actual play", shares)
        return format_html('{}; <strong class="report-partly">not fully scored, so judged at optimal play: '
                           '{}</strong>', shares, ", ".join(partly))

    @admin.display(description="casino, one block per currency")
    def casino_table(self, report):
        figures = self._figures(report)
        if isinstance(figures, Unreadable):
            return figures.reason
        if not figures or not figures.casino:
            return "no rounds were dealt in the range"
        rows = []
        for currency, block in figures.casino.items():
            paid = block.win_paid or {}
            rows += [[currency, bet, amount(block.handle.get(bet), currency), amount(block.win.get(bet), currency),
                      hold(block.hold_percent.get(bet)), amount(paid.get(bet), currency),
                      _difference(paid.get(bet), block.win.get(bet), currency)] for bet in BETS]
            rows.append([currency, "total", amount(block.handle_total, currency),
                         amount(block.win_total, currency), hold(block.hold_percent.get("total")),
                         amount(block.win_paid_total, currency), _difference(block.win_paid_total,
                                                                             block.win_total, currency)])
        table = _table(["currency", "bet", "handle", "house win, settled", "hold", "house win, paid",
                        "dealer difference"], rows)
        theoretical = _table(
            ["currency", "hands", "house win (Ante, Blind, Play, Trips)", *THEORETICAL_HEADERS],
            [[currency, count(block.hands), amount(block.bands.total.actual, currency),
              *theoretical_cells(block, currency)] for currency, block in figures.casino.items()])
        return mark_safe(table + theoretical + charts.caption(
            "Skill: what the players' scored decisions gave up against the best ones (Ante × Antes lost). "
            "The theoretical at actual play is the one at optimal play plus it; a group's bands judge by "
            "it only when every hand of the group was scored (docs/VARIANCE.md)."))

    def _groups(self, report, scope: str, groups: Groups) -> SafeString | str:
        if not groups:
            return "-"
        rows = []
        for key, by_currency in groups.items():
            for currency, g in by_currency.items():
                band, optimal = g.bands.total, g.bands_optimal.total
                url = self._rounds_url(report, scope, key)
                name = _flag_link(key, url) if scope != "table" else format_html(
                    '<a href="{}" title="its page">{}</a> (<a href="{}" data-count="{}">rounds</a>)',
                    table_url(key), key, url, g.rounds)
                rows.append([name, count(g.rounds), count(g.hands),
                             amount(g.handle_total, currency), amount(g.win_total, currency),
                             hold(g.hold_percent.get("total")), amount(g.win_paid_total, currency),
                             _difference(g.win_paid_total, g.win_total, currency), *theoretical_cells(g, currency),
                             format_html("{} in {}", amount(band.actual, currency),
                                         band_text(band.low_95, band.high_95, currency)),
                             _flag_link(f"{band.outside} %", url) if band.outside else "",
                             band_text(optimal.low_95, optimal.high_95, currency),
                             f"{optimal.outside} %" if optimal.outside else ""])
        return _table(["", "rounds", "hands", "handle", "house win, settled", "hold", "house win, paid",
                       "dealer difference", *THEORETICAL_HEADERS, f"{charts.BANDED} in its 95 % band", "outside",
                       "95 % band, optimal play", "outside, optimal play"], rows)

    @admin.display(description="tables")
    def tables_table(self, report):
        figures = self._figures(report)
        return self._groups(report, "table", figures.tables if figures else {})

    @admin.display(description="the count")
    def counts_table(self, report):
        """Each table's win by the cage's count beside the books' (paid and settled), read now: a count
        entered after the report shows here at once (``audit.counts``)."""
        figures = self._figures(report)
        if not figures:
            return "-"
        counts = current_counts(day_from=report.day_from, day_to=report.day_to)
        days = (report.day_to - report.day_from).days + 1
        rows = []
        for key, by_currency in figures.tables.items():
            for currency, g in by_currency.items():
                counted = counts.pop((key, currency), None)
                paid = g.win_paid_total
                if counted is None:
                    rows.append([key, currency, "not counted", "–", amount(paid, currency),
                                 amount(g.win_total, currency), "–"])
                    continue
                short = "" if counted.days == days else f" ({counted.days} of {days} days)"
                unexplained = None if paid is None else counted.win - paid
                rows.append([key, currency, f"counted{short}", amount(counted.win, currency), amount(paid, currency),
                             amount(g.win_total, currency),
                             format_html('<strong class="report-alert">{}</strong>', amount(unexplained, currency))
                             if unexplained else amount(unexplained, currency)])
        for (key, currency), counted in sorted(counts.items()):  # counted, and no round in the report
            rows.append([key, currency, "counted, no rounds", amount(counted.win, currency), "–", "–",
                         format_html('<strong class="report-alert">{}</strong>', amount(counted.win, currency))])
        enter = reverse("admin:audit_tablecount_changelist")
        return mark_safe(_table(["table", "", "count", "win by the count", "win by what was paid",
                                 "win by the rules", "count − paid"], rows) + format_html(
            '<p class="help chart-caption">The service cannot know the cash: the drop, fills, credits and chip '
            "trays are the cage's, entered or imported as <a href=\"{}\">counts</a> and read as they stand "
            "now. Count − paid is what the rounds the tables sent do not explain.</p>", enter))

    @admin.display(description="to date")
    def to_date_table(self, report):
        figures = self._figures(report)
        rows = []
        for period, label in (("month_to_date", "month to date"), ("year_to_date", "year to date")):
            rolled = figures.period(period) if figures else None
            if rolled is None:
                continue
            for key, by_currency in rolled.tables.items():
                for currency, g in by_currency.items():
                    band = g.bands.total
                    dealt = (rolled.days_dealt or {}).get("tables", {}).get(key, {}).get(currency)
                    rows.append([label, key, count(dealt),
                                 amount(g.handle_total, currency), amount(g.win_total, currency),
                                 hold(g.hold_percent.get("total")), *theoretical_cells(g, currency),
                                 band_text(band.low_95, band.high_95, currency),
                                 f"{band.outside} %" if band.outside else ""])
        if not rows:
            return "only a single day's report carries its month and year to date"
        return _table(["period", "table", "days dealt", "handle", "house win", "hold", *THEORETICAL_HEADERS,
                       "95 % band", "outside"], rows)

    @admin.display(description="shifts")
    def shifts_table(self, report):
        figures = self._figures(report)
        return self._groups(report, "shift", figures.shifts if figures else {})

    @admin.display(description="dealers")
    def dealers_table(self, report):
        kept = self._dealers(report)
        if not kept or not isinstance(self._figures(report), ReportFigures):
            return "-"  # (figures it cannot read say why in the casino's table)
        # The first of them, read in their order by their places in it.
        tables = {d.dealer: d.tables for d in kept.by_accuracy}
        rows = _kept_groups(kept.by_accuracy)
        if isinstance(rows, Unreadable):
            return rows.reason
        largest = kept.largest_rate

        def cells(row) -> list:
            d, c, g = row
            url = self._rounds_url(report, "dealer", d)
            outside = g.bands.total.outside
            name = _flag_link(d, url) if d == NO_DEALER else format_html(
                '<a href="{}" title="his page">{}</a> (<a href="{}">rounds</a>)', dealer_url(d), d, url)
            return [
                name, ", ".join(tables.get(d, [])), count(g.hands), count(g.mismatches),
                "–" if g.mismatches_per_1000 is None else g.mismatches_per_1000,
                bar(g.mismatches_per_1000 or Decimal(0), largest),
                amount(g.overpaid, c), amount(g.underpaid, c), count(g.limit_breaks), amount(g.win_total, c),
                amount(g.win_paid_total, c), _difference(g.win_paid_total, g.win_total, c),
                *theoretical_cells(g, c), _flag_link(f"{outside} %", url) if outside else "",
            ]
        return _table_shown(report, "dealers", [
            "dealer", "tables", "hands", "mismatches", "per 1,000 hands", "", "overpaid",
            "underpaid", "limit breaks", "house win, settled", "house win, paid", "dealer difference",
            *THEORETICAL_HEADERS, "outside"], rows, cells, kept.count)

    # ---- charts ---------------------------------------------------------------------------

    def _group_charts(self, report, scope: str, label: str) -> SafeString | str:
        """Where each group stands in its band (day, month, year to date), then the days of the
        groups that matter most: those outside their band first, then the largest handle."""
        figures = self._figures(report)
        if scope == "dealers":  # the first of them, read in this order by their places in it
            kept = self._dealers(report) if isinstance(figures, ReportFigures) else None
            pairs = _kept_groups(kept.charted) if kept else []
            if isinstance(pairs, Unreadable):
                return pairs.reason
            groups_count = kept.count if kept else 0
        else:
            groups = figures.groups(scope) if figures else {}
            pairs = [(key, currency, g) for key, by_currency in groups.items() for currency, g in by_currency.items()]
            pairs.sort(key=lambda p: chart_order(outside=p[2].bands.total.outside, handle=p[2].handle_total,
                                                 key=p[0], currency=p[1]))
            groups_count = len(pairs)
        if not pairs:
            return "-"
        single = report.day_from == report.day_to
        standing = pairs[:STANDING_GROUPS]
        to_date = selectors.report_to_date_bands(report_id=report.pk, scope=scope,
                                                 keys={key for key, _, _ in standing}) if single else {}
        standings = [
            charts.Standing(
                label=f"{key} {currency}", currency=currency, link=self._rounds_url(report, label, key),
                bands={"day": figures_json(g.bands.total),
                       "month_to_date": to_date.get(("month_to_date", key, currency)),
                       "year_to_date": to_date.get(("year_to_date", key, currency))},
            )
            for key, currency, g in standing
        ]
        parts = [charts.standing_chart(
            title=f"{label.capitalize()}s: {charts.BANDED} against theoretical, in standard deviations",
            groups=standings, day_label="the day" if single else "the report's days")]
        charted = pairs[:CHARTED_GROUPS]
        series = selectors.report_band_series(scope=scope, groups=[(k, c) for k, c, _ in charted],
                                              day_to=report.day_to, days=CHART_DAYS)
        window = series.days[-CHART_DAYS:]
        links = {day: reverse("admin:audit_reconciliationreport_change", args=[pk])
                 for day, pk in series.reports.items()}
        days = []
        for key, currency, _ in charted:
            bands = series.bands["day", key, currency]
            days.append(charts.band_chart(
                title=f"{label} {key}, {currency}: {charts.BANDED}, by day", currency=currency,
                days=[charts.BandDay(day=d, band=bands.get(d), link=links.get(d, "")) for d in window],
                narrow=True))
        note = charts.caption(
            "Above: the day (or the report's days), the month and the year to date, in standard deviations "
            "from the theoretical win its band judges by (at actual play where every hand was scored, else "
            "at optimal play): within ±1.96 is within the 95 % band. Below: each day from its own "
            "current report (a day without one is a gap); a point opens that day's report. "
            + (f"{groups_count - len(charted)} more {label}s are in the table above, not charted."
               if groups_count > len(charted) else "")
        )
        return mark_safe("".join([*parts, charts.chart_row(days), note]))

    @admin.display(description="over days")
    def tables_chart(self, report):
        return self._group_charts(report, "tables", "table")

    @admin.display(description="over days")
    def dealers_chart(self, report):
        return self._group_charts(report, "dealers", "dealer")

    @admin.display(description="mismatches by week")
    def mismatches_chart(self, report):
        found = selectors.dealer_mismatches_by_week(day_to=report.day_to, weeks=MISMATCH_WEEKS, top=CHARTED_DEALERS)
        last_monday = report.day_to - timedelta(days=report.day_to.weekday())
        weeks = [last_monday - timedelta(weeks=n) for n in range(MISMATCH_WEEKS - 1, -1, -1)]
        if not found.dealers:
            return f"no payout mismatches in the {MISMATCH_WEEKS} weeks up to {report.day_to}"
        dealers = {d: [charts.WeekCount(w.week, w.mismatches, w.overpaid, w.underpaid)
                       for w in found.weeks if w.dealer == d] for d in found.dealers}

        links, listed_at = {}, rounds_list()
        for w in found.weeks:
            url = rounds_url("dealer", w.dealer, day_from=w.week,
                             day_to=min(w.week + timedelta(days=6), report.day_to), table_ids={},
                             listed_at=listed_at)
            if url:
                links[w.dealer, w.week] = f"{url}&{urlencode({'finding': PAYOUT_MISMATCH})}"
        chart = charts.mismatch_chart(
            title=f"Payout mismatches by dealer and ISO week, "
                  f"{charts.iso_week(weeks[0])} to {charts.iso_week(weeks[-1])}",
            weeks=weeks, dealers=dealers, links=links)
        return mark_safe(chart + charts.caption(
            f"By the rounds' gaming days; informational findings left out. Of them {count(found.overpaid)} paid "
            f"more than due, {count(found.underpaid)} less. A bar opens the dealer's rounds with a mismatch that "
            "week." + (f" {found.others} more dealers had fewer." if found.others else "")))

    @admin.display(description="pools")
    def pools_table(self, report):
        figures = self._figures(report)
        if not figures or not figures.pools:
            return "-"
        pools = figures.pools
        books = self._progressive_books(figures)
        table = _table(
            ["pool", "opening", "contributions", "awards", "fixed awards", "reseeds",
             "adjustments", "reversals", "overflow", "closing", "balances"],
            [[code, *(amount(value, p.currency) for value in (
                p.opening, p.contributions, p.awards, p.fixed_awards, p.reseeds, p.adjustments, p.reversals,
                p.overflow, p.closing)), _checks(p)] for code, p in pools.items()],
        )
        meters = charts.chart_row(
            meter_chart(p.series, title=f"{code}: the meter over the report's events", currency=p.currency)
            for code, p in pools.items()
        )
        return mark_safe(books + table + self._opened_later(report, pools) + meters)

    @staticmethod
    def _opened_later(report, pools: dict[str, PoolFigures]) -> str:
        """A pool whose books open (``progressive.selectors.books_opened``) after the report's days:
        said, so that a reader who sees the meter today higher by its opening knows why."""
        notes = []
        for opening in selectors.pools_opened(codes=list(pools)):
            day = gaming_day_of(opening.at)
            if day > report.day_to:
                notes.append(format_html(
                    '<p class="help chart-caption pool-opened">{} was opened on gaming day {} with {} (event #{}), '
                    "after these days: they hold none of its opening, and the meter today is that opening "
                    "higher than this closing and the days since.</p>",
                    opening.pool, day.isoformat(), amount(opening.amount, opening.currency), opening.seq))
        return "".join(notes)

    @staticmethod
    def _progressive_books(figures: ReportFigures) -> str:
        """The bets as an accountant reads them (``figures.progressive_books``), above the ledgers."""
        if figures.progressive is None:
            return charts.caption("The progressive bets as the books see them were not recorded by this "
                                  "version of the report: reconcile its range again to have them.")
        rows = [[b.currency, *(amount(value, b.currency) for value in (
            b.wagers, b.awards_from_meter, b.fixed_awards, b.paid_win, b.debt_opening, b.debt_closing, b.win)),
            "–" if b.hold_percent is None else f"{b.hold_percent} %"] for b in figures.progressive.values()]
        return _table(["", "wagers", "awards from the meters", "fixed awards", "cash left (wagers − awards)",
                       "meters owed at the start", "at the end", "the house's win", "hold"], rows) + charts.caption(
            "The meters, their overflow and reserves are owed to the players: an award from a meter pays "
            "that debt, and what the bets add to it is the house's cost. The house's win is the cash the "
            "bets left less what the debt grew by; the pools' ledgers below are where it comes from.")

    def _flags(self, report) -> selectors.KeptFlags:
        """The report's flags the page shows, from their rows (``ReportFlag``), in its order."""
        if not hasattr(report, "_flags_kept"):
            whole = "flags" in getattr(report, "_whole", ())
            report._flags_kept = selectors.report_flags(report_id=report.pk, shown=None if whole else SHOWN_ROWS)
        return report._flags_kept

    @admin.display(description="flags")
    def flags_table(self, report):
        kept = self._flags(report)
        if not kept.count:
            return "none"
        flags = [read_flag(stored) for stored in kept.first]
        unreadable = next((f for f in flags if isinstance(f, Unreadable)), None)
        if unreadable is not None:  # an Unreadable is falsy
            return unreadable.reason

        def cells(f) -> list:
            url = self._rounds_url(report, f.scope, f.key)
            return [f.scope, _flag_link(f.key, url), f.bet, _flag_link(f"{f.outside} %", url),
                    amount(f.actual, f.currency), amount(f.expected, f.currency), f.theoretical,
                    band_text(f.low_95, f.high_95, f.currency), "–" if f.z is None else f.z,
                    _flag_link("rounds", url) if url else "–"]
        return _table_shown(report, "flags", ["", "", "bet", "outside", "actual", "expected", "theoretical at",
                                              "95 % band", "z", "behind it"], flags, cells, total=kept.count)

    @admin.display(description="changes of the range")
    def dual_control_table(self, report):
        figures = self._figures(report)
        section = figures.dual_control if figures else None
        if section is None:
            return "not recorded (a report made before this section)"
        if not section.changes:
            return "none"
        rows = [[c.kind.replace("_", " "), c.what, c.at, c.asked_by, c.approved_by or "–",
                 format_html('<strong class="report-alert">{}</strong>', "one person alone") if c.alone
                 else "second person"] for c in section.changes[:500]]
        return _table(["", "", "at", "asked by", "approved by", ""], rows)

    @admin.display(description="tripped")
    def variance_table(self, report):
        figures = self._figures(report)
        tests = figures.variance_tests if figures else None
        if tests is None:
            return "run on a single day's report only"
        if not tests.trips:
            on = [code for code, setting in tests.settings.items() if setting.enabled]
            return f"none tripped ({', '.join(on) or 'no test enabled'})"
        return _table_shown(report, "tripped", ["test", "", "", "currency", "period", ""], tests.trips,
                            lambda t: [t.test, t.scope, t.key, t.currency, t.period, t.detail])

    def _chain(self, report) -> ChainFigures | None:
        figures = self._figures(report)
        return figures.chain if figures else None  # none to show: no figures, or none readable

    @admin.display(description="the range's audit events")
    def chain_day(self, report):
        chain = self._chain(report)
        if chain is None or not chain.day_events:
            return "no audit events were written in the range"
        return f"{count(chain.day_events)} events, the last #{chain.day_last_seq} {chain.day_last_hash}"

    @admin.display(description="audit chain walked")
    def chain_walked(self, report):
        chain = self._chain(report)
        if chain is None or not chain.walked:
            return "-"  # a report made before the walk started at the anchors
        held = chain.anchors_held
        anchors = f"{count(held)} anchor(s) kept outside held" if held else "no anchor yet, the whole chain"
        return f"{count(chain.checked)} events: {', '.join(chain.walked)}; {anchors}"

    @admin.display(description="chain head when the report was made")
    def chain_head(self, report):
        chain = self._chain(report)
        head = chain.head_at_report if chain else None
        return f"#{head.seq} {head.hash}" if head and head.hash else "no audit events yet"

    @admin.display(description="re-verification")
    def reverification(self, report):
        figures = self._figures(report)
        return key_values(figures.reverification if figures else None)

    @admin.display(description="inputs")
    def inputs_json(self, report):
        return key_values(report.inputs)


def meter_chart(series: list, *, title: str = "the meter", currency: str = "") -> SafeString | str:
    """The meter after each sampled event of the report's range (its ``series``), drawn by pygal."""
    if len(series) < 2:
        return "-"
    points = [charts.MeterPoint(at=0 if seq == "opening" else int(seq), meter=Decimal(value),
                                note="opening" if seq == "opening" else "")
              for seq, value in series]
    if points[0].note == "opening" and len(points) > 1:  # the opening stands just before the first event
        points[0] = charts.MeterPoint(at=max(0, points[1].at - 1), meter=points[0].meter, note="opening")
    return charts.meter_chart(title=title, currency=currency, points=points, width=charts.NARROW * 2)
