"""Findings as auditors' work: open → acknowledged → resolved or dismissed."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from audit.services import Actor, audit_record
from casino.validation import FieldErrors
from rounds.models import Finding

State = Finding.State
ALLOWED = {
    State.OPEN: {State.ACKNOWLEDGED, State.RESOLVED, State.DISMISSED},
    State.ACKNOWLEDGED: {State.RESOLVED, State.DISMISSED, State.OPEN},
    State.RESOLVED: {State.OPEN},
    State.DISMISSED: {State.OPEN},
}
# Closing or reopening a finding must say why; acknowledging it need not.
NOTE_REQUIRED = {State.RESOLVED, State.DISMISSED, State.OPEN}


class FindingTransitionError(FieldErrors):
    pass


def finding_transition(
    *, finding_ids: list[int], to_state: str, user, note: str = "", request_id: str = ""
) -> list[Finding]:
    """Move findings to ``to_state`` as ``user``; all of them or none."""
    if to_state not in State.values:
        raise FindingTransitionError(f"unknown state {to_state!r}", field="state")
    note = (note or "").strip()
    if to_state in NOTE_REQUIRED and not note:
        raise FindingTransitionError(f"moving a finding to {to_state} needs a note", field="note")
    actor = Actor.of_user(user)
    now = timezone.now()
    with transaction.atomic():
        findings = list(
            Finding.objects.select_for_update().filter(pk__in=finding_ids).order_by("pk")
        )
        if len(findings) != len(set(finding_ids)):
            raise FindingTransitionError("some findings do not exist", field="findings")
        for finding in findings:
            if to_state not in ALLOWED[finding.state]:
                raise FindingTransitionError(
                    f"finding {finding.pk} is {finding.state}; it cannot become {to_state}",
                    field="findings",
                )
        for finding in findings:
            before = finding.state
            finding.state = to_state
            finding.state_changed_at = now
            finding.state_changed_by = user
            finding.state_changed_by_name = actor.name
            finding.state_note = note
            finding.save(update_fields=[
                "state", "state_changed_at", "state_changed_by", "state_changed_by_name", "state_note",
            ])
            audit_record(
                actor=actor, action=f"finding.{to_state}", obj=finding,
                before={"state": before}, after={"state": to_state, "note": note},
                request_id=request_id,
            )
    return findings
