"""A finding's case worked from its page and found in its queue, for any kind of worked finding.

``CaseWork`` gives a finding admin the case's panel on each finding's page
(take it, give it, a priority, a due time, a comment, escalate) posted to
``<finding>/case/``, each through ``rounds.services.cases``; the case's
trail on the page (every move, case change, comment and notice, oldest
first); the queue's ``CaseFilter`` (mine, unassigned, overdue, escalated)
and its ``case`` column.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.text import capfirst

from infra.moments import moment_shown, moments_shown_in
from infra.request_ids import request_id_of
from infra.work import UNRESOLVED, Priority, WorkedFinding, priority_label
from rounds.services.cases import (
    KEEP,
    CaseError,
    assignable,
    case_change,
    case_comment,
    case_escalate,
)
from trail.models import AuditEvent


class CaseFilter(admin.SimpleListFilter):
    """The cases of the one looking, those nobody has, those past their time, those escalated."""

    title = "case"
    parameter_name = "case"
    MINE, UNASSIGNED, OVERDUE, ESCALATED = "mine", "unassigned", "overdue", "escalated"

    def lookups(self, request, model_admin):
        return [(self.MINE, "mine"), (self.UNASSIGNED, "nobody's"), (self.OVERDUE, "overdue: past due, unresolved"),
                (self.ESCALATED, "escalated")]

    def queryset(self, request, queryset):
        value = self.value()
        if value == self.MINE:
            return queryset.filter(assignee=request.user)
        if value == self.UNASSIGNED:
            return queryset.filter(assignee__isnull=True)
        if value == self.OVERDUE:
            return queryset.filter(due_at__lt=timezone.now(), state__in=UNRESOLVED)
        if value == self.ESCALATED:
            return queryset.filter(escalated_at__isnull=False)
        return queryset


@dataclass(frozen=True, slots=True)
class TrailLine:
    at: datetime
    who: str
    what: str
    words: str


def _line(event: AuditEvent, work_name: str) -> TrailLine:
    action = event.action.removeprefix(f"{work_name}.")
    after = event.after if isinstance(event.after, dict) else {}
    before = event.before if isinstance(event.before, dict) else {}
    if action == "comment":
        return TrailLine(event.at, event.actor_name, "commented", after.get("comment", ""))
    if action == "notified":
        to = ", ".join(after.get("to", [])) or "nobody"
        sent = "mailed" if after.get("sent") else f"NOT sent: {after.get('error', '')}"
        return TrailLine(event.at, event.actor_name, f"notice ({after.get('why', '')})",
                         f"{after.get('subject', '')} — {sent} to {to}")
    if action in ("case", "escalated"):
        # The events keep moments in UTC (``moment_text``); a person reads them on the casino's clock.
        changed = [f"{key} {moments_shown_in(before.get(key)) or '–'} → {moments_shown_in(after.get(key)) or '–'}"
                   for key in ("assignee", "priority", "due") if before.get(key) != after.get(key)]
        what = "escalated to the supervisors" if action == "escalated" else "changed the case"
        return TrailLine(event.at, event.actor_name, what, "; ".join(filter(None, [after.get("note", ""), *changed])))
    return TrailLine(event.at, event.actor_name, action.replace("_", " "), after.get("note", "") or "")


def case_trail(finding: WorkedFinding) -> list[TrailLine]:
    """Everything the trail holds about the finding, oldest first."""
    model = type(finding)
    events = AuditEvent.objects.filter(object_type=model._meta.label_lower, object_id=str(finding.pk)).order_by("seq")
    return [_line(event, model.work_name) for event in events]


def _due_of(text: str):
    """A due time typed in a ``datetime-local`` field, in the casino's time zone; None: cleared."""
    text = text.strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CaseError(f"{text!r} is not a date and time", field="due_at") from None
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


class CaseWork:
    """The case of each finding, for a ModelAdmin of any ``WorkedFinding`` model (with ``WorkActions``)."""

    def case_url_name(self) -> str:
        return f"{self.model._meta.app_label}_{self.model._meta.model_name}_case"

    def get_urls(self):
        return [
            path("<path:object_id>/case/", self.admin_site.admin_view(self.case_view), name=self.case_url_name()),
            *super().get_urls(),
        ]

    @admin.display(description="case", ordering="priority")
    def case_shown(self, finding: WorkedFinding) -> str:
        """Whose, how urgent and by when, in a few words: "alice · high · due 2026-12-06 14:00"."""
        parts = [finding.assignee_name or "nobody's"]
        if finding.priority != Priority.NORMAL:
            parts.append(priority_label(finding.priority))
        if finding.due_at:
            late = " (overdue)" if finding.due_at < timezone.now() and finding.state in UNRESOLVED else ""
            parts.append(f"due {moment_shown(finding.due_at)}{late}")
        if finding.escalated_at:
            parts.append("escalated")
        return " · ".join(parts)

    def case_context(self, request, finding: WorkedFinding) -> dict:
        can_work = request.user.has_perm(self.model.worker_permission())
        return {
            "case": {
                "finding": finding, "can_work": can_work and not getattr(finding, "informational", False),
                "people": assignable(self.model) if can_work else [],
                "priorities": Priority.choices,
                "due": timezone.localtime(finding.due_at).strftime("%Y-%m-%dT%H:%M") if finding.due_at else "",
                "url": reverse(f"admin:{self.case_url_name()}", args=[finding.pk]),
                "trail": case_trail(finding),
            },
        }

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context.update(self.case_context(request, obj))
        return super().render_change_form(request, context, add, change, form_url, obj)

    def case_view(self, request, object_id):
        """The case's panel posted: one change through ``rounds.services.cases``; the page again."""
        if not (request.user.has_perm(self.model.worker_permission()) and self.has_view_permission(request)):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        try:
            pk = self.model._meta.pk.to_python(object_id)
        except ValidationError:
            raise Http404("No such finding.") from None
        finding = get_object_or_404(self.model, pk=pk)
        post, common = request.POST, {"model": self.model, "finding_id": finding.pk, "user": request.user,
                                      "request_id": request_id_of(request)}
        do, level = post.get("do", ""), messages.SUCCESS
        try:
            if do == "take":
                case_change(**common, assignee=request.user)
                said = "it is yours"
            elif do == "case":
                chosen = post.get("assignee", "")
                assignee = get_user_model().objects.filter(pk=chosen).first() if chosen.isdigit() else None
                if chosen and assignee is None:
                    raise CaseError("no such person", field="assignee")
                priority = int(post["priority"]) if post.get("priority", "").isdigit() else KEEP
                case_change(**common, assignee=assignee, priority=priority, due_at=_due_of(post.get("due_at", "")))
                said = "the case is changed"
            elif do == "comment":
                case_comment(**common, text=post.get("comment", ""))
                said = "your comment is kept"
            elif do == "escalate":
                escalated = case_escalate(**common, note=post.get("note", ""))
                said = "escalated: the supervisors are told"
                if not escalated.told:
                    level = messages.WARNING
                    said = "escalated, but the mail to the supervisors did not go: the trail below says why"
            else:
                raise CaseError("no such change", field="do")
        except CaseError as refused:
            messages.error(request, capfirst(f"{finding}: {refused}. Nothing changed."))
        else:
            messages.add_message(request, level, capfirst(f"{finding}: {said}."))
        return redirect(f"admin:{self.model._meta.app_label}_{self.model._meta.model_name}_change", finding.pk)
