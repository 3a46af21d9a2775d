"""A finding's case: who has it, how urgent, by when, whether escalated, and what people said.

Any kind of worked finding (``infra.work.WorkedFinding``) is a case. Each
change is made here under the finding's row lock and recorded in the trail
on the finding, in the same transaction: ``<work_name>.case`` with the case
before and after, ``.comment`` with the words, ``.escalated`` with the case
and the reason, after which the supervisors are told (``rounds.notices``).
The findings of one mistake (``rounds.mistakes``) are one case: a change made
on one is made, and recorded, on each of its mates too, and told once.
``audit.proof_findings`` holds every case's columns to its last event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from infra.moments import moment_shown
from infra.work import UNRESOLVED, Priority, WorkedFinding, priority_label
from rounds import mistakes, notices
from trail.services import Actor, AuditEntry, audit_record_many

from .findings import FindingTransitionError

# What a comment may hold: a paragraph or a few, never a pasted log.
COMMENT_MOST = 4000
# The events that change a case's columns (a comment and a notice change none).
CASE_ACTIONS = ("case", "escalated")
# A sentinel for "leave it as it is" among the case's changes (None clears an assignee or a due time).
KEEP = object()


class CaseError(FindingTransitionError):
    pass


def case_of(finding: WorkedFinding) -> dict[str, object]:
    """The case as its events record it (``audit.proof_findings`` reads the same keys)."""
    return {
        "assignee": finding.assignee_name,
        "priority": priority_label(finding.priority),
        "due": moment_text(finding.due_at),
        "escalated": moment_text(finding.escalated_at),
    }


def moment_text(moment: datetime | None) -> str:
    """A case's moment as its events write it: in UTC, as the database gives it back whatever zone it
    was typed in, so the proof compares like with like."""
    return moment.astimezone(UTC).isoformat() if moment else ""



def assignable(model: type[WorkedFinding]):
    """The people a case may be given to: active staff who may work ``model``'s findings."""
    permission = model.worker_permission()
    users = get_user_model().objects.filter(is_active=True, is_staff=True).order_by("username")
    return [user for user in users if user.has_perm(permission)]


def case_change(*, model: type[WorkedFinding], finding_id: int, user, assignee=KEEP, priority=KEEP,
                due_at=KEEP, request_id: str = "") -> WorkedFinding:
    """Give the case to ``assignee`` (None: to nobody), a ``priority``, a ``due_at`` (None: no time)."""
    changes = {}
    if assignee is not KEEP:
        if assignee is not None and assignee.pk not in {u.pk for u in assignable(model)}:
            raise CaseError(f"{assignee.get_username()} may not work these findings", field="assignee")
        changes["assignee"] = assignee
        changes["assignee_name"] = assignee.get_username() if assignee is not None else ""
    if priority is not KEEP:
        if priority not in Priority.values:
            raise CaseError(f"no such priority: {priority!r}", field="priority")
        changes["priority"] = priority
    if due_at is not KEEP:
        if due_at is not None and not isinstance(due_at, datetime):
            raise CaseError("a due time is a date and a time", field="due_at")
        changes["due_at"] = due_at
    return _changed(model, finding_id, user, changes, request_id)


def case_comment(*, model: type[WorkedFinding], finding_id: int, user, text: str,
                 request_id: str = "") -> WorkedFinding:
    """A comment on the case: an event in the finding's trail, never edited or taken back."""
    text = (text or "").strip()
    if not text:
        raise CaseError("a comment needs words", field="comment")
    if len(text) > COMMENT_MOST:
        raise CaseError(f"a comment holds at most {COMMENT_MOST} characters", field="comment")
    with transaction.atomic():
        finding, *mates = _locked(model, finding_id)
        audit_record_many(entries=[AuditEntry(
            actor=Actor.of_user(user), action=f"{model.work_name}.comment", obj=one,
            after={"comment": text}, request_id=request_id) for one in (finding, *mates)])
    return finding


@dataclass(frozen=True, slots=True)
class Escalated:
    finding: WorkedFinding
    told: bool  # the mail server took the supervisors' notice (else ``audit.notices`` tells them later)


def case_escalate(*, model: type[WorkedFinding], finding_id: int, user, note: str,
                  request_id: str = "") -> Escalated:
    """The case escalated to the supervisors with why: recorded and committed, then they are mailed
    (``rounds.notices.tell``). Once only: an escalated case stays escalated (its later work is
    comments and moves).
    """
    note = (note or "").strip()
    if not note:
        raise CaseError("escalating a case needs a note saying why", field="note")
    actor = Actor.of_user(user)
    with transaction.atomic():
        finding, *mates = _locked(model, finding_id)
        if finding.escalated_at is not None:
            raise CaseError(f"{finding} was escalated already, on {moment_shown(finding.escalated_at)}",
                            field="findings")
        mates = [mate for mate in mates if mate.escalated_at is None]
        now, entries = timezone.now(), []
        for one in (finding, *mates):
            before = case_of(one)
            one.escalated_at = now
            one.save(update_fields=["escalated_at"])
            entries.append(AuditEntry(actor=actor, action=f"{model.work_name}.escalated", obj=one,
                                      before=before, after={**case_of(one), "note": note}, request_id=request_id))
        audit_record_many(entries=entries)
    told = notices.tell([notices.escalation_notice(finding, by=actor.name, note=note, mates=mates)])
    return Escalated(finding, told=all(entry.after["sent"] for entry in told))


def cases_handed_back(*, person, actor: Actor, models: Sequence[type[WorkedFinding]], why: str,
                      request_id: str = "") -> int:
    """Each unresolved case ``person`` holds, of those ``models`` whose findings he may no longer work
    (made inactive, or his role taken away), given back to nobody, ``why`` in its event; how many."""
    person = get_user_model().objects.get(pk=person.pk)  # his permissions as they are now, not cached
    handed = 0
    for model in models:
        if person.is_active and person.has_perm(model.worker_permission()):
            continue
        for pk in model.objects.filter(assignee=person, state__in=UNRESOLVED).values_list("pk", flat=True):
            try:
                _changed(model, pk, None, {"assignee": None, "assignee_name": ""}, request_id, actor=actor,
                         note=why)
            except CaseError:  # given back already with its mistake's first finding
                continue
            handed += 1
    return handed


def _changed(model, finding_id: int, user, changes: dict, request_id: str, *, actor: Actor | None = None,
             note: str = "") -> WorkedFinding:
    actor = actor or Actor.of_user(user)
    with transaction.atomic():
        finding, *mates = _locked(model, finding_id)
        entries = []
        for one in (finding, *mates):
            before = case_of(one)
            for name, value in changes.items():
                setattr(one, name, value)
            after = case_of(one)
            if after == before:
                if one is finding:
                    raise CaseError("nothing to change: the case is so already", field="findings")
                continue
            one.save(update_fields=list(changes))
            entries.append(AuditEntry(actor=actor, action=f"{model.work_name}.case", obj=one, before=before,
                                      after={**after, "note": note} if note else after, request_id=request_id))
        audit_record_many(entries=entries)
    return finding


def _locked(model: type[WorkedFinding], finding_id: int) -> list[WorkedFinding]:
    """The finding, then its mates (``rounds.mistakes``), all locked in the one order."""
    named, together = mistakes.locked_with_mates(model, [finding_id])
    if not named:
        raise CaseError(f"no finding {finding_id}", field="findings")
    if getattr(named[0], "informational", False):
        raise CaseError(f"finding {finding_id} is informational: a record, not work", field="findings")
    return together
