"""CSV exports for auditors: streamed, for any period of gaming days (the admin's lists have
theirs too: ``trail.admin_exports``)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.views import APIView

from audit.exports import EXPORTS
from api.authentication import STAFF
from infra.exports import Period, csv_download, export_allowed
from infra.openapi import CSV_REQUEST, STAFF_ONLY_SESSION_FIRST, answers, refusal
from infra.request_ids import request_id_of
from rounds.exports import finding_rows, round_rows
from trail.exports import audit_rows
from trail.services import Actor, audit_record

MAX_DAYS = 366

# What the API exports, each as its period's rows; who may is the export's own (audit.exports.EXPORTS).
PERIOD_ROWS = {"rounds": round_rows, "findings": finding_rows, "audit-log": audit_rows}


class PeriodSerializer(serializers.Serializer):
    first_day = serializers.DateField(source="first", help_text="first gaming day, inclusive")
    last_day = serializers.DateField(source="last", help_text="last gaming day, inclusive")

    def validate(self, attrs):
        first, last = attrs["first"], attrs["last"]
        if last < first:
            raise serializers.ValidationError({"last_day": ["Must not be before first_day."]})
        if (last - first).days >= MAX_DAYS:
            raise serializers.ValidationError({"last_day": [f"At most {MAX_DAYS} days per export."]})
        return attrs


class CanExport(BasePermission):
    message = "Only casino staff with read access to this data may export it."

    def has_permission(self, request, view) -> bool:
        return export_allowed(request.user, EXPORTS[view.kwargs["what"]])


class ExportView(APIView):
    authentication_classes = STAFF
    permission_classes = [CanExport]

    @extend_schema(
        parameters=[
            # The route's own pattern, read as a schema's, would admit "roundsX" and "xfindings".
            OpenApiParameter("what", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(PERIOD_ROWS)),
            OpenApiParameter("first_day", OpenApiTypes.DATE, required=True),
            OpenApiParameter("last_day", OpenApiTypes.DATE, required=True),
        ],
        responses=answers({(200, "text/csv"): OpenApiTypes.STR}, STAFF_ONLY_SESSION_FIRST, CSV_REQUEST, {
            400: refusal("first_day or last_day is missing or not a date, last_day is before first_day, "
                         f"or the period is longer than {MAX_DAYS} days; errors names the field."),
        }),
        summary="Export rounds, findings or the audit log as CSV",
        description=(
            "Streamed CSV with a header row: rounds a row a seat, findings, or the audit log's "
            "events. Every moment is in the casino's time zone with its UTC offset (ISO 8601, "
            "`2026-11-30T23:15:02.123456+01:00`); every amount has its currency in the row's "
            "`currency` column. A text cell a spreadsheet would run as a formula starts with an "
            "apostrophe."
        ),
    )
    def get(self, request, what: str):
        period_in = PeriodSerializer(data=request.query_params)
        period_in.is_valid(raise_exception=True)
        period = Period(period_in.validated_data["first"], period_in.validated_data["last"])
        rows = PERIOD_ROWS[what]
        # The download's event is written first, on the primary; the rows are then
        # read where a replica may serve them (csv_download).
        audit_record(
            actor=Actor.of_user(request.user), action="export.downloaded", object_type="export",
            object_id=what, object_repr=f"{what} {period.first_day}..{period.last_day}",
            request_id=request_id_of(request),
        )
        return csv_download(lambda alias: rows(period, using=alias),
                            f"{what}-{period.first_day}-{period.last_day}.csv")
