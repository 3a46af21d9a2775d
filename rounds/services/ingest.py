"""Storing what tables send. ``ingest_round`` is the only way a round is stored."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction

from audit.services import Actor, audit_record
from casino.gaming_day import gaming_day_of
from progressive.services import meter_record_round_events, pool_lock, pool_meters
from rounds.engine import category_name, judge_round
from rounds.engine.findings import CONFLICTING_RESUBMISSION
from rounds.engine.record import round_from_wire
from rounds.engine.rules import BETS

from rounds.models import Finding, Round, Seat, Submission, Table
from rounds.selectors import config_version_in_force, pool_version_in_force


@dataclass(frozen=True, slots=True)
class IngestResult:
    round: Round
    outcome: str  # a Submission.Outcome: accepted, replayed or conflict

    @property
    def http_status(self) -> int:
        return {"accepted": 201, "replayed": 200, "conflict": 409}[self.outcome]


def record_hash(record: dict) -> str:
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def ingest_round(*, table: Table, record: dict, body: bytes, request_id: str = "") -> IngestResult:
    """Keep the body, judge the round, move its pool's meter and store it all, atomically.

    ``record`` is the wire record after shape checks, in canonical form
    (``rounds.api.serializers.RoundRecordSerializer``). A resubmission of the
    same record returns the stored round; a different record under the same
    round id is refused and marks the stored round.
    """
    digest = record_hash(record)
    for attempt in range(2):
        try:
            with transaction.atomic():
                return _ingest(table, record, digest, body, request_id)
        except IntegrityError:
            # Another request stored this round id between our look and our
            # insert; the second pass finds it and answers as a resubmission.
            if attempt:
                raise
    raise AssertionError("unreachable")


def _ingest(table: Table, record: dict, digest: str, body: bytes, request_id: str) -> IngestResult:
    existing = (
        Round.objects.select_for_update().filter(table=table, round_id=record["round"]).first()
    )
    if existing is not None:
        return _resubmission(table, existing, digest, body, request_id)

    dealt_at = datetime.fromisoformat(record["dealt_at"])
    version = config_version_in_force(config=table.config, at=dealt_at)
    pool = pool_version = meters = None
    if version.pool_id:
        pool = pool_lock(pool_id=version.pool_id)
        pool_version = pool_version_in_force(pool=pool, at=dealt_at)
        meters = pool_meters(pool)
    verdict = judge_round(
        round_from_wire(record),
        version.rules(),
        pool_version.rules() if pool_version else None,
        meters,
    )

    round_ = Round.objects.create(
        table=table,
        round_id=record["round"],
        dealt_at=dealt_at,
        gaming_day=gaming_day_of(dealt_at),
        dealer=record.get("dealer") or "",
        void=record["void"],
        board="".join(record.get("board") or ()),
        dealer_cards="".join(record.get("dealer_cards") or ()),
        status=verdict.status,
        dealer_hand=category_name(verdict.dealer_hand) if verdict.dealer_hand is not None else "",
        dealer_qualifies=verdict.dealer_qualifies,
        config_version=version,
        pool_version=pool_version,
        meter_before=meters.meter if meters else None,
        meter_after=verdict.meters_after.meter if verdict.meters_after else None,
        record=record,
        record_hash=digest,
    )
    Seat.objects.bulk_create(_seat_rows(round_, record, verdict))
    Finding.objects.bulk_create(
        Finding(
            round=round_, code=f.code, informational=f.informational, seat=f.seat,
            bet=f.bet or "", expected=f.expected, claimed=f.claimed, detail=f.detail,
        )
        for f in verdict.findings
    )
    if pool is not None and verdict.events:
        meter_record_round_events(pool=pool, events=verdict.events, round=round_)
    _keep_body(table, body, record["round"], Submission.Outcome.ACCEPTED, 201, request_id, round_)
    audit_record(
        actor=Actor.of_table(table), action="round.stored", obj=round_,
        after={"status": round_.status, "record_hash": digest,
               "findings": sorted({f.code for f in verdict.findings})},
        request_id=request_id,
    )
    return IngestResult(round_, Submission.Outcome.ACCEPTED)


def _seat_rows(round_: Round, record: dict, verdict) -> list[Seat]:
    by_number = {s.seat: s for s in verdict.seats}
    rows = []
    for wire in record["seats"]:
        judged = by_number[wire["seat"]]
        paid = wire.get("paid")
        row = Seat(
            round=round_,
            seat=wire["seat"],
            player=wire.get("player") or "",
            hole="".join(wire.get("hole") or ()),
            ante=wire["ante"], blind=wire["blind"], trips=wire["trips"], play=wire["play"],
            progressive=wire["progressive"], progressive_lit=wire["progressive_lit"],
            decision=wire["decision"],
            hand=category_name(judged.hand) if judged.hand is not None else "",
            paid_reported=paid is not None,
        )
        for bet in BETS:
            setattr(row, f"settled_{bet}", judged.settled[bet])
            if paid is not None:
                setattr(row, f"paid_{bet}", paid.get(bet, "0"))
        rows.append(row)
    return rows


def _resubmission(table, existing: Round, digest: str, body: bytes, request_id: str) -> IngestResult:
    if existing.record_hash == digest:
        _keep_body(table, body, existing.round_id, Submission.Outcome.REPLAYED, 200, request_id, existing)
        return IngestResult(existing, Submission.Outcome.REPLAYED)
    submission = _keep_body(
        table, body, existing.round_id, Submission.Outcome.CONFLICT, 409, request_id, existing
    )
    Finding.objects.create(
        round=existing, code=CONFLICTING_RESUBMISSION,
        detail=f"submission {submission.pk} sent a different body for this round id; it was refused and kept",
    )
    if existing.status != Round.Status.FLAGGED:
        existing.status = Round.Status.FLAGGED
        existing.save(update_fields=["status"])
    audit_record(
        actor=Actor.of_table(table), action="round.conflict_refused", obj=existing,
        after={"submission": submission.pk}, request_id=request_id,
    )
    return IngestResult(existing, Submission.Outcome.CONFLICT)


def _keep_body(table, body, round_id, outcome, status, request_id, round_=None, errors=None) -> Submission:
    return Submission.objects.create(
        table=table, body=bytes(body), body_sha256=hashlib.sha256(body).hexdigest(),
        claimed_round=(round_id or "")[:64], outcome=outcome, http_status=status,
        request_id=request_id, errors=errors, round=round_,
    )


def submission_refuse(
    *, table: Table, body: bytes, outcome: str, http_status: int, errors, round_id: str = "",
    request_id: str = "",
) -> Submission:
    """Keep a body that was refused (unreadable, or another table's), and log the refusal."""
    with transaction.atomic():
        submission = _keep_body(table, body, round_id, outcome, http_status, request_id, errors=errors)
        audit_record(
            actor=Actor.of_table(table), action=f"round.{outcome}", obj=submission,
            after={"http_status": http_status, "round": round_id}, request_id=request_id,
        )
    return submission
