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

from .admin import ReadOnlyAdmin, ReadOnlyTabularInline, json_block
from .models import ReconciliationPart, ReconciliationReport

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
        ("Dealers: accuracy", {"fields": ("dealers_table",)}),
        ("Shifts", {"fields": ("shifts_table",)}),
        ("Progressive pools", {"fields": ("pools_table",)}),
        ("Flags", {"fields": ("flags_table",)}),
        ("Re-verification and audit chain", {"fields": (
            "reverification", "chain_ok", "chain_last_hash", "day_last_hash")}),
        ("Inputs", {"fields": ("engine_version", "inputs_json")}),
    )

    def _figures(self, report) -> dict:
        return report.figures or {}

    @admin.display(description="alerts")
    def alerts(self, report) -> SafeString | str:
        alerts = self._figures(report).get("alerts") or []
        if not alerts:
            return "none"
        return format_html_join(mark_safe("<br>"), '<strong style="color:#c00">{}</strong>', ((a,) for a in alerts))

    @admin.display(description="casino")
    def casino_table(self, report):
        casino = self._figures(report).get("casino")
        if not casino:
            return "-"
        return _table(
            ["bet", "handle", "house win", "hold"],
            [[bet, casino["handle"][bet], casino["win"][bet], casino["hold"][bet] or "-"]
             for bet in ("ante", "blind", "play", "trips", "progressive")]
            + [["total", casino["handle_total"], casino["win_total"], casino["hold"]["total"] or "-"]],
        )

    def _groups(self, groups: dict) -> SafeString | str:
        if not groups:
            return "-"
        rows = []
        for key, g in groups.items():
            band = g["bands"]["total"]
            rows.append([key, g["rounds"], g["hands"], g["handle_total"], g["win_total"],
                         g["hold"]["total"] or "-", band["expected"], f"{band['low_95']} … {band['high_95']}",
                         band_chart(band), band["outside"] or ""])
        return _table(["", "rounds", "hands", "handle", "house win", "hold", "theoretical",
                       "95 % band", "win against band", "outside"], rows)

    @admin.display(description="tables")
    def tables_table(self, report):
        return self._groups(self._figures(report).get("tables", {}))

    @admin.display(description="shifts")
    def shifts_table(self, report):
        return self._groups(self._figures(report).get("shifts", {}))

    @admin.display(description="dealers")
    def dealers_table(self, report):
        dealers = self._figures(report).get("dealers", {})
        if not dealers:
            return "-"
        rates = {d: _d(g["mismatches_per_1000"]) for d, g in dealers.items()}
        largest = max(rates.values(), default=Decimal(0))
        ordered = sorted(dealers.items(), key=lambda item: -rates[item[0]])
        return _table(
            ["dealer", "tables", "hands", "mismatches", "per 1,000 hands", "", "overpaid", "underpaid",
             "limit breaks", "house win", "outside"],
            [[d, ", ".join(g["tables"]), g["hands"], g["mismatches"], g["mismatches_per_1000"] or "-",
              bar(rates[d], largest), g["overpaid"], g["underpaid"], g["limit_breaks"], g["win_total"],
              g["bands"]["total"]["outside"] or ""] for d, g in ordered],
        )

    @admin.display(description="pools")
    def pools_table(self, report):
        pools = self._figures(report).get("pools", {})
        if not pools:
            return "-"
        return _table(
            ["pool", "opening", "contributions", "awards", "fixed awards", "reseeds", "adjustments",
             "overflow", "closing", "balances", "meter over the day"],
            [[code, p["opening"], p["contributions"], p["awards"], p["fixed_awards"], p["reseeds"],
              p["adjustments"], p["overflow"], p["closing"], "yes" if p["balanced"] else "NO",
              meter_chart(p.get("series", []))] for code, p in pools.items()],
        )

    @admin.display(description="flags")
    def flags_table(self, report):
        flags = self._figures(report).get("flags", [])
        if not flags:
            return "none"
        return _table(
            ["", "", "bet", "outside", "actual", "expected", "z"],
            [[f["scope"], f["key"], f["bet"], f["outside"], f["actual"], f["expected"], f["z"]]
             for f in flags[:200]],
        )

    @admin.display(description="re-verification")
    def reverification(self, report):
        return json_block(self._figures(report).get("reverification"))

    @admin.display(description="inputs")
    def inputs_json(self, report):
        return json_block(report.inputs)
