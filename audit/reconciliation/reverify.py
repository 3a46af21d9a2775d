"""Judge a stored round again with today's engine and say how its stored verdict differs.

A difference means the engine or a configuration changed the meaning of a
round after it was stored: "drift", which the report shows loudly. Plain
Python over the rows ``selectors.stored_rounds`` yields; no Django.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from game import Clock, judge_round
from game.clock import DEFAULT_TOLERANCE
from game.progressive import Meters, in_contract_order
from game.record import RoundRecord, round_from_wire
from game.rules import BETS, PoolRules, TableRules
from game.verdict import VOID, Verdict, status_after_service_finding
from game.vocabulary import SERVICE_CODES, MeterEventKind

REVERSAL = MeterEventKind.REVERSAL.value

ZERO = Decimal(0)
EXAMPLES_KEPT = 50


def judge_stored(
    stored, rules: TableRules, pool: PoolRules | None, clock_tolerance: timedelta = DEFAULT_TOLERANCE,
) -> tuple[RoundRecord, Verdict]:
    """A ``StoredRound`` judged again as it was when stored: at its meter, against its arrival."""
    record = round_from_wire(stored.record)
    clock = None
    if stored.received_at is not None:
        clock = Clock(datetime.fromisoformat(stored.record["dealt_at"]), stored.received_at, clock_tolerance)
    meters = None
    if pool is not None and stored.meter_before is not None:
        first = stored.events[0] if stored.events else None
        meters = Meters(
            stored.meter_before,
            first[4] if first else ZERO,
            first[5] if first else ZERO,
        )
    return record, judge_round(record, rules, pool, meters, clock)


@dataclass(frozen=True, slots=True)
class Difference:
    """One stored column that is not what the round's verdict derives, worded as the report words it."""

    column: str  # "status", "findings", "seat 3 settled_ante", "seat 3 paid_blind", "meter_after", …
    stored: object
    derived: object
    text: str

    def __str__(self) -> str:
        return self.text


def round_differences(
    stored,
    rules: TableRules,
    pool: PoolRules | None,
    clock_tolerance: timedelta = DEFAULT_TOLERANCE,
) -> list[str]:
    """What today's verdict of ``stored`` (a ``StoredRound``) says that the stored one does not.

    Its clock is judged against the moment it was received, as when it was stored.
    """
    return [str(d) for d in stored_against_derived(stored, rules, pool, clock_tolerance)]


def stored_against_derived(
    stored,
    rules: TableRules,
    pool: PoolRules | None,
    clock_tolerance: timedelta = DEFAULT_TOLERANCE,
) -> list[Difference]:
    """``round_differences``, each difference with its column and both values."""
    try:
        record, verdict = judge_stored(stored, rules, pool, clock_tolerance)
    except Exception as error:  # a stored record the engine can no longer read is drift too
        text = f"the engine cannot judge the stored record: {type(error).__name__}: {error}"
        return [Difference("record", None, None, text)]

    paid = _paid_differences(stored, record)
    if not stored.voided_later and _same_as_stored(stored, verdict, pool):
        return paid
    found = []
    stored_codes = [c for c in stored.codes if c not in SERVICE_CODES]
    if stored.voided_later:
        # Voided by a supervisor: every bet settled at 0, the meter events
        # taken back one by one, the findings of the dealt round kept.
        expected_status = VOID
    elif len(stored_codes) != len(stored.codes):
        # A finding of the service's own (a refused conflicting resubmission, a date outside the
        # books' window) flags the stored round whatever the engine says.
        expected_status = status_after_service_finding(verdict.status)
    else:
        expected_status = verdict.status
    if stored.status != expected_status:
        found.append(Difference("status", stored.status, expected_status,
                                f"status {stored.status} is now {expected_status}"))
    fresh_codes = sorted(f.code for f in verdict.findings)
    if sorted(stored_codes) != fresh_codes:
        found.append(Difference("findings", sorted(stored_codes), fresh_codes,
                                f"findings {sorted(stored_codes)} are now {fresh_codes}"))

    fresh_seats = {s.seat: s.settled for s in verdict.seats}
    if stored.voided_later:
        fresh_seats = {seat: dict.fromkeys(BETS, ZERO) for seat in fresh_seats}
    stored_seats = {row[0]: dict(zip(BETS, row[1:])) for row in stored.seats}
    if set(fresh_seats) != set(stored_seats):
        found.append(Difference("seats", sorted(stored_seats), sorted(fresh_seats),
                                f"seats {sorted(stored_seats)} are now {sorted(fresh_seats)}"))
    for seat in sorted(set(fresh_seats) & set(stored_seats)):
        for bet in BETS:
            old, new = stored_seats[seat][bet], fresh_seats[seat][bet]
            if old != new:
                found.append(Difference(f"seat {seat} settled_{bet}", old, new, f"seat {seat} {bet} {old} is now {new}"))

    # Stored before the contract recorded contributions highest seat first: the same events.
    dealt = in_contract_order([(k, s, a, m) for k, s, a, m, *_ in stored.events if k != REVERSAL])
    fresh_events = [(e.kind, e.seat, e.amount, e.meter) for e in verdict.events]
    if dealt != fresh_events:
        found.append(Difference("meter events", _events_text(dealt), _events_text(fresh_events),
                                f"meter events {_events_text(dealt)} are now {_events_text(fresh_events)}"))
    reversed_ = sorted((s, a) for k, s, a, *_ in stored.events if k == REVERSAL)
    if stored.voided_later and reversed_ != sorted((s, a) for _, s, a, _ in dealt):
        found.append(Difference("meter events", reversed_, dealt,
                                "the void did not take back exactly the round's meter events"))
    elif not stored.voided_later and reversed_:
        found.append(Difference("meter events", reversed_, [],
                                "meter events were reversed but the round is not void"))
    fresh_after = verdict.meters_after.meter if verdict.meters_after else None
    if pool is not None and not stored.voided_later and stored.meter_after != fresh_after:
        found.append(Difference("meter_after", stored.meter_after, fresh_after,
                                f"meter after {stored.meter_after} is now {fresh_after}"))
    return found + paid


def _paid_differences(stored, record: RoundRecord) -> list[Difference]:
    """The paid columns against the body's own: what a table paid is what it sent, never derived.

    ``stored.paid`` is None where the reader did not bring them (a test's
    hand-built round): nothing to compare.
    """
    if stored.paid is None:
        return []
    sent = {seat.seat: seat.paid for seat in record.seats}
    kept = {row[0]: row[1:] for row in stored.paid}
    found = []
    for seat in sorted(set(sent) | set(kept)):
        paid = sent.get(seat)
        claimed = tuple(paid.get(bet, ZERO) for bet in BETS) if paid is not None else None
        columns = kept.get(seat)
        if claimed == columns:
            continue
        if claimed is None or columns is None:
            found.append(Difference(f"seat {seat} paid", columns, claimed,
                                    f"seat {seat} paid {_paid_text(columns)} is now {_paid_text(claimed)}"))
            continue
        for bet, old, new in zip(BETS, columns, claimed):
            if old != new:
                found.append(Difference(f"seat {seat} paid_{bet}", old, new,
                                        f"seat {seat} paid {bet} {old} is now {new}"))
    return found


def _paid_text(paid: tuple | None) -> str:
    return "not reported" if paid is None else "/".join(str(amount) for amount in paid)


def _same_as_stored(stored, verdict, pool: PoolRules | None) -> bool:
    """The common case, decided in a few comparisons: a round the engine judges exactly as stored.

    Only a round this says False for goes through the comparisons that word
    each difference; it must never say True where they would find one.
    """
    codes = stored.codes
    if codes or verdict.findings:
        if not SERVICE_CODES.isdisjoint(codes):
            return False
        if sorted(codes) != sorted([finding.code for finding in verdict.findings]):
            return False
    if stored.status != verdict.status:
        return False
    fresh_seats = []
    for seat in verdict.seats:
        settled = seat.settled
        fresh_seats.append((seat.seat, settled["ante"], settled["blind"], settled["play"],
                            settled["trips"], settled["progressive"]))
    if stored.seats != fresh_seats:
        return False
    events = stored.events
    if events or verdict.events:
        fresh_events = [(e.kind, e.seat, e.amount, e.meter) for e in verdict.events]
        if [(k, s, a, m) for k, s, a, m, *_ in events] != fresh_events:
            return False  # a reversal among them, too, is worded below
    if pool is not None:
        fresh_after = verdict.meters_after.meter if verdict.meters_after else None
        if stored.meter_after != fresh_after:
            return False
    return True


def _events_text(events: list[tuple]) -> str:
    return "[" + ", ".join(f"{k} seat {s} {a} -> {m}" for k, s, a, m in events) + "]"


@dataclass(slots=True)
class Reverification:
    rounds: int = 0
    drift: int = 0
    examples: list[dict] = field(default_factory=list)
    config_versions: set[int] = field(default_factory=set)
    pool_versions: set[int] = field(default_factory=set)

    def to_json(self) -> dict:
        return {"rounds": self.rounds, "drift": self.drift, "examples": self.examples,
                "config_versions": sorted(self.config_versions),
                "pool_versions": sorted(self.pool_versions)}


def reverify(
    stored_rounds,
    *,
    table_rules: Callable[[int], TableRules],
    pool_rules: Callable[[int], PoolRules],
    table_code: str,
    progress: Callable[[int], None] | None = None,
    clock_tolerance: timedelta = DEFAULT_TOLERANCE,
) -> Reverification:
    """Judge every round of the stream again; keep the first few differences as examples."""
    result = Reverification()
    # A table's rounds share one or two versions: each is asked for once here.
    rules_of: dict[int, TableRules] = {}
    pools_of: dict[int | None, PoolRules | None] = {None: None}
    for stored in stored_rounds:
        version_id, pool_version_id = stored.config_version_id, stored.pool_version_id
        rules = rules_of.get(version_id)
        if rules is None:
            rules = rules_of[version_id] = table_rules(version_id)
            result.config_versions.add(version_id)
        if pool_version_id in pools_of:
            pool = pools_of[pool_version_id]
        else:
            pool = pools_of[pool_version_id] = pool_rules(pool_version_id) if pool_version_id else None
            if pool_version_id:
                result.pool_versions.add(pool_version_id)
        differences = round_differences(stored, rules, pool, clock_tolerance)
        result.rounds += 1
        if differences:
            result.drift += 1
            if len(result.examples) < EXAMPLES_KEPT:
                result.examples.append(
                    {"table": table_code, "round": stored.round_id, "round_pk": stored.pk,
                     "differences": differences}
                )
        if progress is not None and result.rounds % 1000 == 0:
            progress(result.rounds)
    return result


def cached(load: Callable[[int], object]) -> Callable[[int], object]:
    """``load(pk)`` remembered per primary key: versions are immutable."""
    memo: dict[int, object] = {}

    def get(pk: int):
        if pk not in memo:
            memo[pk] = load(pk)
        return memo[pk]

    return get

