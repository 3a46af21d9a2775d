"""Thin views: authenticate, hand the body to a service or the query to a selector, answer."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.authentication import BasicAuthentication, SessionAuthentication
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Actor
from casino.middleware import request_id_of
from casino.permissions import IsStaffReader
from progressive.models import MeterEvent, Pool
from progressive.selectors import (
    meter_event_list,
    meter_reading_list,
    pool_hit_history,
    pool_ledger_check,
    pool_list,
    pool_version_list,
)
from progressive.services import (
    NotLinkedError,
    ProgressiveError,
    meter_adjust,
    meter_transfer_overflow,
    reading_record,
)
from rounds.api.views import ERROR
from rounds.authentication import IsTable, TableKeyAuthentication

from .filters import MeterEventFilter, MeterReadingFilter, PoolFilter, PoolVersionFilter
from .permissions import CanAdjustMeter
from .serializers import (
    HitSerializer,
    LedgerCheckSerializer,
    MeterAdjustmentInSerializer,
    MeterEventSerializer,
    MeterReadingInSerializer,
    MeterReadingSerializer,
    OverflowTransferInSerializer,
    PoolSerializer,
    PoolVersionSerializer,
)

# Tables are authenticated everywhere here so that one reaching for a person's
# endpoint is told 403 (it is known, and not allowed), not 401.
EVERYONE = [TableKeyAuthentication, SessionAuthentication, BasicAuthentication]


def _cursor(*fields: str) -> type[CursorPagination]:
    return type("Cursor", (CursorPagination,), {"ordering": fields})


def _refused(exc: ProgressiveError):
    """A service's refusal as the API's error shape: 403 for a table of another pool, else 400."""
    if isinstance(exc, NotLinkedError):
        return PermissionDenied(str(exc))
    return ValidationError(exc.errors)


class PoolListView(generics.ListAPIView):
    """Pools with their meter, overflow, reserve and the version in force now."""

    authentication_classes = EVERYONE
    serializer_class = PoolSerializer
    filterset_class = PoolFilter
    pagination_class = _cursor("code")
    queryset = pool_list()


class PoolDetailView(generics.RetrieveAPIView):
    authentication_classes = EVERYONE
    serializer_class = PoolSerializer
    queryset = pool_list()
    lookup_field = "code"


class PoolVersionListView(generics.ListAPIView):
    """Every version of every pool: versions are never changed, only added."""

    authentication_classes = EVERYONE
    serializer_class = PoolVersionSerializer
    filterset_class = PoolVersionFilter
    pagination_class = _cursor("-id")
    queryset = pool_version_list()


class MeterEventListView(generics.ListAPIView):
    """The ledger: every change of every meter, newest first."""

    authentication_classes = EVERYONE
    serializer_class = MeterEventSerializer
    filterset_class = MeterEventFilter
    pagination_class = _cursor("-id")
    queryset = meter_event_list()


class HitListView(generics.ListAPIView):
    """The hit history: awards, fixed awards and the reseeds they caused, newest first."""

    authentication_classes = EVERYONE
    serializer_class = HitSerializer
    filterset_class = MeterEventFilter
    pagination_class = _cursor("-id")
    queryset = pool_hit_history()


class LedgerCheckView(APIView):
    """Walk a pool's ledger and say whether it proves the meter (and where it first does not)."""

    authentication_classes = EVERYONE
    permission_classes = [IsStaffReader]
    queryset = MeterEvent.objects.none()  # IsStaffReader asks for view_meterevent

    @extend_schema(responses={200: LedgerCheckSerializer, 403: ERROR, 404: ERROR})
    def get(self, request, code: str):
        pool = get_object_or_404(Pool, code=code)
        return Response(LedgerCheckSerializer(pool_ledger_check(pool=pool)).data)


class MeterReadingListCreateView(generics.ListAPIView):
    """``POST`` what a table's meter display showed (tables); ``GET`` readings (casino staff)."""

    authentication_classes = EVERYONE
    serializer_class = MeterReadingSerializer
    filterset_class = MeterReadingFilter
    pagination_class = _cursor("-received_at", "-id")
    queryset = meter_reading_list()

    def get_permissions(self):
        if self.request.method == "POST":
            return [IsTable()]
        return [IsStaffReader()]

    @extend_schema(
        request=MeterReadingInSerializer,
        responses={201: MeterReadingSerializer, 400: ERROR, 401: ERROR, 403: ERROR},
        summary="Report a meter display reading",
    )
    def post(self, request, *args, **kwargs):
        incoming = MeterReadingInSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        table = request.user.table
        pool = None
        if "pool" in data:
            pool = Pool.objects.filter(code=data["pool"]).first()
            if pool is None:
                raise ValidationError({"pool": [f"No pool {data['pool']}."]})
        try:
            reading = reading_record(
                pool=pool, table=table, displayed=data["displayed"], reported_at=data["reported_at"],
                reporter=Actor.of_table(table), request_id=request_id_of(request),
            )
        except ProgressiveError as exc:
            raise _refused(exc) from None
        return Response(MeterReadingSerializer(reading).data, status=status.HTTP_201_CREATED)


class _MeterMoveView(APIView):
    """A person's move of a pool's money, with its reason: one event in the pool's ledger."""

    authentication_classes = EVERYONE
    permission_classes = [CanAdjustMeter]
    incoming_class: type

    def move(self, *, pool: Pool, data: dict, actor: Actor, request_id: str):
        raise NotImplementedError

    def post(self, request, code: str):
        pool = get_object_or_404(Pool, code=code)
        incoming = self.incoming_class(data=request.data)
        incoming.is_valid(raise_exception=True)
        try:
            event = self.move(pool=pool, data=incoming.validated_data, actor=Actor.of_user(request.user),
                              request_id=request_id_of(request))
        except ProgressiveError as exc:
            raise _refused(exc) from None
        return Response(MeterEventSerializer(event).data, status=status.HTTP_201_CREATED)


def _move_schema(incoming, summary: str):
    return extend_schema_view(post=extend_schema(
        request=incoming,
        responses={201: MeterEventSerializer, 400: ERROR, 401: ERROR, 403: ERROR, 404: ERROR},
        summary=summary,
    ))


@_move_schema(MeterAdjustmentInSerializer, "Adjust a meter")
class MeterAdjustmentView(_MeterMoveView):
    """A supervisor's or auditor's adjustment of a meter, with its reason."""

    incoming_class = MeterAdjustmentInSerializer

    def move(self, *, pool, data, actor, request_id):
        return meter_adjust(pool=pool, delta=data["delta"], reason=data["reason"], actor=actor,
                            request_id=request_id)


@_move_schema(OverflowTransferInSerializer, "Transfer overflow into the meter")
class OverflowTransferView(_MeterMoveView):
    """Move overflow back into the meter, as far as the ceiling allows, with a reason."""

    incoming_class = OverflowTransferInSerializer

    def move(self, *, pool, data, actor, request_id):
        return meter_transfer_overflow(pool=pool, amount=data.get("amount"), reason=data["reason"],
                                       actor=actor, request_id=request_id)
