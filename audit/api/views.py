"""CSV exports for auditors: streamed, for any period of gaming days."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain, islice

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.authentication import BasicAuthentication, SessionAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.views import APIView

from audit.exports import Period, audit_rows, csv_lines, finding_rows, round_rows
from audit.services import Actor, audit_record
from casino import replicas
from casino.middleware import request_id_of
from casino.openapi import CSV_REQUEST, STAFF_ONLY_SESSION_FIRST, answers, refusal

MAX_DAYS = 366

EXPORTS = {
    "rounds": (round_rows, "rounds.view_round"),
    "findings": (finding_rows, "rounds.view_finding"),
    "audit-log": (audit_rows, "audit.view_auditevent"),
}


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
        user = request.user
        if user is None or not getattr(user, "is_authenticated", False) or getattr(user, "is_table", False):
            return False
        return user.has_perm(EXPORTS[view.kwargs["what"]][1])


class ExportView(APIView):
    authentication_classes = [SessionAuthentication, BasicAuthentication]
    permission_classes = [CanExport]

    @extend_schema(
        parameters=[
            # The route's own pattern, read as a schema's, would admit "roundsX" and "xfindings".
            OpenApiParameter("what", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(EXPORTS)),
            OpenApiParameter("first_day", OpenApiTypes.DATE, required=True),
            OpenApiParameter("last_day", OpenApiTypes.DATE, required=True),
        ],
        responses=answers({(200, "text/csv"): OpenApiTypes.STR}, STAFF_ONLY_SESSION_FIRST, CSV_REQUEST, {
            400: refusal("first_day or last_day is missing or not a date, last_day is before first_day, "
                         f"or the period is longer than {MAX_DAYS} days; errors names the field."),
        }),
        summary="Export rounds, findings or the audit log as CSV",
    )
    def get(self, request, what: str):
        period_in = PeriodSerializer(data=request.query_params)
        period_in.is_valid(raise_exception=True)
        period = Period(period_in.validated_data["first"], period_in.validated_data["last"])
        rows, _ = EXPORTS[what]
        # The download's event is written first, on the primary; the rows are then
        # read where a replica may serve them, begun here so that a replica
        # failing at the start is read again on the primary, not a broken stream.
        audit_record(
            actor=Actor.of_user(request.user), action="export.downloaded", object_type="export",
            object_id=what, object_repr=f"{what} {period.first_day}..{period.last_day}",
            request_id=request_id_of(request),
        )
        lines = replicas.read(lambda alias: _begun(csv_lines(rows(period, using=alias))))
        response = StreamingHttpResponse(lines, content_type="text/csv")
        response["Content-Disposition"] = (
            f'attachment; filename="{what}-{period.first_day}-{period.last_day}.csv"'
        )
        return response


def _begun(lines: Iterator[str]) -> Iterator[str]:
    """``lines`` with its header and first row already read: the query has begun."""
    first = list(islice(lines, 2))
    return chain(first, lines)
