"""Stints (books.stints): a break ends one, and so does another table or dealer; a rate counts the
time dealt, not the breaks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from books.stints import stints_of

START = datetime(2026, 12, 4, 17, tzinfo=UTC)
BREAK = timedelta(minutes=20)


def _rounds(table: str, dealer: str, first: datetime, n: int, every: timedelta, tag=None):
    return [(table, dealer, first + i * every, tag) for i in range(n)]


def test_a_break_ends_a_stint_and_so_does_another_table_or_dealer():
    minute = timedelta(minutes=1)
    rounds = (_rounds("S01", "D1", START, 60, minute, "a")  # 59 minutes of dealing
              + _rounds("S01", "D1", START + timedelta(minutes=59 + 21), 30, minute, "b")  # after a 21-minute break
              + _rounds("S01", "D2", START, 10, minute)
              + _rounds("S02", "D1", START + timedelta(hours=5), 5, minute))
    stints = stints_of(sorted(rounds, key=lambda r: (r[0], r[1], r[2])), gap=BREAK)
    assert [(s.table, s.dealer, s.rounds, s.span, s.tag) for s in stints] == [
        ("S01", "D1", 60, timedelta(minutes=59), "a"), ("S01", "D1", 30, timedelta(minutes=29), "b"),
        ("S01", "D2", 10, timedelta(minutes=9), None), ("S02", "D1", 5, timedelta(minutes=4), None)]


def test_a_gap_of_exactly_a_break_keeps_the_stint():
    rounds = [("S01", "D1", START, None), ("S01", "D1", START + BREAK, None)]
    assert [s.rounds for s in stints_of(rounds, gap=BREAK)] == [2]


def test_two_stints_deal_at_the_pace_of_one_not_at_half_of_it():
    """Two stints of 3:25 h at 117 rounds an hour with a 3-hour break between: each stint's rate is
    117, where the day's first-to-last span would say 81."""
    every = timedelta(hours=1) / 117
    n = 400
    first = _rounds("S01", "D1", START, n, every)
    second = _rounds("S01", "D1", first[-1][2] + timedelta(hours=3), n, every)
    stints = stints_of(first + second, gap=BREAK)
    assert [s.rate for s in stints] == [Decimal(117), Decimal(117)]
    day_span = second[-1][2] - first[0][2]
    assert round(2 * n / (day_span / timedelta(hours=1))) == 81


def test_nothing_dealt_is_no_stint():
    assert stints_of([], gap=BREAK) == []
