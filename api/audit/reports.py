"""Reconciliation reports through the API: a list, the whole report as JSON, and CSV.

The CSV has one row per scope (casino, table, dealer, shift, player), key,
currency and bet: what auditors load into a spreadsheet next to the casino's
own books. Every money row names its currency; hold is in percent. The
month- and year-to-date figures of a day's report follow as their own periods.
A band's row says which theoretical win it judged by (``theoretical``: at
``actual`` play when game protection scored every live hand of the group,
else at ``optimal`` play); the base-game and total rows carry the one at
optimal play beside it, the players' skill (what their decisions gave up) and
how much of the group was scored. ``win`` is the house's win by the rules
(settled), ``win_paid`` by what the dealers paid (the tables' reported
payouts), ``dealer_difference`` the second less the first: negative where
the dealers paid out more than the rules give. Both are empty in a report
made before what was paid was kept.
"""

from __future__ import annotations

from decimal import Decimal

import django_filters
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.pagination import CursorPagination

from api.authentication import EVERYONE
from audit.models import ReconciliationReport
from books.report_figures import ReportFigures, ToDate, figures_json
from books.report_reader import read_figures
from game.bets import BAND_BETS, OWN_BAND, WinBand
from game.rules import BETS
from infra.exports import csv_text
from infra.openapi import CSV_REQUEST, STAFF_ONLY, answers, refusal, staff_item, staff_pages
from infra.permissions import IsStaffReader
from infra.replicas import ReplicaReads

AUTHENTICATION = EVERYONE
SCOPES = ("tables", "dealers", "shifts", "players")
CSV_COLUMNS = [
    "period", "scope", "key", "currency", "bet", "rounds", "hands", "handle", "win", "hold_percent",
    "expected", "sd", "low_95", "high_95", "low_997", "high_997", "z", "outside",
    "theoretical", "expected_optimal", "skill", "scored_percent", "win_paid", "dealer_difference",
]
PERIODS = ("month_to_date", "year_to_date")


class ReportSummarySerializer(serializers.ModelSerializer):
    class Meta:
        model = ReconciliationReport
        fields = [
            "id", "day_from", "day_to", "version", "status", "engine_version", "created_at",
            "finished_at", "rounds", "flags", "drift", "chain_ok", "chain_last_hash", "day_last_hash",
        ]
        # An answer only: no bound a column takes from the database (SQLite's integers are
        # wider than PostgreSQL's), so the schema is the same on both.
        read_only_fields = fields


class ReportSerializer(ReportSummarySerializer):
    # Read through their declaration, older shapes upgraded; none where there are none to read
    # (a report running or failed, or one too old to read, which ``figures_unreadable`` says).
    figures = serializers.SerializerMethodField(allow_null=True)
    figures_unreadable = serializers.SerializerMethodField()

    class Meta(ReportSummarySerializer.Meta):
        fields = [*ReportSummarySerializer.Meta.fields, "inputs", "figures", "figures_unreadable", "error"]
        read_only_fields = fields

    @extend_schema_field(ReportFigures)
    def get_figures(self, report: ReconciliationReport) -> dict | None:
        figures = self._read(report)
        return figures_json(figures) if figures else None

    def get_figures_unreadable(self, report: ReconciliationReport) -> str:
        """Why a report's stored figures cannot be read ("" when they can, or there are none)."""
        return getattr(self._read(report), "reason", "")

    @staticmethod
    def _read(report: ReconciliationReport):
        # Both fields read the figures: parsed once (seconds for a busy day's players).
        if not hasattr(report, "_read_figures"):
            report._read_figures = read_figures(report.figures)
        return report._read_figures


class ReportFilter(django_filters.FilterSet):
    day = django_filters.DateFilter(field_name="day_from")
    day_after = django_filters.DateFilter(field_name="day_from", lookup_expr="gte")
    day_before = django_filters.DateFilter(field_name="day_from", lookup_expr="lte")
    status = django_filters.ChoiceFilter(choices=ReconciliationReport.Status.choices)

    class Meta:
        model = ReconciliationReport
        fields = ["day", "status"]


class NewestFirst(CursorPagination):
    ordering = ("-created_at", "-id")


NO_REPORT = "No report has this id."


@staff_pages(ReportSummarySerializer)
class ReportListView(ReplicaReads, generics.ListAPIView):
    """Reconciliation reports, newest first: each version of each gaming day's report."""

    authentication_classes = AUTHENTICATION
    permission_classes = [IsStaffReader]
    serializer_class = ReportSummarySerializer
    filterset_class = ReportFilter
    pagination_class = NewestFirst
    queryset = ReconciliationReport.objects.all()


@staff_item(ReportSerializer, NO_REPORT)
class ReportDetailView(ReplicaReads, generics.RetrieveAPIView):
    """One reconciliation report with its figures, alerts and re-verification."""

    authentication_classes = AUTHENTICATION
    permission_classes = [IsStaffReader]
    serializer_class = ReportSerializer
    queryset = ReconciliationReport.objects.all()


class ReportCsvView(generics.RetrieveAPIView):
    authentication_classes = AUTHENTICATION
    permission_classes = [IsStaffReader]
    queryset = ReconciliationReport.objects.all()

    @extend_schema(responses=answers({(200, "text/csv"): OpenApiTypes.STR, 404: refusal(NO_REPORT)},
                                     STAFF_ONLY, CSV_REQUEST),
                   summary="A report as CSV")
    def get(self, request, *args, **kwargs):
        report = self.get_object()
        response = HttpResponse(csv_text([CSV_COLUMNS, *report_rows(report.figures)]),
                                content_type="text/csv")
        response["Content-Disposition"] = (
            f'attachment; filename="reconciliation-{report.day_from}-{report.day_to}-v{report.version}.csv"'
        )
        return response


def report_rows(stored: dict | None):
    """The report's rows, then its month- and year-to-date rows.

    A report made before figures kept their currency has no rows: reconcile its range again.
    """
    figures = read_figures(stored)
    if not figures:
        return
    yield from period_rows("range", figures)
    for period in PERIODS:
        rolled = figures.period(period)
        if rolled:
            yield from period_rows(period, rolled)


def _text(value: Decimal | None) -> str | None:
    """A figure as the report keeps it, never in exponent form (a zero kept to a millionth)."""
    return None if value is None else f"{value:f}"


def period_rows(period: str, figures: ReportFigures | ToDate):
    """One row per scope, key, currency and bet; the bands sit on the trips, base-game and total rows.

    Ids that tables send (dealers, players) are made inert by the CSV writer (``infra.exports``).
    """
    scopes = [("casino", {"all": figures.casino})]
    scopes += [(scope[:-1], figures.groups(scope)) for scope in SCOPES]
    for scope, groups in scopes:
        for key, by_currency in sorted(groups.items()):
            for currency, cell in sorted(by_currency.items()):
                bands, optimal = cell.bands, cell.bands_optimal
                paid = cell.win_paid
                rows = [(bet, cell.handle.get(bet), cell.win.get(bet), cell.hold_percent.get(bet),
                         getattr(bands, OWN_BAND[bet]) if bet in OWN_BAND else None, None,
                         None if paid is None else paid.get(bet))
                        for bet in BETS]
                base_paid = None if paid is None else sum((paid.get(b, 0) for b in BAND_BETS[WinBand.BASE]), Decimal(0))
                rows.append(("base_game", None, bands.base.actual, None, bands.base, optimal.base, base_paid))
                rows.append(("total", cell.handle_total, cell.win_total, cell.hold_percent.get("total"),
                             bands.total, optimal.total, cell.win_paid_total))
                for bet, handle, win, hold_percent, band, at_optimal, win_paid in rows:
                    yield [
                        period, scope, key, currency, bet, cell.rounds, cell.hands,
                        _text(handle), _text(win), _text(hold_percent),
                        *((_text(band.expected), _text(band.sd), _text(band.low_95), _text(band.high_95),
                           _text(band.low_997), _text(band.high_997), _text(band.z), band.outside,
                           band.theoretical) if band else (None,) * 9),
                        *((_text(at_optimal.expected), _text(cell.skill), _text(cell.scored_percent))
                          if at_optimal else (None, None, None)),
                        _text(win_paid), _text(None if win_paid is None else win_paid - win),
                    ]
