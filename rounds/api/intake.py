"""From a table's request body to a stored round and its answer.

Shared by the single-round and the batch endpoints so that both keep every
body, refuse the same things the same way, and store only through
``ingest_round``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import RequestDataTooBig

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


class BodyTooLarge(ValueError):
    pass


def read_body(request) -> bytes:
    """The raw body, or ``BodyTooLarge`` past ``DATA_UPLOAD_MAX_MEMORY_SIZE``."""
    try:
        return request.body
    except RequestDataTooBig:
        raise BodyTooLarge(
            f"The body is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE}-byte limit "
            f"(Content-Length {request.META.get('CONTENT_LENGTH')}); it was refused and not kept."
        ) from None


def storable(value):
    """``value`` without NUL characters, which PostgreSQL text and jsonb refuse.

    Error messages may quote what the table sent (an unknown decision, an
    unknown ``paid`` key); the refusal must still be kept, not turn into a 500.
    """
    if isinstance(value, str):
        return value.replace("\x00", "\\x00")
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value


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
    claimed_round = storable(claimed_round) if isinstance(claimed_round, str) else ""
    if not serializer.is_valid():
        errors = storable(serializer.errors)
        submission_refuse(
            table=table, body=body, outcome=Submission.Outcome.REJECTED, http_status=400,
            errors=errors, round_id=claimed_round, request_id=request_id,
        )
        return Answer(400, error_body("invalid", "The body is not a valid round record; see errors.",
                                      request, errors))
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
    return _refuse(table=table, body=body, message=message, request=request,
                   request_id=request_id, http_status=400, code="invalid")


def refuse_too_large(*, table: Table, message: str, request, request_id: str) -> Answer:
    """A body past the size limit is never read, so only the refusal itself is kept."""
    return _refuse(table=table, body=b"", message=message, request=request,
                   request_id=request_id, http_status=413, code="body_too_large")


def _refuse(*, table, body, message, request, request_id, http_status, code) -> Answer:
    errors = {"body": [message]}
    submission_refuse(
        table=table, body=body, outcome=Submission.Outcome.REJECTED, http_status=http_status,
        errors=errors, request_id=request_id,
    )
    return Answer(http_status, error_body(code, message, request, errors))
