"""Kept bodies: every body an authenticated table sends is stored, whatever becomes of it."""

from __future__ import annotations

from django.db import transaction

from rounds.models import Submission, Table
from trail.services import Actor, audit_record

from .round_rows import submission_row


def body_keep(table, body, round_id, outcome, status, request_id, round_=None, errors=None) -> Submission:
    submission = submission_row(table, body, round_id, outcome, status, request_id, round_, errors)
    submission.save(force_insert=True)
    return submission


def submission_refuse(
    *, table: Table, body: bytes, outcome: str, http_status: int, errors, round_id: str = "",
    request_id: str = "", original_size: int | None = None,
) -> Submission:
    """Keep a body that was refused (unreadable, too large, another table's), and log the refusal.

    ``original_size``: the body was cut, ``body`` being its first bytes, this its whole size.
    """
    after = {"http_status": http_status, "round": round_id}
    with transaction.atomic():
        submission = submission_row(table, body, round_id, outcome, http_status, request_id, errors=errors)
        if original_size is not None:
            submission.original_size = after["original_size"] = original_size
        submission.save(force_insert=True)
        audit_record(
            actor=Actor.of_table(table), action=f"round.{outcome}", obj=submission, after=after,
            request_id=request_id,
        )
    return submission
