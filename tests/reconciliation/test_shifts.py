"""The casino's clock: gaming-day windows across daylight saving, and shifts."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest

from audit.shifts import parse_shifts, shift_minute_ranges, shift_of
from infra.gaming_day import ClockError, gaming_day_window
from infra.gaming_day import gaming_day_of

STOCKHOLM = "Europe/Stockholm"
THREE = parse_shifts("06:00,14:00,22:00")


def test_a_winter_day_runs_cutoff_to_cutoff_in_local_time():
    start, end = gaming_day_window(date(2026, 11, 28), time_zone=STOCKHOLM, cutoff_hour=6)
    assert start == datetime(2026, 11, 28, 5, 0, tzinfo=UTC)  # 06:00 CET
    assert end == datetime(2026, 11, 29, 5, 0, tzinfo=UTC)


@pytest.mark.parametrize("day,hours", [(date(2026, 3, 28), 23), (date(2026, 10, 24), 25), (date(2026, 7, 1), 24)])
def test_daylight_saving_days_are_23_or_25_hours(day, hours):
    start, end = gaming_day_window(day, time_zone=STOCKHOLM, cutoff_hour=6)
    assert end - start == timedelta(hours=hours)


def test_every_moment_of_a_window_belongs_to_its_day():
    day = date(2026, 10, 24)  # 25 hours long
    start, end = gaming_day_window(day, time_zone=STOCKHOLM, cutoff_hour=6)
    moment = start
    while moment < end:
        assert gaming_day_of(moment, time_zone=STOCKHOLM, cutoff_hour=6) == day
        moment += timedelta(minutes=17)
    assert gaming_day_of(end, time_zone=STOCKHOLM, cutoff_hour=6) == day + timedelta(days=1)
    assert gaming_day_of(start - timedelta(microseconds=1), time_zone=STOCKHOLM, cutoff_hour=6) == day - timedelta(days=1)


def test_shifts_are_named_by_their_hours_and_wrap_past_midnight():
    assert [s.name for s in THREE] == ["06:00-14:00", "14:00-22:00", "22:00-06:00"]
    at = lambda h, m=0: datetime(2026, 11, 28, h, m, tzinfo=UTC)  # CET = UTC+1
    assert shift_of(at(5), time_zone=STOCKHOLM, shifts=THREE).name == "06:00-14:00"
    assert shift_of(at(4, 59), time_zone=STOCKHOLM, shifts=THREE).name == "22:00-06:00"
    assert shift_of(at(12, 59), time_zone=STOCKHOLM, shifts=THREE).name == "06:00-14:00"
    assert shift_of(at(13), time_zone=STOCKHOLM, shifts=THREE).name == "14:00-22:00"
    assert shift_of(at(21), time_zone=STOCKHOLM, shifts=THREE).name == "22:00-06:00"
    assert shift_of(at(23, 30), time_zone=STOCKHOLM, shifts=THREE).name == "22:00-06:00"


def test_named_shifts_are_sorted_by_start_and_cover_the_day_once():
    shifts = parse_shifts("grave=22:00, day=06:00, swing=14:00")
    assert [(s.name, s.start) for s in shifts] == [("day", time(6)), ("swing", time(14)), ("grave", time(22))]
    covered = sorted((lo, hi) for _, lo, hi in shift_minute_ranges(shifts))
    assert covered == [(0, 360), (360, 840), (840, 1320), (1320, 1440)]


@pytest.mark.parametrize("text", ["", "25:00", "06:00,06:00", "a=06:00,a=14:00", "06:00:30"])
def test_bad_shift_lists_are_refused(text):
    with pytest.raises(ClockError):
        parse_shifts(text)
