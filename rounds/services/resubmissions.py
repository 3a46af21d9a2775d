"""A record sent again under a round id that is stored already."""

from __future__ import annotations

from game.findings import CONFLICTING_RESUBMISSION
from game.verdict import status_after_service_finding
from rounds.models import Finding, Round, Submission
from trail.services import Actor, AuditEntry

from . import work_tally
from .submissions import body_keep


def resubmission(table, existing: Round, digest: str, body: bytes, request_id: str,
                 tally: dict) -> tuple[str, list[AuditEntry]]:
    """Keep the body; the same record is a replay, a different one is refused and flags the round.

    ``existing`` is row-locked by the caller (``infra.locks``). Returns the
    ``Submission.Outcome`` and what the audit chain must say of it, for the
    caller to append with its other events under one lock of the chain's head,
    and adds the finding it raises to ``tally`` (``work_tally``), for the caller
    to send once it holds the head.
    """
    if existing.record_hash == digest:
        body_keep(table, body, existing.round_id, Submission.Outcome.REPLAYED, 200, request_id, existing)
        return Submission.Outcome.REPLAYED, []
    submission = body_keep(table, body, existing.round_id, Submission.Outcome.CONFLICT, 409, request_id, existing)
    raised = Finding.objects.create(
        round=existing, code=CONFLICTING_RESUBMISSION,
        detail=f"submission {submission.pk} sent a different body for this round id; it was refused and kept",
    )
    work_tally.of_new([existing], [raised], into=tally)  # raised for no seat: a mistake of its own
    if existing.status != status_after_service_finding(existing.status):
        existing.status = status_after_service_finding(existing.status)
        # With its gaming day, the update looks in one partition only.
        Round.objects.filter(pk=existing.pk, gaming_day=existing.gaming_day).update(status=existing.status)
    return Submission.Outcome.CONFLICT, [AuditEntry(
        actor=Actor.of_table(table), action="round.conflict_refused", obj=existing,
        after={"submission": submission.pk}, request_id=request_id,
    )]
