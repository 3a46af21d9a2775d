"""Reconciliation reports in the admin: read-only, as tables with small charts.

Registered from ``AuditConfig.ready`` so that ``audit/admin.py`` (the audit
log's admin) stays its own module. Reports are written by the nightly job
and ``manage.py reconcile`` only; here they are read.
"""

from __future__ import annotations

from decimal import Decimal

from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from rounds.engine.rules import BETS

from .admin import ReadOnlyAdmin, ReadOnlyTabularInline, json_block
from .models import ReconciliationPart, ReconciliationReport
from .reconciliation.figures import keeps_currencies

TABLE_STYLE = "border-collapse: collapse; font-variant-numeric: tabular-nums;"
CELL = "padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: right;"
CHART_WIDTH = 220


def _d(value) -> Decimal:
    return Decimal(str(value)) if value not in (None, "") else Decimal(0)


def _table(headers: list[str], rows: list[list]) -> SafeString:
    head = format_html_join("", '<th style="{}">{}</th>', ((CELL, h) for h in headers))
    body = format_html_join(
        "", "<tr>{}</tr>",
        ((format_html_join("", '<td style="{}">{}</td>', ((CELL, c) for c in row)),) for row in rows),
    )
    return format_html('<table style="{}"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>',
                       TABLE_STYLE, head, body)


def _percent(value: str | None) -> str:
    return f"{value} %" if value is not None else "-"


def _checks(pool: dict) -> SafeString | str:
    failed = [c for c in pool.get("checks", []) if not c["ok"]]
    if not failed:
        return "yes"
    return format_html_join(
        mark_safe("<br>"), '<strong style="color:#c00">NO: {}</strong> {}',
        ((c["check"], "; ".join(c["problems"][:3])) for c in failed),
    )


def band_chart(band: dict) -> SafeString:
    """Actual house win (dot) against the 99.7 % band (light), the 95 % band and the expectation."""
    low, high = _d(band["low_997"]), _d(band["high_997"])
    actual = _d(band["actual"])
    lo, hi = min(low, actual), max(high, actual)
    span = (hi - lo) or Decimal(1)

    def x(value) -> int:
        return int((_d(value) - lo) / span * (CHART_WIDTH - 10)) + 5

    colour = {"99.7": "#c00", "95": "#e80"}.get(band["outside"], "#070")
    return format_html(
        '<svg width="{w}" height="14" role="img" aria-label="win {a} against {l}..{h}">'
        '<rect x="{x1}" y="3" width="{w1}" height="8" fill="#eee"/>'
        '<rect x="{x2}" y="3" width="{w2}" height="8" fill="#ccd"/>'
        '<line x1="{xe}" x2="{xe}" y1="1" y2="13" stroke="#446"/>'
        '<circle cx="{xa}" cy="7" r="4" fill="{c}"/></svg>',
        w=CHART_WIDTH, a=band["actual"], l=band["low_95"], h=band["high_95"],
        x1=x(band["low_997"]), w1=max(1, x(band["high_997"]) - x(band["low_997"])),
        x2=x(band["low_95"]), w2=max(1, x(band["high_95"]) - x(band["low_95"])),
        xe=x(band["expected"]), xa=x(band["actual"]), c=colour,
    )


def bar(value: Decimal, largest: Decimal) -> SafeString:
    width = int(value / largest * 150) if largest else 0
    return format_html('<svg width="150" height="10"><rect width="{}" height="10" fill="#a33"/></svg>', width)


def meter_chart(series: list) -> SafeString | str:
    """The meter after each sampled event of the day, as a line."""
    if len(series) < 2:
        return "-"
    values = [_d(v) for _, v in series]
    low, high = min(values), max(values)
    span = (high - low) or Decimal(1)
    step = (CHART_WIDTH * 2) / (len(values) - 1)
    points = " ".join(f"{i * step:.1f},{58 - float((v - low) / span) * 56:.1f}" for i, v in enumerate(values))
    return format_html(
        '<svg width="{}" height="60" role="img" aria-label="meter {} to {}">'
        '<polyline points="{}" fill="none" stroke="#236" stroke-width="1.5"/></svg> {} … {}',
        CHART_WIDTH * 2, low, high, points, low, high,
    )


class PartInline(ReadOnlyTabularInline):
    model = ReconciliationPart
    fields = ("kind", "key", "status", "attempts", "started_at", "finished_at")
    readonly_fields = fields


@admin.register(ReconciliationReport)
class ReconciliationReportAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "status", "rounds", "flags", "drift", "chain_ok", "created_at", "finished_at")
    list_filter = ("status", "chain_ok")
    date_hierarchy = "day_from"
    inlines = [PartInline]
    fieldsets = (
        (None, {"fields": ("day_from", "day_to", "version", "status", "requested_by",
                           "created_at", "finished_at", "error")}),
        ("Headline", {"fields": ("rounds", "flags", "drift", "alerts", "casino_table")}),
        ("Tables: house win against the theoretical band", {"fields": ("tables_table",)}),
        ("Tables: month and year to date", {"fields": ("to_date_table",)}),
        ("Dealers: accuracy", {"fields": ("dealers_table",)}),
        ("Shifts", {"fields": ("shifts_table",)}),
        ("Progressive pools", {"fields": ("pools_table",)}),
        ("Flags", {"fields": ("flags_table",)}),
        ("Regulators' variance tests", {"fields": ("variance_table",)}),
        ("Re-verification and audit chain", {"fields": (
            "reverification", "chain_ok", "chain_last_hash", "chain_day", "chain_head")}),
        ("Inputs", {"fields": ("engine_version", "inputs_json")}),
    )

    def _figures(self, report) -> dict:
        # A report made before figures kept their currency is shown by its headline only.
        return report.figures if keeps_currencies(report.figures) else {}

    @admin.display(description="alerts")
    def alerts(self, report) -> SafeString | str:
        alerts = self._figures(report).get("alerts") or []
        if not alerts:
            return "none"
        return format_html_join(mark_safe("<br>"), '<strong style="color:#c00">{}</strong>', ((a,) for a in alerts))

    @admin.display(description="casino, one block per currency")
    def casino_table(self, report):
        if report.figures and not keeps_currencies(report.figures):
            return "made before figures kept their currency: reconcile the range again to read it"
        casino = self._figures(report).get("casino")
        if not casino:
            return "no rounds were dealt in the range"
        rows = []
        for currency, block in casino.items():
            rows += [[currency, bet, block["handle"][bet], block["win"][bet], _percent(block["hold_percent"][bet])]
                     for bet in BETS]
            rows.append([currency, "total", block["handle_total"], block["win_total"],
                         _percent(block["hold_percent"]["total"])])
        return _table(["currency", "bet", "handle", "house win", "hold"], rows)

    def _groups(self, groups: dict) -> SafeString | str:
        if not groups:
            return "-"
        rows = []
        for key, by_currency in groups.items():
            for currency, g in by_currency.items():
                band = g["bands"]["total"]
                rows.append([key, currency, g["rounds"], g["hands"], g["handle_total"], g["win_total"],
                             _percent(g["hold_percent"]["total"]), band["expected"],
                             f"{band['low_95']} … {band['high_95']}", band_chart(band), band["outside"] or ""])
        return _table(["", "currency", "rounds", "hands", "handle", "house win", "hold", "theoretical",
                       "95 % band", "win against band", "outside"], rows)

    @admin.display(description="tables")
    def tables_table(self, report):
        return self._groups(self._figures(report).get("tables", {}))

    @admin.display(description="to date")
    def to_date_table(self, report):
        figures = self._figures(report)
        rows = []
        for period, label in (("month_to_date", "month to date"), ("year_to_date", "year to date")):
            rolled = figures.get(period) or {}
            for key, by_currency in rolled.get("tables", {}).items():
                for currency, g in by_currency.items():
                    band = g["bands"]["total"]
                    rows.append([label, key, currency, len(rolled.get("days", [])), g["handle_total"],
                                 g["win_total"], _percent(g["hold_percent"]["total"]), band["expected"],
                                 f"{band['low_95']} … {band['high_95']}", band["outside"] or ""])
        if not rows:
            return "only a single day's report carries its month and year to date"
        return _table(["period", "table", "currency", "days", "handle", "house win", "hold", "theoretical",
                       "95 % band", "outside"], rows)

    @admin.display(description="shifts")
    def shifts_table(self, report):
        return self._groups(self._figures(report).get("shifts", {}))

    @admin.display(description="dealers")
    def dealers_table(self, report):
        figures = self._figures(report)
        dealers = figures.get("dealers", {})
        if not dealers:
            return "-"
        tables = figures.get("dealer_tables", {})
        rows = [(d, currency, g) for d, by_currency in dealers.items() for currency, g in by_currency.items()]
        rates = {(d, c): _d(g["mismatches_per_1000"]) for d, c, g in rows}
        largest = max(rates.values(), default=Decimal(0))
        rows.sort(key=lambda row: -rates[row[0], row[1]])
        return _table(
            ["dealer", "currency", "tables", "hands", "mismatches", "per 1,000 hands", "", "overpaid",
             "underpaid", "limit breaks", "house win", "outside"],
            [[d, c, ", ".join(tables.get(d, [])), g["hands"], g["mismatches"], g["mismatches_per_1000"] or "-",
              bar(rates[d, c], largest), g["overpaid"], g["underpaid"], g["limit_breaks"], g["win_total"],
              g["bands"]["total"]["outside"] or ""] for d, c, g in rows],
        )

    @admin.display(description="pools")
    def pools_table(self, report):
        pools = self._figures(report).get("pools", {})
        if not pools:
            return "-"
        return _table(
            ["pool", "currency", "opening", "contributions", "awards", "fixed awards", "reseeds",
             "adjustments", "reversals", "overflow", "closing", "balances", "meter over the day"],
            [[code, p["currency"], p["opening"], p["contributions"], p["awards"], p["fixed_awards"],
              p["reseeds"], p["adjustments"], p.get("reversals", "0"), p["overflow"], p["closing"],
              _checks(p), meter_chart(p.get("series", []))] for code, p in pools.items()],
        )

    @admin.display(description="flags")
    def flags_table(self, report):
        flags = self._figures(report).get("flags", [])
        if not flags:
            return "none"
        return _table(
            ["", "", "currency", "bet", "outside", "actual", "expected", "z"],
            [[f["scope"], f["key"], f.get("currency", ""), f["bet"], f["outside"], f["actual"], f["expected"],
              f["z"]] for f in flags[:200]],
        )

    @admin.display(description="tripped")
    def variance_table(self, report):
        tests = self._figures(report).get("variance_tests")
        if tests is None:
            return "run on a single day's report only"
        trips = tests["trips"]
        if not trips:
            on = [code for code, setting in tests["settings"].items() if setting["enabled"]]
            return f"none tripped ({', '.join(on) or 'no test enabled'})"
        return _table(["test", "", "", "currency", "period", ""],
                      [[t["test"], t["scope"], t["key"], t["currency"], t["period"], t["detail"]] for t in trips])

    @admin.display(description="the range's audit events")
    def chain_day(self, report):
        chain = self._figures(report).get("chain") or {}
        if not chain.get("day_events"):
            return "no audit events were written in the range"
        return f"{chain['day_events']} events, the last #{chain['day_last_seq']} {chain['day_last_hash']}"

    @admin.display(description="chain head when the report was made")
    def chain_head(self, report):
        head = (self._figures(report).get("chain") or {}).get("head_at_report") or {}
        return f"#{head['seq']} {head['hash']}" if head.get("hash") else "no audit events yet"

    @admin.display(description="re-verification")
    def reverification(self, report):
        return json_block(self._figures(report).get("reverification"))

    @admin.display(description="inputs")
    def inputs_json(self, report):
        return json_block(report.inputs)
