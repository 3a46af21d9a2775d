"""A call's records as new rounds and resubmissions, in the order they were sent.

A record whose round id is stored already, or came earlier in the same call,
is a resubmission, answered where it stands; the new rounds between two of
them are written together (``ingest``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from game.verdict import Prepared
from infra.gaming_day import gaming_day_of
from progressive.models import MeterEvent
from rounds.models import Finding, Round, RoundKey, Seat, Submission, TableConfigVersion

from .entries import Entry


@dataclass(slots=True)
class NewRound:
    """A new round, and everything written with it."""

    at: int  # its place among the records
    entry: Entry
    dealt_at: datetime
    gaming_day: date
    version: TableConfigVersion | None = None
    prepared: Prepared | None = None
    round: Round | None = None
    key: RoundKey | None = None
    body: Submission | None = None
    seats: list[Seat] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    events: list[MeterEvent] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    outside: str | None = None  # why it falls outside the books' window (rounds.window), if it does


@dataclass(slots=True)
class Resubmission:
    """A resubmission: of a round stored before (``stored``), or of one new in this call (``new``)."""

    at: int
    entry: Entry
    stored: tuple[int, date] | None
    new: NewRound | None


def steps_of(entries: Sequence[Entry], stored: dict) -> list[NewRound | Resubmission]:
    """Each record as a new round or a resubmission, in the order sent."""
    steps: list[NewRound | Resubmission] = []
    new_here: dict[tuple[int, str], NewRound] = {}
    for at, entry in enumerate(entries):
        if entry.key in stored:
            steps.append(Resubmission(at, entry, stored[entry.key], None))
        elif entry.key in new_here:
            steps.append(Resubmission(at, entry, None, new_here[entry.key]))
        else:
            dealt_at = datetime.fromisoformat(entry.record["dealt_at"])
            steps.append(new_here.setdefault(entry.key, NewRound(at, entry, dealt_at, gaming_day_of(dealt_at))))
    return steps


def runs_of(steps: list[NewRound | Resubmission]) -> Iterator[list[NewRound] | Resubmission]:
    """Runs of new rounds, written together, and each resubmission alone, in order."""
    run: list[NewRound] = []
    for step in steps:
        if isinstance(step, NewRound):
            run.append(step)
            continue
        if run:
            yield run
            run = []
        yield step
    if run:
        yield run
