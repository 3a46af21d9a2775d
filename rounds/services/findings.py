"""Findings as auditors' work: open → acknowledged → resolved or dismissed.

The states and the moves allowed between them are ``infra.work``'s; this is
the one service that makes a move, for a round's findings and for any other
model of worked findings (``model=``).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from infra import sql
from infra.validation import FieldErrors
from infra.work import ALLOWED, NOTE_REQUIRED, State, WorkedFinding
from rounds import mistakes
from rounds.models import Finding
from trail.services import Actor, audit_record

from . import work_tally


class FindingTransitionError(FieldErrors):
    pass


def finding_transition(
    *, finding_ids: list[int], to_state: str, user, note: str = "", request_id: str = "",
    model: type[WorkedFinding] = Finding,
) -> list[WorkedFinding]:
    """Move ``model``'s findings to ``to_state`` as ``user``, with their mates (the other findings of
    the same mistake in the same state, ``rounds.mistakes``); all of them or none.

    Each move is audited as ``<model.work_name>.<to_state>`` with the state
    before and after and the note, one event a finding.
    """
    if to_state not in State.values:
        raise FindingTransitionError(f"unknown state {to_state!r}", field="state")
    note = (note or "").strip()
    if to_state in NOTE_REQUIRED and not note:
        raise FindingTransitionError(f"moving a finding to {to_state} needs a note", field="note")
    actor = Actor.of_user(user)
    now = timezone.now()
    with transaction.atomic():
        named, findings, locked = mistakes.locked_mistakes(model, finding_ids)
        if len(named) != len(set(finding_ids)):
            raise FindingTransitionError("some findings do not exist", field="findings")
        # A round's finding moved changes the work still to do (``work_tally``): counted over what is
        # locked (the findings moved and their mistakes' others), before the move and after it.
        tallied = locked if model is Finding else []
        days = work_tally.days_of(tallied)
        work_before = work_tally.share_of(tallied, days)
        for finding in findings:
            # An informational finding (a progressive award paid right) describes a correct
            # round: there is nothing to work. Variance findings have no such kind.
            if getattr(finding, "informational", False):
                raise FindingTransitionError(
                    f"finding {finding.pk} is informational: a record, not work", field="findings")
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
                actor=actor, action=f"{model.work_name}.{to_state}", obj=finding,
                before={"state": before}, after={"state": to_state, "note": note},
                request_id=request_id,
            )
        # Sent after the events: the transaction holds the audit head, as every writer of the tally.
        moved = work_tally.difference(before=work_before, after=work_tally.share_of(tallied, days))
        sql.run(work_tally.added_statements(moved))
    return findings
