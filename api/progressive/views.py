"""Thin views: authenticate, hand the body to a service or the query to a selector, answer."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import APIException, PermissionDenied, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from api.authentication import EVERYONE, IsTable
from infra.openapi import (
    EVERY_REQUEST,
    JSON_BODY,
    NOT_AUTHENTICATED,
    PERSON_WRITE,
    STAFF_ONLY,
    answers,
    refusal,
    staff_item,
    staff_pages,
)
from infra.permissions import IsStaffReader
from infra.replicas import ReplicaReads
from infra.request_ids import request_id_of
from progressive.models import MeterAdjustmentRequest, MeterEvent, Pool, PoolVersionRequest
from progressive.selectors import (
    adjustment_request_list,
    meter_event_list,
    meter_reading_list,
    pool_hit_history,
    pool_ledger_check,
    pool_list,
    pool_version_list,
    pool_version_request_list,
)
from progressive.services import (
    ApprovalError,
    NotLinkedError,
    ProgressiveError,
    adjustment_approve,
    adjustment_reject,
    meter_adjust,
    meter_transfer_overflow,
    pool_version_approve,
    pool_version_create,
    pool_version_reject,
    reading_record,
)
from trail.services import Actor

from .filters import (
    MeterAdjustmentRequestFilter,
    MeterEventFilter,
    MeterReadingFilter,
    PoolFilter,
    PoolVersionFilter,
    PoolVersionRequestFilter,
)
from .permissions import CanAddPoolVersion, CanAdjustMeter
from .serializers import (
    AdjustmentRejectionInSerializer,
    HitSerializer,
    LedgerCheckSerializer,
    MeterAdjustmentInSerializer,
    MeterAdjustmentRequestSerializer,
    MeterEventSerializer,
    MeterReadingInSerializer,
    MeterReadingSerializer,
    OverflowTransferInSerializer,
    PoolSerializer,
    PoolVersionInSerializer,
    PoolVersionRequestSerializer,
    PoolVersionSerializer,
    VersionRejectionInSerializer,
)

# Tables are authenticated everywhere here so that one reaching for a person's
# endpoint is told 403 (it is known, and not allowed), not 401.
NO_POOL = "No pool has this code."


def _cursor(*fields: str) -> type[CursorPagination]:
    return type("Cursor", (CursorPagination,), {"ordering": fields})


class Decided(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "decided"


class NotIndependent(APIException):
    """An approver the asker created or changed lately (``trail.approvals``): no one else's doing fixes it."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "not_independent"

    def __init__(self, detail: str, *, field: str):
        super().__init__(detail)
        self.field_errors = {field: [detail]}


def _refused(exc: ProgressiveError):
    """A service's refusal as the API's error shape: 403 for a table of another pool or a
    supervisor approving their own request, 409 for a request decided already or an approver
    tied to the asker (with the field), else 400."""
    if isinstance(exc, ApprovalError) and exc.code == "not_independent":
        [(field, _texts)] = exc.errors.items()
        return NotIndependent(str(exc), field=field)
    if isinstance(exc, ApprovalError) and exc.conflict:
        return Decided(str(exc))
    if isinstance(exc, NotLinkedError | ApprovalError):
        return PermissionDenied(str(exc))
    return ValidationError(exc.errors)


@staff_pages(PoolSerializer)
class PoolListView(generics.ListAPIView):
    """Pools with their meter, overflow, reserve and the version in force now."""

    authentication_classes = EVERYONE
    serializer_class = PoolSerializer
    filterset_class = PoolFilter
    pagination_class = _cursor("code")
    queryset = pool_list()


@staff_item(PoolSerializer, NO_POOL)
class PoolDetailView(generics.RetrieveAPIView):
    authentication_classes = EVERYONE
    serializer_class = PoolSerializer
    queryset = pool_list()
    lookup_field = "code"


@staff_pages(PoolVersionSerializer)
class PoolVersionListView(ReplicaReads, generics.ListAPIView):
    """Every version of every pool: versions are never changed, only added."""

    authentication_classes = EVERYONE
    serializer_class = PoolVersionSerializer
    filterset_class = PoolVersionFilter
    pagination_class = _cursor("-id")
    queryset = pool_version_list()


@staff_pages(MeterEventSerializer)
class MeterEventListView(ReplicaReads, generics.ListAPIView):
    """The ledger: every change of every meter, newest first."""

    authentication_classes = EVERYONE
    serializer_class = MeterEventSerializer
    filterset_class = MeterEventFilter
    pagination_class = _cursor("-id")
    queryset = meter_event_list()


@staff_pages(HitSerializer)
class HitListView(ReplicaReads, generics.ListAPIView):
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

    @extend_schema(responses=answers({200: LedgerCheckSerializer, 404: refusal(NO_POOL)}, STAFF_ONLY,
                                     EVERY_REQUEST))
    def get(self, request, code: str):
        pool = get_object_or_404(Pool, code=code)
        return Response(LedgerCheckSerializer(pool_ledger_check(pool=pool)).data)


@staff_pages(MeterReadingSerializer)
class MeterReadingListCreateView(ReplicaReads, generics.ListAPIView):
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
        responses=answers({201: MeterReadingSerializer}, NOT_AUTHENTICATED, JSON_BODY, EVERY_REQUEST, {
            400: refusal("The body is not JSON, a field of it is invalid, or it names no pool there is; "
                         "errors names the field."),
            403: refusal("A person's credentials (only a table's own key reports readings), or a pool "
                         "this table does not feed."),
        }),
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
            moved = self.move(pool=pool, data=incoming.validated_data, actor=Actor.of_user(request.user),
                              request_id=request_id_of(request))
        except ProgressiveError as exc:
            raise _refused(exc) from None
        if isinstance(moved, MeterAdjustmentRequest):
            return Response(MeterAdjustmentRequestSerializer(moved).data, status=status.HTTP_202_ACCEPTED)
        return Response(MeterEventSerializer(moved).data, status=status.HTTP_201_CREATED)


def _move_schema(incoming, summary: str, **more):
    return extend_schema_view(post=extend_schema(
        request=incoming,
        responses=answers({201: MeterEventSerializer, 404: refusal(NO_POOL)}, PERSON_WRITE, JSON_BODY,
                          EVERY_REQUEST, {
            400: refusal("The body is not JSON, a field of it is invalid, or the pool cannot make this "
                         "move (its meter below zero or past what a meter holds, more than its overflow "
                         "or its ceiling allows); errors says why."),
        }, more),
        summary=summary,
    ))


SECOND_APPROVAL = OpenApiResponse(
    MeterAdjustmentRequestSerializer,
    "Larger than one supervisor may move the meter alone (METER_SECOND_APPROVAL_ABOVE): kept as a "
    "pending request, and the meter moves only when another supervisor approves it.",
)


@_move_schema(MeterAdjustmentInSerializer, "Adjust a meter", **{"202": SECOND_APPROVAL})
class MeterAdjustmentView(_MeterMoveView):
    """A supervisor's adjustment of a meter, with its reason; a large one waits for a second."""

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


# ---- dual control: requests for a second supervisor's approval --------------


@staff_pages(MeterAdjustmentRequestSerializer)
class MeterAdjustmentRequestListView(generics.ListAPIView):
    """Adjustments waiting for, or decided by, a second supervisor; ``?state=pending`` for the queue."""

    authentication_classes = EVERYONE
    serializer_class = MeterAdjustmentRequestSerializer
    filterset_class = MeterAdjustmentRequestFilter
    pagination_class = _cursor("-requested_at", "-id")
    queryset = adjustment_request_list()


@staff_item(MeterAdjustmentRequestSerializer, "No adjustment request has this id.")
class MeterAdjustmentRequestDetailView(generics.RetrieveAPIView):
    """One adjustment request, with the ledger event its approval wrote."""

    authentication_classes = EVERYONE
    serializer_class = MeterAdjustmentRequestSerializer
    queryset = adjustment_request_list()


def _decided_refusals(what: str, asker: str) -> dict:
    return {
        403: refusal(f"A table's key, a person whose role does not allow this, the supervisor who asked "
                     f"for {asker} (to approve it), or a session's write without its CSRF token."),
        404: refusal(f"No {what} has this id."),
        409: refusal("The request was approved or rejected already (code decided), or the approver is "
                     "not independent of the asker: one made the other or changed him within "
                     "APPROVER_INDEPENDENCE_DAYS, one person changed both within it, or either was made "
                     "by no person the audit log names (code not_independent, errors.approver)."),
    }


_DECIDED = _decided_refusals("adjustment request", "the adjustment")


class _DecisionView(APIView):
    """A second supervisor's decision on a request of this app, through its service."""

    authentication_classes = EVERYONE
    permission_classes = [CanAdjustMeter]
    model: type = MeterAdjustmentRequest
    answer_class: type = MeterAdjustmentRequestSerializer
    incoming_class: type | None = None

    def decide(self, *, asked, data: dict, actor: Actor, request_id: str):
        raise NotImplementedError

    def listed(self):
        return adjustment_request_list()

    def post(self, request, pk: int):
        asked = get_object_or_404(self.model, pk=pk)
        data = {}
        if self.incoming_class is not None:
            incoming = self.incoming_class(data=request.data)
            incoming.is_valid(raise_exception=True)
            data = incoming.validated_data
        try:
            decided = self.decide(asked=asked, data=data, actor=Actor.of_user(request.user),
                                  request_id=request_id_of(request))
        except ProgressiveError as exc:
            raise _refused(exc) from None
        return Response(self.answer_class(self.listed().get(pk=decided.pk)).data)


@extend_schema_view(post=extend_schema(
    request=None,
    responses=answers({200: MeterAdjustmentRequestSerializer}, PERSON_WRITE, EVERY_REQUEST, {
        400: refusal("The meter cannot move by the request's delta now (below zero or past what a "
                     "meter holds); errors says why."),
    }, _DECIDED),
    summary="Approve a large meter adjustment (a second supervisor)",
))
class MeterAdjustmentApproveView(_DecisionView):
    """A second supervisor's approval: the meter moves by the request's delta, through its ledger."""

    def decide(self, *, asked, data, actor, request_id):
        return adjustment_approve(asked=asked, actor=actor, request_id=request_id)


@extend_schema_view(post=extend_schema(
    request=AdjustmentRejectionInSerializer,
    responses=answers({200: MeterAdjustmentRequestSerializer}, PERSON_WRITE, JSON_BODY, EVERY_REQUEST,
                      _DECIDED),
    summary="Reject a large meter adjustment",
))
class MeterAdjustmentRejectView(_DecisionView):
    """A supervisor's refusal, with a note (the asker's own withdraws it); the meter stays."""

    incoming_class = AdjustmentRejectionInSerializer

    def decide(self, *, asked, data, actor, request_id):
        return adjustment_reject(asked=asked, actor=actor, note=data["note"], request_id=request_id)


# ---- dual control: a pool version that changes what is paid --------------------


@extend_schema_view(post=extend_schema(
    request=PoolVersionInSerializer,
    responses=answers({201: PoolVersionSerializer, 404: refusal(NO_POOL)}, PERSON_WRITE, JSON_BODY,
                      EVERY_REQUEST, {
        202: OpenApiResponse(
            PoolVersionRequestSerializer,
            "It changes what a round's Progressive is settled by (wager, rates, reseed, ceiling, pay "
            "lines): kept as a pending request, and no version exists until another supervisor "
            "approves it."),
        400: refusal("The body is not JSON, a field of it is invalid, or the version would start before "
                     "the latest or a round already judged, or set a ceiling below the meter; errors says why."),
    }),
    summary="Make a pool's next version",
))
class PoolVersionCreateView(APIView):
    """A supervisor's next version of a pool; one that changes what is paid waits for a second."""

    authentication_classes = EVERYONE
    permission_classes = [CanAddPoolVersion]

    def post(self, request, code: str):
        pool = get_object_or_404(Pool, code=code)
        incoming = PoolVersionInSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = dict(incoming.validated_data)
        data["lines"] = [dict(line) for line in data["lines"]]
        try:
            made = pool_version_create(pool=pool, actor=Actor.of_user(request.user),
                                       request_id=request_id_of(request), **data)
        except ProgressiveError as exc:
            raise _refused(exc) from None
        if isinstance(made, PoolVersionRequest):
            return Response(PoolVersionRequestSerializer(made).data, status=status.HTTP_202_ACCEPTED)
        return Response(PoolVersionSerializer(made).data, status=status.HTTP_201_CREATED)


@staff_pages(PoolVersionRequestSerializer)
class PoolVersionRequestListView(generics.ListAPIView):
    """Pool versions waiting for, or decided by, a second supervisor; ``?state=pending`` for the queue."""

    authentication_classes = EVERYONE
    serializer_class = PoolVersionRequestSerializer
    filterset_class = PoolVersionRequestFilter
    pagination_class = _cursor("-requested_at", "-id")
    queryset = pool_version_request_list()


@staff_item(PoolVersionRequestSerializer, "No pool version request has this id.")
class PoolVersionRequestDetailView(generics.RetrieveAPIView):
    """One pool version request, with the version its approval wrote."""

    authentication_classes = EVERYONE
    serializer_class = PoolVersionRequestSerializer
    queryset = pool_version_request_list()


_VERSION_DECIDED = _decided_refusals("pool version request", "the version")


class _VersionDecisionView(_DecisionView):
    permission_classes = [CanAddPoolVersion]
    model = PoolVersionRequest
    answer_class = PoolVersionRequestSerializer

    def listed(self):
        return pool_version_request_list()


@extend_schema_view(post=extend_schema(
    request=None,
    responses=answers({200: PoolVersionRequestSerializer}, PERSON_WRITE, EVERY_REQUEST, {
        400: refusal("The version cannot start now (a later version, or a round judged after its start) "
                     "or its ceiling is below the meter now; errors says why."),
    }, _VERSION_DECIDED),
    summary="Approve a pool version (a second supervisor)",
))
class PoolVersionApproveView(_VersionDecisionView):
    """A second supervisor's approval: the version is written, in force from the later of its asked
    start and now."""

    def decide(self, *, asked, data, actor, request_id):
        return pool_version_approve(asked=asked, actor=actor, request_id=request_id)


@extend_schema_view(post=extend_schema(
    request=VersionRejectionInSerializer,
    responses=answers({200: PoolVersionRequestSerializer}, PERSON_WRITE, JSON_BODY, EVERY_REQUEST,
                      _VERSION_DECIDED),
    summary="Reject a pool version",
))
class PoolVersionRejectView(_VersionDecisionView):
    """A supervisor's refusal, with a note (the asker's own withdraws it); no version is made."""

    incoming_class = VersionRejectionInSerializer

    def decide(self, *, asked, data, actor, request_id):
        return pool_version_reject(asked=asked, actor=actor, note=data["note"], request_id=request_id)
