"""Thin views: authenticate, hand the body to intake or a selector, answer."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import generics, serializers
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from api.authentication import EVERYONE, READERS_SESSION_FIRST, IsTable, TableKeyAuthentication
from api.throttling import TableKeptBytesThrottle, kept_bytes_charge
from infra.openapi import (
    EVERY_REQUEST,
    NOT_AUTHENTICATED,
    STAFF_ONLY_SESSION_FIRST,
    answers,
    refusal,
    staff_item,
    staff_pages,
)
from infra.permissions import IsStaffReader
from infra.replicas import ReplicaReads
from infra.request_ids import request_id_of
from rounds.selectors import finding_list, round_list
from rounds.wire.json_body import UnreadableBody, parse_json
from rounds.wire.serializers import FindingSerializer, RoundRecordSerializer, RoundSerializer

from .examples import POST_BATCH_EXAMPLES, POST_ROUND_EXAMPLES
from .filters import FindingFilter, RoundFilter
from .intake import (
    BodyTooLarge,
    LengthRequired,
    read_body,
    receive_batch,
    receive_round,
    refuse_length_required,
    refuse_too_large,
    refuse_unreadable,
    request_body_limit,
    round_body_limit,
)

MAX_BATCH = 1000


class TablePost:
    """A table's post of rounds: on the table's hourly budget of kept bytes as well as
    its request rate, and each post's kept bodies counted against that budget."""

    def get_throttles(self):
        throttles = super().get_throttles()
        if self.request.method == "POST":
            throttles.append(TableKeptBytesThrottle())
        return throttles

    def read(self, request, *, limit, table, request_id):
        """The body and its JSON, or the answer that refuses it (kept as the refusal)."""
        try:
            body = read_body(request, limit=limit)
        except BodyTooLarge as exc:
            return None, None, refuse_too_large(table=table, too_large=exc, request=request, request_id=request_id)
        except LengthRequired as exc:
            return None, None, refuse_length_required(
                table=table, message=str(exc), request=request, request_id=request_id)
        try:
            return body, parse_json(body), None
        except UnreadableBody as exc:
            return body, None, refuse_unreadable(
                table=table, body=body, message=str(exc), request=request, request_id=request_id)

    @staticmethod
    def charged(table, answers) -> None:
        kept_bytes_charge(table_code=table.code, size=sum(answer.kept for answer in answers))


# What a table's post may be refused with besides the round's own refusals. The
# intake reads the body itself, whatever its Content-Type: never a 415.
TABLE_POST_REFUSALS = {
    **EVERY_REQUEST,
    **NOT_AUTHENTICATED,
    411: refusal("A chunked body the server cannot read to its end: send a Content-Length."),
    413: refusal("The body, or for a batch the whole request, is larger than the limit; "
                 "its first bytes and its size are kept."),
    429: refusal("The table's request rate (code throttled) or its hourly budget of kept "
                 "bytes (code kept_bytes_exhausted) is spent; retry after Retry-After seconds."),
}


class DealtAtCursor(CursorPagination):
    ordering = ("-dealt_at", "-id")


class NewestFirstCursor(CursorPagination):
    ordering = ("-created_at", "-id")


@staff_pages(RoundSerializer)
class RoundListCreateView(ReplicaReads, TablePost, generics.ListAPIView):
    """``POST`` a dealt round (tables); ``GET`` stored rounds (casino staff)."""

    authentication_classes = EVERYONE
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
        responses=answers(TABLE_POST_REFUSALS, {
            201: RoundSerializer,
            200: OpenApiResponse(RoundSerializer, "An identical resubmission: the stored round."),
            400: refusal("The body is not JSON, or not a valid round record; errors names the fields. "
                         "The body is kept."),
            403: refusal("A person's credentials (only a table's own key posts rounds), or a record "
                         "naming another table; the body is kept."),
            409: refusal("Its round id was already stored with a different body: this one is kept and "
                         "refused, and the stored round (the answer's round) is flagged."),
        }),
        examples=POST_ROUND_EXAMPLES,
        summary="Post one dealt round",
    )
    def post(self, request, *args, **kwargs):
        table = request.user.table
        request_id = request_id_of(request)
        body, payload, answer = self.read(request, limit=round_body_limit(), table=table, request_id=request_id)
        if answer is None:
            answer = receive_round(
                table=table, payload=payload, body=body, request=request, request_id=request_id
            )
        self.charged(table, [answer])
        return Response(answer.body, status=answer.status)


class RoundBatchView(TablePost, APIView):
    """A table catching up: up to 1,000 records, each judged and answered on its own."""

    authentication_classes = [TableKeyAuthentication]
    permission_classes = [IsTable]

    @extend_schema(
        request=inline_serializer(
            "RoundBatch", {"rounds": RoundRecordSerializer(many=True)}
        ),
        responses=answers(TABLE_POST_REFUSALS, {
            200: inline_serializer(
                "RoundBatchResult",
                {"results": inline_serializer(
                    "RoundBatchItem",
                    {"status": serializers.IntegerField(), "body": serializers.DictField()},
                    many=True,
                )},
            ),
            400: refusal(f'The body is not JSON, or not {{"rounds": [...]}} with 1 to {MAX_BATCH} round '
                         "records; it is kept. A record's own refusal is its answer in results."),
            401: refusal("Anything but a table's key in force: no credentials, a person's, or a key "
                         "unknown, expired or revoked."),
        }),
        examples=POST_BATCH_EXAMPLES,
        summary="Post a batch of dealt rounds",
        description=(
            "Each record is refused or stored on its own; a record whose compact JSON is larger "
            "than the single round's limit is answered 413 in its place in the results."
        ),
    )
    def post(self, request, *args, **kwargs):
        table = request.user.table
        request_id = request_id_of(request)
        body, payload, answer = self.read(request, limit=request_body_limit(), table=table, request_id=request_id)
        if answer is None:
            items = payload.get("rounds") if isinstance(payload, dict) else None
            if not isinstance(items, list) or not 1 <= len(items) <= MAX_BATCH:
                answer = refuse_unreadable(
                    table=table, body=body,
                    message=f'A batch is {{"rounds": [...]}} with 1 to {MAX_BATCH} round records.',
                    request=request, request_id=request_id,
                )
        if answer is not None:
            self.charged(table, [answer])
            return Response(answer.body, status=answer.status)
        answers = receive_batch(table=table, items=items, request=request, request_id=request_id)
        self.charged(table, answers)
        return Response(
            {"results": [{"status": a.status, "body": a.body} for a in answers]}, status=200
        )


# Staff read with a session or a password; a table's key is recognised only to
# be refused by name (403), not mistaken for no credentials at all.
READER_AUTHENTICATION = READERS_SESSION_FIRST


@staff_item(RoundSerializer, "No round has this id.", refused=STAFF_ONLY_SESSION_FIRST)
class RoundDetailView(ReplicaReads, generics.RetrieveAPIView):
    """One stored round: its record, settlement, findings and meter events."""

    authentication_classes = READER_AUTHENTICATION
    serializer_class = RoundSerializer
    queryset = round_list()


@staff_pages(FindingSerializer, refused=STAFF_ONLY_SESSION_FIRST)
class FindingListView(ReplicaReads, generics.ListAPIView):
    """Findings of stored rounds, newest first, with the state auditors moved them to."""

    authentication_classes = READER_AUTHENTICATION
    serializer_class = FindingSerializer
    filterset_class = FindingFilter
    pagination_class = NewestFirstCursor
    queryset = finding_list()
