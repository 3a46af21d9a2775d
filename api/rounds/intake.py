"""From a table's request body to a stored round and its answer.

Shared by the single-round and the batch endpoints so that both keep every
body, refuse the same things the same way, and store only through
``ingest_round`` / ``ingest_rounds``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError

# LengthRequired: read_body raises it, and the views catch it from here.
from game.findings import CONFLICTING_RESUBMISSION
from infra.chunked import LengthRequired, PastLimit, is_chunked, read_chunked  # noqa: F401
from infra.error_shape import error_body
from infra.jsons import write_json
from infra.metrics import BATCH_ROUNDS, INGEST_SECONDS
from rounds.models import Submission, Table
from rounds.partitions import MonthArchived
from rounds.services import Received, ingest_round, ingest_rounds, submission_refuse
from rounds.wire.json_body import storable
from rounds.wire.serializers import RoundRecordSerializer, record_fast, round_data

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: dict
    kept: int = 0  # bytes of body this answer kept (a Submission's), for the table's hourly budget


class BodyTooLarge(ValueError):
    """A body past ``limit``: ``size`` bytes as sent (for a chunked body, as far as it was
    read), of which only ``first`` (its first ``ROUND_BODY_KEPT_BYTES``) was read to keep."""

    def __init__(self, *, limit: int, size: int, first: bytes, chunked: bool = False):
        self.limit, self.size, self.first = limit, size, first
        sent = f"more than {limit} bytes, sent chunked" if chunked else f"{size} bytes"
        super().__init__(
            f"The body ({sent}) is larger than the {limit}-byte limit; it was refused, "
            f"and only its first {len(first)} bytes were kept."
        )


def round_body_limit() -> int | None:
    """The size limit of one round's body: ``ROUND_BODY_MAX_BYTES``, or the whole-request
    limit where that is lower."""
    return _lowest(settings.ROUND_BODY_MAX_BYTES, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)


def request_body_limit() -> int | None:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _lowest(*limits: int | None) -> int | None:
    given = [limit for limit in limits if limit is not None]
    return min(given) if given else None


def read_body(request, *, limit: int | None) -> bytes:
    """The raw body, or ``BodyTooLarge`` past ``limit`` (with the body's first bytes only).

    A chunked body declares no Content-Length, and Django reads such a body as
    empty: it is read here from the server's input, where the server marks that
    input as ending with the body (``wsgi.input_terminated``, as gunicorn does);
    from a server that does not, it cannot be read safely: ``LengthRequired``.
    """
    http = getattr(request, "_request", request)  # DRF's request wraps Django's
    if is_chunked(http.META):
        return _read_chunked(http, limit)
    try:
        size = int(http.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        size = 0
    if limit is not None and size > limit:
        raise BodyTooLarge(limit=limit, size=size, first=http.read(settings.ROUND_BODY_KEPT_BYTES))
    try:
        return http.body
    except RequestDataTooBig:
        raise BodyTooLarge(
            limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE, size=size,
            first=http.read(settings.ROUND_BODY_KEPT_BYTES),
        ) from None


def _read_chunked(http, limit: int | None) -> bytes:
    try:
        return read_chunked(http, limit=limit)
    except PastLimit as past:
        first = past.read[:settings.ROUND_BODY_KEPT_BYTES]
        raise BodyTooLarge(limit=limit, size=len(past.read), first=first, chunked=True) from None


@INGEST_SECONDS.labels(endpoint="round").time()
def receive_round(*, table: Table, payload, body: bytes, request, request_id: str) -> Answer:
    record, refusal = _check(table, payload, body, request, request_id)
    if refusal is not None:
        return refusal
    try:
        result = ingest_round(table=table, record=record, body=body, request_id=request_id)
    except OperationalError as error:
        _kept_anyway(table, [Received(record, body)], error, request_id)
        raise  # the database cannot serve: a 503 to retry (casino.errors, the API's handler)
    except MonthArchived as archived:
        return _refuse_archived(table, Received(record, body), archived, request, request_id)
    except Exception as error:
        logger.exception("round %s of table %s could not be stored", record["round"], table.code)
        return _not_stored(table, Received(record, body), error, request, request_id)
    return answer_of(result, request, kept=len(body))


# Rounds stored per transaction in a batch (measured: docs/SCALING.md).
CHUNK = 100


@INGEST_SECONDS.labels(endpoint="batch").time()
def receive_batch(*, table: Table, items: list, request, request_id: str) -> list[Answer]:
    """Each record of a batch checked, stored and answered on its own, in order.

    Runs of well-formed records are stored ``CHUNK`` at a time, each run in
    one transaction (``ingest_rounds``): a catch-up upload costs a few round
    trips per hundred rounds, and never holds the pool's lock long enough to
    keep the live tables waiting. Every body is kept in the order it came. If
    a run fails as a whole, its records are stored again one at a time, so
    that a bad one sinks alone.
    """
    BATCH_ROUNDS.observe(len(items))
    answers: list[Answer | None] = [None] * len(items)
    run: list[tuple[int, Received]] = []

    def store_run() -> None:
        # A run that fails together is stored again record by record (ingest_rounds);
        # the database unable to serve raises: the whole request is a 503 to retry.
        try:
            results = ingest_rounds(table=table, received=[r for _, r in run], request_id=request_id)
        except OperationalError as error:
            _kept_anyway(table, [r for _, r in run], error, request_id)
            raise
        for (number, received), result in zip(run, results, strict=True):
            answers[number] = (
                _not_stored(table, received, result, request, request_id)
                if isinstance(result, Exception) else answer_of(result, request, kept=len(received.body))
            )
        run.clear()

    limit = settings.ROUND_BODY_MAX_BYTES
    for number, item in enumerate(items):
        body = item_body(item)
        if limit is not None and len(body) > limit:
            if run:
                store_run()
            answers[number] = _refuse_item_too_large(table, item, body, limit, request, request_id)
            continue
        record, refusal = _check(table, item, body, request, request_id, before_refusal=store_run if run else None)
        if refusal is not None:
            answers[number] = refusal
            continue
        run.append((number, Received(record, body)))
        if len(run) == CHUNK:
            store_run()
    if run:
        store_run()
    return answers


def item_body(item) -> bytes:
    """What is kept as the body of one record of a batch: the record as compact JSON
    (``infra.jsons.write_json``: it reads back as the same record)."""
    return write_json(item).encode()


def _refuse_item_too_large(table: Table, item, body: bytes, limit: int, request, request_id: str) -> Answer:
    claimed_round = item.get("round") if isinstance(item, dict) else None
    claimed_round = storable(claimed_round) if isinstance(claimed_round, str) else ""
    too_large = BodyTooLarge(limit=limit, size=len(body), first=body[:settings.ROUND_BODY_KEPT_BYTES])
    return _refuse_cut(table=table, too_large=too_large, http_status=413, code="body_too_large",
                       message=str(too_large), round_id=claimed_round, request=request, request_id=request_id)


def _kept_anyway(table: Table, received: list[Received], error: OperationalError, request_id: str) -> None:
    """The bodies of records the database could not serve (a deadlock, a timeout, a lost
    connection) kept as 503 refusals, as far as it serves that; the request is a 503 all the same."""
    try:
        for one in received:
            submission_refuse(
                table=table, body=one.body, outcome=Submission.Outcome.REJECTED, http_status=503,
                errors={"non_field_errors": [f"The database could not serve this round; send it again. "
                                             f"({type(error).__name__})"]},
                round_id=storable(one.record["round"]), request_id=request_id,
            )
    except Exception:
        logger.exception("the bodies of %d records could not be kept either", len(received))


def _not_stored(table: Table, received: Received, error: Exception, request, request_id: str) -> Answer:
    """A well-formed record the service failed to store (a fault of the service, logged with
    ``error``): its body is kept all the same, as a refusal an auditor can find."""
    if isinstance(error, MonthArchived):
        return _refuse_archived(table, received, error, request, request_id)
    message = "This round could not be stored; the error was logged and the body kept. Send it again later."
    kept = len(received.body)
    try:
        submission_refuse(
            table=table, body=received.body, outcome=Submission.Outcome.REJECTED, http_status=500,
            errors={"non_field_errors": [f"{message} ({type(error).__name__})"]},
            round_id=storable(received.record["round"]), request_id=request_id,
        )
    except Exception:  # noqa: BLE001 - the answer in the error shape must still go out
        logger.exception("the body of round %s could not be kept either", received.record["round"])
        message, kept = "This round could not be stored; the error was logged. Send it again later.", 0
    return Answer(500, error_body("server_error", message, request), kept=kept)


def _refuse_archived(table: Table, received: Received, archived: MonthArchived, request, request_id: str) -> Answer:
    """A round of an archived month: no fault of the table's record nor of the service, but the
    month's rounds are away (``partitions archive``). A 409 naming ``dealt_at``, the body kept, so
    that the round is stored once the month is attached again and the table (or an operator) sends it."""
    errors = {"dealt_at": [str(archived)]}
    submission_refuse(
        table=table, body=received.body, outcome=Submission.Outcome.REJECTED, http_status=409,
        errors=errors, round_id=storable(received.record["round"]), request_id=request_id,
    )
    return Answer(409, error_body("month_archived", errors["dealt_at"][0], request, errors), kept=len(received.body))


def _check(table: Table, payload, body: bytes, request, request_id: str,
           before_refusal=None) -> tuple[dict | None, Answer | None]:
    """The canonical record, or the refusal (kept with its body) of a body that is not one.

    ``before_refusal`` runs before a refusal is kept: a batch stores the
    records before this one first, so the bodies are kept in the order sent.
    """
    record = record_fast(payload)
    if record is None:
        serializer = RoundRecordSerializer(data=payload)
        if not serializer.is_valid():
            if before_refusal is not None:
                before_refusal()
            claimed_round = payload.get("round") if isinstance(payload, dict) else None
            claimed_round = storable(claimed_round) if isinstance(claimed_round, str) else ""
            errors = storable(serializer.errors)
            submission_refuse(
                table=table, body=body, outcome=Submission.Outcome.REJECTED, http_status=400,
                errors=errors, round_id=claimed_round, request_id=request_id,
            )
            return None, Answer(400, error_body(
                "invalid", "The body is not a valid round record; see errors.", request, errors), kept=len(body))
        record = serializer.validated_data
    if record["table"] != table.code:
        if before_refusal is not None:
            before_refusal()
        errors = {"table": [f"This key belongs to table {table.code}, not {record['table']}."]}
        submission_refuse(
            table=table, body=body, outcome=Submission.Outcome.FORBIDDEN, http_status=403,
            errors=errors, round_id=record["round"], request_id=request_id,
        )
        return None, Answer(403, error_body("permission_denied", errors["table"][0], request, errors),
                            kept=len(body))
    return record, None


def answer_of(result, request, *, kept: int = 0) -> Answer:
    """The answer to one stored record: the round as this record left it."""
    stored = round_data(result.round, seats=result.seats, findings=result.findings,
                        meter_events=result.meter_events)
    if result.outcome == Submission.Outcome.CONFLICT:
        body_ = error_body(
            CONFLICTING_RESUBMISSION,
            f"Round {result.round.round_id} was already stored with a different body; "
            "this one was kept and refused, and the stored round is flagged.",
            request,
        )
        body_["round"] = stored
        return Answer(409, body_, kept=kept)
    return Answer(result.http_status, stored, kept=kept)


def refuse_unreadable(*, table: Table, body: bytes, message: str, request, request_id: str) -> Answer:
    """A body that is not what the endpoint reads: kept whole, or past a round's size
    limit (a batch's may be far larger) only its first bytes, with its size."""
    limit = settings.ROUND_BODY_MAX_BYTES
    if limit is not None and len(body) > limit:
        too_large = BodyTooLarge(limit=limit, size=len(body), first=body[:settings.ROUND_BODY_KEPT_BYTES])
        return _refuse_cut(table=table, too_large=too_large, http_status=400, code="invalid",
                           message=f"{message} (Of its {len(body)} bytes only the first "
                                   f"{len(too_large.first)} were kept.)",
                           request=request, request_id=request_id)
    return _refuse(table=table, body=body, message=message, request=request,
                   request_id=request_id, http_status=400, code="invalid")


def refuse_too_large(*, table: Table, too_large: BodyTooLarge, request, request_id: str) -> Answer:
    """A body past the size limit: only its first bytes were read, and are kept with its size."""
    return _refuse_cut(table=table, too_large=too_large, http_status=413, code="body_too_large",
                       message=str(too_large), request=request, request_id=request_id)


def refuse_length_required(*, table: Table, message: str, request, request_id: str) -> Answer:
    """A body that could not be read at all: only the refusal itself is kept."""
    return _refuse(table=table, body=b"", message=message, request=request,
                   request_id=request_id, http_status=411, code="length_required")


def _refuse(*, table, body, message, request, request_id, http_status, code) -> Answer:
    errors = {"body": [message]}
    submission_refuse(
        table=table, body=body, outcome=Submission.Outcome.REJECTED, http_status=http_status,
        errors=errors, request_id=request_id,
    )
    return Answer(http_status, error_body(code, message, request, errors), kept=len(body))


def _refuse_cut(*, table, too_large: BodyTooLarge, http_status, code, message, request, request_id,
                round_id: str = "") -> Answer:
    """A body of which only the first bytes are kept, with its size."""
    errors = {"body": [message]}
    submission_refuse(
        table=table, body=too_large.first, outcome=Submission.Outcome.REJECTED, http_status=http_status,
        errors=errors, round_id=round_id, request_id=request_id, original_size=too_large.size,
    )
    return Answer(http_status, error_body(code, message, request, errors), kept=len(too_large.first))
