"""From a table's request body to a stored round and its answer.

Shared by the single-round and the batch endpoints so that both keep every
body, refuse the same things the same way, and store only through
``ingest_round``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from casino.errors import error_body
from rounds.models import Submission, Table
from rounds.selectors import round_detail
from rounds.services import ingest_round, submission_refuse

from .serializers import RoundRecordSerializer, RoundSerializer


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: dict


class UnreadableBody(ValueError):
    pass


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(body: bytes):
    """JSON as tables must send it: UTF-8, no NaN or Infinity, not absurdly deep."""
    try:
        return json.loads(body, parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        raise UnreadableBody(f"The body is not valid JSON: {exc}") from None


def receive_round(*, table: Table, payload, body: bytes, request, request_id: str) -> Answer:
    serializer = RoundRecordSerializer(data=payload)
    claimed_round = payload.get("round") if isinstance(payload, dict) else None
    claimed_round = claimed_round if isinstance(claimed_round, str) else ""
    if not serializer.is_valid():
        submission_refuse(
            table=table, body=body, outcome=Submission.Outcome.REJECTED, http_status=400,
            errors=serializer.errors, round_id=claimed_round, request_id=request_id,
        )
        return Answer(400, error_body("invalid", "The body is not a valid round record; see errors.",
                                      request, serializer.errors))
    record = serializer.validated_data
    if record["table"] != table.code:
        errors = {"table": [f"This key belongs to table {table.code}, not {record['table']}."]}
        submission_refuse(
            table=table, body=body, outcome=Submission.Outcome.FORBIDDEN, http_status=403,
            errors=errors, round_id=record["round"], request_id=request_id,
        )
        return Answer(403, error_body("permission_denied", errors["table"][0], request, errors))

    result = ingest_round(table=table, record=record, body=body, request_id=request_id)
    stored = RoundSerializer(round_detail(round_pk=result.round.pk)).data
    if result.outcome == Submission.Outcome.CONFLICT:
        body_ = error_body(
            "conflicting_resubmission",
            f"Round {record['round']} was already stored with a different body; "
            "this one was kept and refused, and the stored round is flagged.",
            request,
        )
        body_["round"] = stored
        return Answer(409, body_)
    return Answer(result.http_status, stored)


def refuse_unreadable(*, table: Table, body: bytes, message: str, request, request_id: str) -> Answer:
    errors = {"body": [message]}
    submission_refuse(
        table=table, body=body, outcome=Submission.Outcome.REJECTED, http_status=400,
        errors=errors, request_id=request_id,
    )
    return Answer(400, error_body("invalid", message, request, errors))
