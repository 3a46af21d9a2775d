"""Thin views: authenticate, hand the body to intake or a selector, answer."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import generics, serializers
from rest_framework.authentication import BasicAuthentication, SessionAuthentication
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.middleware import request_id_of
from casino.permissions import IsStaffReader
from rounds.authentication import IsTable, TableKeyAuthentication
from rounds.selectors import finding_list, round_list

from .filters import FindingFilter, RoundFilter
from .intake import (
    BodyTooLarge,
    UnreadableBody,
    parse_json,
    read_body,
    receive_batch,
    receive_round,
    refuse_too_large,
    refuse_unreadable,
)
from .serializers import FindingSerializer, RoundRecordSerializer, RoundSerializer

MAX_BATCH = 1000

ERROR = inline_serializer(
    "Error",
    {
        "code": serializers.CharField(),
        "message": serializers.CharField(),
        "request_id": serializers.CharField(),
        "errors": serializers.DictField(required=False),
    },
)


class DealtAtCursor(CursorPagination):
    ordering = ("-dealt_at", "-id")


class NewestFirstCursor(CursorPagination):
    ordering = ("-created_at", "-id")


class RoundListCreateView(generics.ListAPIView):
    """``POST`` a dealt round (tables); ``GET`` stored rounds (casino staff)."""

    authentication_classes = [TableKeyAuthentication, SessionAuthentication, BasicAuthentication]
    serializer_class = RoundSerializer
    filterset_class = RoundFilter
    pagination_class = DealtAtCursor

    queryset = round_list()

    def get_permissions(self):
        if self.request.method == "POST":
            return [IsTable()]
        return [IsStaffReader()]

    @extend_schema(
        request=RoundRecordSerializer,
        responses={
            201: RoundSerializer,
            200: OpenApiResponse(RoundSerializer, "An identical resubmission: the stored round."),
            400: ERROR, 401: ERROR, 403: ERROR, 409: ERROR, 413: ERROR,
        },
        summary="Post one dealt round",
    )
    def post(self, request, *args, **kwargs):
        table = request.user.table
        request_id = request_id_of(request)
        try:
            body = read_body(request)
            payload = parse_json(body)
        except BodyTooLarge as exc:
            answer = refuse_too_large(
                table=table, message=str(exc), request=request, request_id=request_id
            )
        except UnreadableBody as exc:
            answer = refuse_unreadable(
                table=table, body=body, message=str(exc), request=request, request_id=request_id
            )
        else:
            answer = receive_round(
                table=table, payload=payload, body=body, request=request, request_id=request_id
            )
        return Response(answer.body, status=answer.status)


class RoundBatchView(APIView):
    """A table catching up: up to 1,000 records, each judged and answered on its own."""

    authentication_classes = [TableKeyAuthentication]
    permission_classes = [IsTable]

    @extend_schema(
        request=inline_serializer(
            "RoundBatch", {"rounds": RoundRecordSerializer(many=True)}
        ),
        responses={
            200: inline_serializer(
                "RoundBatchResult",
                {"results": inline_serializer(
                    "RoundBatchItem",
                    {"status": serializers.IntegerField(), "body": serializers.DictField()},
                    many=True,
                )},
            ),
            400: ERROR, 401: ERROR, 403: ERROR, 413: ERROR,
        },
        summary="Post a batch of dealt rounds",
    )
    def post(self, request, *args, **kwargs):
        table = request.user.table
        request_id = request_id_of(request)
        try:
            body = read_body(request)
            payload = parse_json(body)
        except BodyTooLarge as exc:
            answer = refuse_too_large(
                table=table, message=str(exc), request=request, request_id=request_id
            )
            return Response(answer.body, status=answer.status)
        except UnreadableBody as exc:
            answer = refuse_unreadable(
                table=table, body=body, message=str(exc), request=request, request_id=request_id
            )
            return Response(answer.body, status=answer.status)
        items = payload.get("rounds") if isinstance(payload, dict) else None
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_BATCH:
            answer = refuse_unreadable(
                table=table, body=body,
                message=f'A batch is {{"rounds": [...]}} with 1 to {MAX_BATCH} round records.',
                request=request, request_id=request_id,
            )
            return Response(answer.body, status=answer.status)
        answers = receive_batch(table=table, items=items, request=request, request_id=request_id)
        return Response(
            {"results": [{"status": a.status, "body": a.body} for a in answers]}, status=200
        )


# Staff read with a session or a password; a table's key is recognised only to
# be refused by name (403), not mistaken for no credentials at all.
READER_AUTHENTICATION = [SessionAuthentication, BasicAuthentication, TableKeyAuthentication]


class RoundDetailView(generics.RetrieveAPIView):
    authentication_classes = READER_AUTHENTICATION
    serializer_class = RoundSerializer
    queryset = round_list()


class FindingListView(generics.ListAPIView):
    authentication_classes = READER_AUTHENTICATION
    serializer_class = FindingSerializer
    filterset_class = FindingFilter
    pagination_class = NewestFirstCursor
    queryset = finding_list()
