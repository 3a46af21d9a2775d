"""Kept bodies: every body an authenticated table sends is stored, whatever becomes of it."""

from __future__ import annotations

from django.db import transaction

from audit.services import Actor, audit_record
from rounds.models import Submission, Table

from .round_rows import submission_row


def body_keep(table, body, round_id, outcome, status, request_id, round_=None, errors=None) -> Submission:
    submission = submission_row(table, body, round_id, outcome, status, request_id, round_, errors)
    submission.save(force_insert=True)
    return submission


def submission_refuse(
    *, table: Table, body: bytes, outcome: str, http_status: int, errors, round_id: str = "",
    request_id: str = "",
) -> Submission:
    """Keep a body that was refused (unreadable, or another table's), and log the refusal."""
    with transaction.atomic():
        submission = body_keep(table, body, round_id, outcome, http_status, request_id, errors=errors)
        audit_record(
            actor=Actor.of_table(table), action=f"round.{outcome}", obj=submission,
            after={"http_status": http_status, "round": round_id}, request_id=request_id,
        )
    return submission
