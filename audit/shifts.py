"""The casino's clock: a gaming day's window in UTC and the shift a moment falls in.

Pure functions of their arguments (no Django): the time zone, the cut-off hour
and the shifts are passed in, so a report can say exactly which clock it used.

A gaming day ``D`` runs from ``D`` at the cut-off hour, local time, to the same
hour on ``D + 1``; across a daylight-saving change it is 23 or 25 hours long.
Shifts are named start times of the local day (``06:00,14:00,22:00``, or with
names ``day=06:00,swing=14:00,grave=22:00``); a shift runs until the next one
starts, and the last one wraps past midnight to the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from infra.gaming_day import ClockError, gaming_day_window

MINUTES_PER_DAY = 24 * 60


@dataclass(frozen=True, slots=True)
class Shift:
    name: str
    start: time

    @property
    def start_minute(self) -> int:
        return self.start.hour * 60 + self.start.minute


def parse_shifts(text: str) -> tuple[Shift, ...]:
    """``"06:00,14:00,22:00"`` or ``"day=06:00,swing=14:00"`` as shifts in start order.

    An unnamed shift is called by its start and end (``06:00-14:00``).
    """
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise ClockError("at least one shift start is needed (e.g. 06:00)")
    named: list[tuple[str | None, time]] = []
    for item in items:
        name, _, clock = item.rpartition("=")
        try:
            start = time.fromisoformat(clock.strip())
        except ValueError:
            raise ClockError(f"{clock.strip()!r} is not a time of day (HH:MM)") from None
        if start.second or start.microsecond:
            raise ClockError(f"shift start {clock.strip()!r} must be whole minutes")
        named.append((name.strip() or None, start))
    named.sort(key=lambda pair: pair[1])
    starts = [start for _, start in named]
    if len(set(starts)) != len(starts):
        raise ClockError("two shifts start at the same time")
    shifts = []
    for i, (name, start) in enumerate(named):
        end = starts[(i + 1) % len(starts)]
        shifts.append(Shift(name or f"{start:%H:%M}-{end:%H:%M}", start))
    if len({s.name for s in shifts}) != len(shifts):
        raise ClockError("shift names must be distinct")
    return tuple(shifts)


def range_window(
    day_from: date, day_to: date, *, time_zone: str, cutoff_hour: int
) -> tuple[datetime, datetime]:
    """The UTC interval from the start of ``day_from`` to the end of ``day_to``."""
    start, _ = gaming_day_window(day_from, time_zone=time_zone, cutoff_hour=cutoff_hour)
    _, end = gaming_day_window(day_to, time_zone=time_zone, cutoff_hour=cutoff_hour)
    return start, end


def shift_of_minute(minute_of_day: int, shifts: tuple[Shift, ...]) -> Shift:
    """The shift running at ``minute_of_day`` (0–1439, local): the last one started."""
    current = shifts[-1]  # before the first start of the day, the night shift still runs
    for shift in shifts:
        if shift.start_minute <= minute_of_day:
            current = shift
    return current


def shift_of(moment: datetime, *, time_zone: str, shifts: tuple[Shift, ...]) -> Shift:
    local = moment.astimezone(ZoneInfo(time_zone))
    return shift_of_minute(local.hour * 60 + local.minute, shifts)


def shift_minute_ranges(shifts: tuple[Shift, ...]) -> list[tuple[Shift, int, int]]:
    """Each shift's ``[from, to)`` minutes of the local day; the wrapping shift gets two."""
    ranges = []
    for i, shift in enumerate(shifts):
        end = shifts[i + 1].start_minute if i + 1 < len(shifts) else MINUTES_PER_DAY
        ranges.append((shift, shift.start_minute, end))
    if shifts[0].start_minute > 0:
        ranges.append((shifts[-1], 0, shifts[0].start_minute))
    return ranges
