"""Re-verification's shortcuts: the quick "same as stored" check and the stream read ahead.

``round_differences`` decides most rounds with a few comparisons and words
the differences only when one exists; these tests hold the quick check to
the worded comparisons on every kind of difference. ``fetched_ahead`` reads
a cursor in a thread; these tests show it hands on every row, raises what the
cursor raised, and leaves no thread behind when the reader stops early.
"""

from __future__ import annotations

import random
import threading
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from audit.reconciliation.reverify import REVERSAL, round_differences
from audit.reconciliation.selectors import StoredRound, fetched_ahead
from game import judge_round
from game.findings import CONFLICTING_RESUBMISSION
from game.progressive import Meters
from game.record import round_from_wire
from game.rules import BETS
from rounds.simulation import simulate_rounds
from tests.game.engine_rules import US_30K, US_PROGRESSIVE

START = datetime(2026, 11, 28, 18, 0, tzinfo=ZoneInfo("Europe/Stockholm"))
OPENING = Decimal("10000.00")


def stored_as_judged(count: int = 150, seed: int = 3) -> list[StoredRound]:
    """Dealt rounds (with dealer errors and rule breaks) stored exactly as the engine judges them."""
    records = simulate_rounds(
        table="U01", rules=US_30K, pool=US_PROGRESSIVE, meters=Meters(OPENING),
        rng=random.Random(seed), start=START, count=count,
        dealer_error_rate=0.2, rule_break_rate=0.1, void_rate=0.03,
    )
    stored = []
    meters = Meters(OPENING)
    for pk, record in enumerate(records, 1):
        verdict = judge_round(round_from_wire(record), US_30K, US_PROGRESSIVE, meters)
        events = [(e.kind, e.seat, e.amount, e.meter, meters.overflow, meters.reserve) for e in verdict.events]
        stored.append(StoredRound(
            pk, record["round"], record, verdict.status, meters.meter, verdict.meters_after.meter,
            1, 1, False,
            [(s.seat, *(s.settled[bet] for bet in BETS)) for s in verdict.seats],
            [f.code for f in verdict.findings],
            events,
        ))
        meters = verdict.meters_after
    return stored


def differences(stored: StoredRound) -> list[str]:
    return round_differences(stored, US_30K, US_PROGRESSIVE)


@pytest.fixture(scope="module")
def rounds() -> list[StoredRound]:
    rounds = stored_as_judged()
    # The dealt day must hold what the changes below need.
    assert any(r.events for r in rounds) and any(r.codes for r in rounds)
    assert {r.status for r in rounds} >= {"verified", "flagged"}
    return rounds


def test_rounds_stored_as_the_engine_judges_them_show_no_difference(rounds):
    assert [differences(r) for r in rounds] == [[] for _ in rounds]


def _changed_seat(stored: StoredRound) -> StoredRound:
    seat, *amounts = stored.seats[-1]
    amounts[2] += Decimal("0.01")  # play
    return replace(stored, seats=[*stored.seats[:-1], (seat, *amounts)])


CHANGES = {
    "status": lambda r: replace(r, status="settled" if r.status != "settled" else "verified"),
    "a finding more": lambda r: replace(r, codes=[*r.codes, "bet_off_unit"]),
    "a finding fewer": lambda r: replace(r, codes=r.codes[1:]) if r.codes else None,
    "a seat's settled amount": _changed_seat,
    "a seat fewer": lambda r: replace(r, seats=r.seats[:-1]),
    "a meter event fewer": lambda r: replace(r, events=r.events[1:]) if r.events else None,
    "a meter event's amount": lambda r: replace(
        r, events=[(r.events[0][0], r.events[0][1], r.events[0][2] + 1, *r.events[0][3:]), *r.events[1:]]
    ) if r.events else None,
    "a reversal on a live round": lambda r: replace(
        r, events=[*r.events, (REVERSAL, r.events[0][1], r.events[0][2], *r.events[0][3:])]
    ) if r.events else None,
    "the meter after": lambda r: replace(r, meter_after=r.meter_after + Decimal("0.01")),
}


@pytest.mark.parametrize("change", CHANGES)
def test_every_kind_of_difference_is_found_and_worded(rounds, change):
    changed = [c for c in (CHANGES[change](r) for r in rounds) if c is not None]
    assert changed
    for stored in changed:
        assert differences(stored), (change, stored.round_id)


def test_a_refused_resubmission_flags_the_round_whatever_the_engine_says(rounds):
    verified = next(r for r in rounds if r.status == "verified")
    conflicted = replace(verified, codes=[*verified.codes, CONFLICTING_RESUBMISSION])
    assert differences(conflicted) == ["status verified is now flagged"]
    assert differences(replace(conflicted, status="flagged")) == []


def test_a_round_voided_later_is_void_with_its_meter_events_taken_back(rounds):
    stored = next(r for r in rounds if r.events and r.status == "verified")
    back = [(REVERSAL, e[1], e[2], *e[3:]) for e in stored.events]
    void = replace(
        stored, status="void", voided_later=True, events=[*stored.events, *back],
        seats=[(seat, *(Decimal(0) for _ in BETS)) for seat, *_ in stored.seats],
    )
    assert differences(void) == []
    assert differences(replace(void, events=stored.events)) == [
        "the void did not take back exactly the round's meter events"
    ]


class FakeCursor:
    def __init__(self, rows: int, fail_after: int | None = None):
        self.left, self.fetched, self.fail_after = rows, 0, fail_after

    def fetchmany(self, size: int) -> list[tuple]:
        if self.fail_after is not None and self.fetched >= self.fail_after:
            raise RuntimeError("the connection went away")
        n = min(size, self.left)
        self.left -= n
        self.fetched += n
        return [(self.fetched - n + i,) for i in range(n)]


def _fetch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "stored-rounds-fetch"]


def test_read_ahead_hands_on_every_row_in_order():
    rows = [row for chunk in fetched_ahead(FakeCursor(1234), 100) for row in chunk]
    assert rows == [(i,) for i in range(1234)]
    assert not _fetch_threads()


def test_read_ahead_raises_what_the_cursor_raised():
    with pytest.raises(RuntimeError, match="went away"):
        for _ in fetched_ahead(FakeCursor(1000, fail_after=300), 100):
            pass
    assert not _fetch_threads()


def test_read_ahead_leaves_no_thread_behind_when_the_reader_stops_early():
    cursor = FakeCursor(10_000)
    chunks = fetched_ahead(cursor, 10)
    assert next(chunks) == [(i,) for i in range(10)]
    chunks.close()
    assert not _fetch_threads()
    # It read ahead no more than the two chunks it may keep waiting.
    assert cursor.fetched <= 40


def _contributions_lowest_seat_first(stored: StoredRound) -> StoredRound | None:
    """As rounds were stored before the contract recorded contributions highest seat first."""
    events = list(stored.events)
    count = 0
    while count < len(events) and events[count][0] == "contribution":
        count += 1
    if count < 2:
        return None
    meter = events[0][3] - events[0][2]
    old = []
    for kind, seat, amount, _, overflow, reserve in sorted(events[:count], key=lambda e: e[1]):
        meter += amount
        old.append((kind, seat, amount, meter, overflow, reserve))
    return replace(stored, events=old + events[count:])


def test_a_round_stored_with_its_contributions_in_the_bodys_order_is_no_drift(rounds):
    old = [c for c in (_contributions_lowest_seat_first(r) for r in rounds) if c is not None]
    assert old, "no round of the dealt day has two contributions"
    assert [differences(r) for r in old] == [[] for _ in old]
    # Not any order will do: the same contributions with another round's amounts is drift.
    moved = replace(old[0], events=[(k, s, a + 1, m + 1, o, r) for k, s, a, m, o, r in old[0].events])
    assert differences(moved)
