"""The auditors' and supervisors' writes: working findings, voiding a round, placing a held one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from api.authentication import EVERYONE
from infra.openapi import EVERY_REQUEST, JSON_BODY, PERSON_WRITE, answers, refusal
from infra.permissions import is_person_with
from infra.request_ids import request_id_of
from rounds.models import Finding, Round
from rounds.selectors import round_detail
from rounds.services import (
    FindingTransitionError,
    PlacementError,
    VoidError,
    finding_transition,
    round_place,
    round_void,
)
from rounds.wire.fields import StrictCharField
from rounds.wire.serializers import FindingSerializer, RoundSerializer


def person_with(permission: str) -> type[BasePermission]:
    class PersonWith(BasePermission):
        message = f"This needs the {permission} permission; tables never have it."

        def has_permission(self, request, view) -> bool:
            return is_person_with(request.user, permission)

    return PersonWith


class FindingTransitionSerializer(serializers.Serializer):
    findings = serializers.ListField(child=serializers.IntegerField(min_value=1), min_length=1, max_length=1000)
    state = serializers.ChoiceField(choices=Finding.State.choices)
    note = StrictCharField(required=False, allow_blank=True, max_length=2000, default="")


class FindingTransitionView(APIView):
    """Move findings to a new state (all or none), with a note where closing or reopening.

    The findings of one mistake move together (``rounds.mistakes``): the answer lists every finding
    moved, those named and their mates.
    """

    authentication_classes = EVERYONE
    permission_classes = [person_with("rounds.work_finding")]

    @extend_schema(
        request=FindingTransitionSerializer,
        responses=answers({200: FindingSerializer(many=True)}, PERSON_WRITE, JSON_BODY, EVERY_REQUEST, {
            400: refusal("The body is not JSON, a field of it is invalid, or a finding is unknown or "
                         "cannot move to that state (or not without a note); errors says which, and "
                         "no finding moved."),
        }),
        summary="Acknowledge, resolve, dismiss or reopen findings",
        description=("Moves the findings named and, with each, the findings the same mistake raised on its "
                     "seat's other bets in the same state (an Ante off the unit is a bet_off_unit on the "
                     "Ante, the Blind and the Play: one mistake). The answer lists every finding moved."),
    )
    def post(self, request):
        given = FindingTransitionSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            moved = finding_transition(
                finding_ids=given.validated_data["findings"], to_state=given.validated_data["state"],
                user=request.user, note=given.validated_data["note"], request_id=request_id_of(request),
            )
        except FindingTransitionError as exc:
            raise ValidationError(exc.errors) from None
        return Response(FindingSerializer(moved, many=True).data)


class VoidSerializer(serializers.Serializer):
    reason = StrictCharField(max_length=2000)


class RoundVoidView(APIView):
    """A supervisor voids a stored round for a machine malfunction."""

    authentication_classes = EVERYONE
    permission_classes = [person_with("rounds.void_round")]

    @extend_schema(
        request=VoidSerializer,
        responses=answers({200: RoundSerializer}, PERSON_WRITE, JSON_BODY, EVERY_REQUEST, {
            400: refusal("The body is not JSON, its reason is invalid, or the round cannot be voided "
                         "(already void, or its meter events cannot be taken back); errors says why."),
            404: refusal("No round has this id."),
        }),
        summary="Void a stored round (machine malfunction)",
    )
    def post(self, request, pk: int):
        given = VoidSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        if not Round.objects.filter(pk=pk).exists():
            raise NotFound("No such round.")
        try:
            round_void(round_pk=pk, user=request.user, reason=given.validated_data["reason"],
                       request_id=request_id_of(request))
        except VoidError as exc:
            raise ValidationError(exc.errors) from None
        return Response(RoundSerializer(round_detail(round_pk=pk)).data)


class PlaceSerializer(serializers.Serializer):
    note = StrictCharField(max_length=2000)


class RoundPlaceView(APIView):
    """A supervisor places a round held apart from the books (dealt outside the window): from then
    on the reports of its gaming day count it."""

    authentication_classes = EVERYONE
    permission_classes = [person_with("rounds.place_round")]

    @extend_schema(
        request=PlaceSerializer,
        responses=answers({200: RoundSerializer}, PERSON_WRITE, JSON_BODY, EVERY_REQUEST, {
            400: refusal("The body is not JSON, its note is invalid, or the round is not held apart; "
                         "errors says why."),
            404: refusal("No round has this id."),
        }),
        summary="Place a round held apart from the books",
    )
    def post(self, request, pk: int):
        given = PlaceSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        if not Round.objects.filter(pk=pk).exists():
            raise NotFound("No such round.")
        try:
            round_place(round_pk=pk, user=request.user, note=given.validated_data["note"],
                        request_id=request_id_of(request))
        except PlacementError as exc:
            raise ValidationError(exc.errors) from None
        return Response(RoundSerializer(round_detail(round_pk=pk)).data)
