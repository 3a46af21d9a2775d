"""A finding's case over the API: read it, give it to a person, a priority and a due time,
comment on it, escalate it.

The same case as the admin's panel (``rounds.services.cases``), for every kind of
worked finding: a round's (``/findings/<id>/case``) and game protection's
(``/protection/findings/<id>/case``). A change, a comment or an escalation reaches
the other findings of the same mistake (``rounds.mistakes``), each with its own
event in the trail; the answer names them all.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from api.audit.reports import AUTHENTICATION
from audit.models import ProtectionFinding
from infra.openapi import EVERY_REQUEST, JSON_BODY, PERSON_WRITE, STAFF_ONLY, answers, refusal
from infra.permissions import StaffReadsPersonWrites
from infra.request_ids import request_id_of
from infra.work import Priority, WorkedFinding, priority_label
from rounds import mistakes
from rounds.models import Finding
from rounds.services.cases import COMMENT_MOST, KEEP, CaseError, case_change, case_comment, case_escalate
from rounds.wire.fields import StrictCharField
from trail.models import AuditEvent

PRIORITIES = [label for _, label in Priority.choices]
NOTE_MOST = 2000
NO_FINDING = "No finding of this kind has this id."
# The comments a case's read carries: its newest. A case worked for months holds hundreds, and
# every read (every change, comment and escalation answers with the case) would carry them all.
COMMENTS_SHOWN = 20


class CommentSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    by = serializers.CharField(source="actor_name")
    text = serializers.CharField(source="after.comment", default="")


class CaseSerializer(serializers.Serializer):
    finding = serializers.IntegerField(help_text="The finding asked about.")
    findings = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="It and the other findings of the same mistake (a seat's off-unit bets), which its "
                  "case's changes reach.")
    state = serializers.CharField()
    assignee = serializers.CharField(allow_null=True, help_text="The username of the person it is given to.")
    priority = serializers.ChoiceField(choices=PRIORITIES)
    due_at = serializers.DateTimeField(allow_null=True)
    escalated_at = serializers.DateTimeField(allow_null=True)
    comments = CommentSerializer(
        many=True, help_text=f"The newest {COMMENTS_SHOWN}, oldest first, each as the trail keeps it; "
                             "GET the case's comments for every one, a page at a time.")
    comments_total = serializers.IntegerField(help_text="How many comments the case has in all.")


class EscalatedSerializer(CaseSerializer):
    told = serializers.BooleanField(
        help_text="The mail server took the supervisors' notice; if not, the notices job tells them later.")


class CaseChangeSerializer(serializers.Serializer):
    assignee = StrictCharField(required=False, allow_null=True, max_length=150,
                               help_text="A username; null gives the case to nobody.")
    priority = serializers.ChoiceField(choices=PRIORITIES, required=False)
    due_at = serializers.DateTimeField(required=False, allow_null=True, help_text="Null: no due time.")

    def validate(self, data):
        if not data:
            raise ValidationError({"case": ["give at least one of assignee, priority and due_at."]})
        return data


class CaseCommentSerializer(serializers.Serializer):
    comment = StrictCharField(max_length=COMMENT_MOST)


class EscalationSerializer(serializers.Serializer):
    note = StrictCharField(max_length=NOTE_MOST, help_text="Why the supervisors must look.")


def comments_of(finding: WorkedFinding):
    """The trail's comments on ``finding``'s case."""
    model = type(finding)
    return AuditEvent.objects.filter(object_type=model._meta.label_lower, object_id=str(finding.pk),
                                     action=f"{model.work_name}.comment")


def case_answer(finding: WorkedFinding) -> dict:
    """The case of ``finding`` as it stands, with its mates and its newest comments."""
    comments = comments_of(finding)
    newest = list(comments.order_by("-seq").only("at", "actor_name", "after")[:COMMENTS_SHOWN])
    return {
        "finding": finding.pk,
        "findings": sorted([finding.pk, *(mate.pk for mate in mistakes.mates_of(finding))]),
        "state": finding.state,
        "assignee": finding.assignee_name or None,
        "priority": priority_label(finding.priority),
        "due_at": finding.due_at,
        "escalated_at": finding.escalated_at,
        "comments": newest[::-1],
        "comments_total": len(newest) if len(newest) < COMMENTS_SHOWN else comments.count(),
    }


class OldestFirst(CursorPagination):
    ordering = ("seq",)


class _CaseView(APIView):
    """Reading a case asks for read access to its findings; changing it, for working them."""

    authentication_classes = AUTHENTICATION
    permission_classes = [StaffReadsPersonWrites]
    model: type[WorkedFinding]

    @property
    def queryset(self):
        return self.model.objects.all()

    @property
    def write_permission(self) -> str:
        return self.model.worker_permission()

    def _finding(self, pk: int) -> WorkedFinding:
        finding = self.model.objects.filter(pk=pk).first()
        if finding is None:
            raise NotFound(NO_FINDING)
        return finding

    def _worked(self, request, pk: int, given: type[serializers.Serializer], work):
        """The finding (404 if none), ``request``'s body read by ``given``, then ``work(data, **common)``
        done through the case services: what it answers, or its refusal as field errors."""
        finding = self._finding(pk)
        body = given(data=request.data)
        body.is_valid(raise_exception=True)
        common = {"model": self.model, "finding_id": finding.pk, "user": request.user,
                  "request_id": request_id_of(request)}
        try:
            return work(body.validated_data, **common)
        except CaseError as exc:
            raise ValidationError(exc.errors) from None


WRITE_REFUSED = {
    400: refusal("The body is not JSON, a field of it is invalid, or the case refuses the change "
                 "(a person who may not work these findings, nothing to change, an informational "
                 "finding, a case escalated already); errors names the field, and nothing changed."),
    404: refusal(NO_FINDING),
}


class CaseView(_CaseView):
    """A finding's case: who has it, how urgent it is, when it is due, whether it was escalated,
    and its comments."""

    @extend_schema(responses=answers({200: CaseSerializer}, STAFF_ONLY, EVERY_REQUEST,
                                     {404: refusal(NO_FINDING)}),
                   summary="Read a finding's case")
    def get(self, request, pk: int):
        return Response(CaseSerializer(case_answer(self._finding(pk))).data)

    @extend_schema(
        request=CaseChangeSerializer,
        responses=answers({200: CaseSerializer}, PERSON_WRITE, JSON_BODY, EVERY_REQUEST, WRITE_REFUSED),
        summary="Give a finding's case to a person, a priority or a due time",
        description="Only the fields given change; each finding of the mistake gets its own event in the trail.",
    )
    def patch(self, request, pk: int):
        finding = self._worked(request, pk, CaseChangeSerializer, self._change)
        return Response(CaseSerializer(case_answer(finding)).data)

    @staticmethod
    def _change(data: dict, **common) -> WorkedFinding:
        changes = {}
        if "assignee" in data:
            name = data["assignee"]
            assignee = None if name is None else get_user_model().objects.filter(username=name).first()
            if name is not None and assignee is None:
                raise CaseError(f"no person {name!r}", field="assignee")
            changes["assignee"] = assignee
        if "priority" in data:
            changes["priority"] = next(value for value, label in Priority.choices if label == data["priority"])
        return case_change(**common, **changes, due_at=data.get("due_at", KEEP))


class CaseCommentView(_CaseView, generics.ListAPIView):
    """A case's comments, a page at a time, oldest first; a new comment on it: an event in its
    trail, never edited or taken back."""

    serializer_class = CommentSerializer
    pagination_class = OldestFirst
    filter_backends = ()

    def get_queryset(self):
        return comments_of(self._finding(self.kwargs["pk"])).only("seq", "at", "actor_name", "after")

    @extend_schema(responses=answers({200: CommentSerializer}, STAFF_ONLY, EVERY_REQUEST, {404: refusal(
                       "No finding of this kind has this id, or the cursor is not one this list handed out.")}),
                   summary="Read a finding's case's comments")
    def get(self, request, *args, **kwargs):
        return self.list(request, *args, **kwargs)

    @extend_schema(
        request=CaseCommentSerializer,
        responses=answers({201: CaseSerializer}, PERSON_WRITE, JSON_BODY, EVERY_REQUEST, WRITE_REFUSED),
        summary="Comment on a finding's case",
    )
    def post(self, request, pk: int):
        finding = self._worked(request, pk, CaseCommentSerializer,
                               lambda data, **common: case_comment(**common, text=data["comment"]))
        return Response(CaseSerializer(case_answer(finding)).data, status=201)


class CaseEscalationView(_CaseView):
    """Escalate a finding's case to the supervisors, saying why: recorded, then mailed to them."""

    @extend_schema(
        request=EscalationSerializer,
        responses=answers({200: EscalatedSerializer}, PERSON_WRITE, JSON_BODY, EVERY_REQUEST, WRITE_REFUSED),
        summary="Escalate a finding's case to the supervisors",
        description="Once only. The supervisors are mailed once for the whole mistake; told says whether "
                    "the mail server took it (if not, the notices job tells them later).",
    )
    def post(self, request, pk: int):
        escalated = self._worked(request, pk, EscalationSerializer,
                                 lambda data, **common: case_escalate(**common, note=data["note"]))
        return Response(EscalatedSerializer({**case_answer(escalated.finding), "told": escalated.told}).data)


def case_views(model: type[WorkedFinding]) -> tuple[type[APIView], type[APIView], type[APIView]]:
    """The case's three views for ``model``'s findings."""
    name = model.__name__
    return tuple(type(f"{name}{view.__name__}", (view,), {"model": model, "__doc__": view.__doc__})
                 for view in (CaseView, CaseCommentView, CaseEscalationView))


FINDING_CASE = case_views(Finding)
PROTECTION_FINDING_CASE = case_views(ProtectionFinding)
