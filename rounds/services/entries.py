"""What ``ingest`` takes in and gives back."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from progressive.models import MeterEvent
from rounds.models import Finding, Round, Seat, Table


@dataclass(frozen=True, slots=True)
class IngestResult:
    # The round as this record left it: a later record of the same batch (a
    # conflict flags the round) does not change its answer.
    round: Round
    outcome: str  # a Submission.Outcome: accepted, replayed or conflict
    # A new round's rows as just written, so that its answer needs no read
    # (None: the round was read with them, prefetched).
    seats: list[Seat] | None = None
    findings: list[Finding] | None = None
    meter_events: list[MeterEvent] | None = None

    @property
    def http_status(self) -> int:
        return {"accepted": 201, "replayed": 200, "conflict": 409}[self.outcome]


@dataclass(frozen=True, slots=True)
class Received:
    """One record of a table, shape-checked and canonical, and the body it came in."""

    record: dict
    body: bytes


@dataclass(frozen=True, slots=True)
class Entry:
    """A received record with who sent it: several tables' records can share a transaction."""

    table: Table
    record: dict
    body: bytes
    request_id: str
    digest: str | None = None  # worked out by the request's own thread when the combiner stores it
    wire: object = None  # the record read for the engine (``round_from_wire``), likewise
    # When the service received it: a round dealt later than this is dealt_in_future
    # (game.clock), and the round's received_at is this moment.
    received_at: datetime = field(default_factory=timezone.now)

    @property
    def key(self) -> tuple[int, str]:
        return self.table.pk, self.record["round"]


def record_hash(record: dict) -> str:
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
