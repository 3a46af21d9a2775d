"""Where every player's leak tests stood at the end of each gaming day, so that a night reads one day.

The leak test's e-values are carried from one night to the next
(``game.protection.leak.TestState``): the run of day D reads D's seats only,
each test going on from the row that held through D − 1, and writes a row
for every test D's seats read. Going on from a state gives to the last float
what reading the whole history again gives, so the night's cost follows the
day's play, not the length of history.

A day is *kept* (``LeakStateDay``) once every player's tests were written
for it. A run of day D goes on from the last kept day before it, M: whatever
was written after M is dropped first (a rerun of an earlier day changes what
the later days went on from), and the days between M and D that had play are
read again, in order, before D. So the first night after upgrading, or after
a rerun of an old day, reads that stretch once; every other night reads its
own day. Runs wait for each other (``infra.locks.one_after_another``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from django.db import transaction
from django.db.models import Max, Q

from audit.models import LeakStateDay, LeakTestState, SeatScore
from game.protection import leak

LOCK = "audit.leak_tests"
OVERALL: leak.TestId = (leak.HOLE_CARDING, "", "")
# What the kept states were made by: a day kept by another design is not gone on from, so the first
# night after a change of the tests reads the whole history once. 2: a companion's test has the pair's
# part; 3: and reads the flop.
DESIGN = 3


def last_kept(day: date, shares: Sequence[float]) -> date | None:
    """The last kept day before ``day`` whose states were mixed over ``shares`` by this ``DESIGN``."""
    return (
        LeakStateDay.objects.filter(gaming_day__lt=day, shares=list(shares), design=DESIGN)
        .aggregate(last=Max("gaming_day"))["last"]
    )


def days_to_read_first(day: date, shares: Sequence[float]) -> list[date]:
    """Drop every state written after the last day kept before ``day``; the days with play between
    it and ``day``, which are to be read again first (all of them when none was kept)."""
    kept = last_kept(day, shares)
    with transaction.atomic():
        later = LeakTestState.objects.all() if kept is None else LeakTestState.objects.filter(day_from__gt=kept)
        later.delete()
        if kept is not None:
            LeakTestState.objects.filter(day_to__gt=kept).update(day_to=None)
        (LeakStateDay.objects.all() if kept is None else LeakStateDay.objects.filter(gaming_day__gt=kept)).delete()
    played = SeatScore.objects.exclude(player="").filter(gaming_day__lt=day)
    if kept is not None:
        played = played.filter(gaming_day__gt=kept)
    return sorted(played.values_list("gaming_day", flat=True).distinct())


def day_kept(day: date, shares: Sequence[float]) -> None:
    LeakStateDay.objects.update_or_create(gaming_day=day, defaults={"shares": list(shares), "design": DESIGN})


@dataclass(frozen=True, slots=True)
class Held:
    """The states a day's run goes on from, by player, and the rows they were read from."""

    players: dict[str, leak.PlayerState]
    rows: list[int]


def states_before(day: date, seats: Sequence[leak.PlayedSeat], shares: Sequence[float]) -> Held:
    """Where the tests the seats of ``day`` read stood before it, by player."""
    wanted: dict[str, set[leak.TestId]] = defaultdict(set)
    for seat in seats:
        wanted[seat.player].add(OVERALL)
        if seat.player in seat.companions:
            continue
        if seat.dealer:
            wanted[seat.player].add((leak.HOLE_CARDING, seat.dealer, ""))
        for companion in seat.companions:
            if companion:
                wanted[seat.player].add((leak.COLLUSION, "", companion))
    dealers = {d for tests in wanted.values() for _, d, _ in tests if d}
    companions = {c for tests in wanted.values() for _, _, c in tests if c}
    rows = LeakTestState.objects.filter(player__in=list(wanted), day_from__lt=day).filter(
        Q(day_to__isnull=True) | Q(day_to__gte=day)
    ).filter(
        Q(code=leak.HOLE_CARDING, dealer="", companion="") | Q(dealer__in=dealers) | Q(companion__in=companions)
    ).values_list("pk", "player", "code", "dealer", "companion", "state")
    held = Held({}, [])
    for pk, player, code, dealer, companion, state in rows:
        key = (code, dealer, companion)
        if key not in wanted[player]:
            continue
        stood = held.players.setdefault(player, leak.PlayerState())
        stood.tests[key] = state_from_json(state, shares)
        if key == OVERALL:
            stood.dealers_met, stood.companions_met = state.get("met", (0, 0))
        held.rows.append(pk)
    return held


def states_write(day: date, held: Held, after: Iterable[tuple[str, leak.PlayerState]]) -> None:
    """Write where the day left every test it read, and close the rows they went on from; one transaction."""
    rows = []
    for player, stood in after:
        for (code, dealer, companion), state in stood.tests.items():
            data = state_json(state)
            if (code, dealer, companion) == OVERALL:
                data["met"] = [stood.dealers_met, stood.companions_met]
            rows.append(LeakTestState(player=player, code=code, dealer=dealer, companion=companion,
                                      day_from=day, state=data))
    with transaction.atomic():
        LeakTestState.objects.filter(pk__in=held.rows).update(day_to=day)
        LeakTestState.objects.bulk_create(rows, batch_size=2000)


def _number(x: float) -> float | None:
    return None if x == -math.inf else x


def _from_number(x: float | None) -> float:
    return -math.inf if x is None else x


def _key(key) -> list:
    round_pk, seat, day = key
    return [round_pk, seat, day]


def state_json(state: leak.TestState) -> dict:
    """A test's state as ``LeakTestState.state`` keeps it: every float as the run left it."""
    return {
        "weight": state.weight,
        "parts": {
            name: {"spent": e.spent, "started": [_number(x) for x in e.started], "days": e.days,
                   "day": e.day.isoformat() if e.days else None}
            for name, e in state.parts.items()
        },
        "counted": state.counted, "steps": state.steps, "informed": state.informed, "expected": state.expected,
        "figure": state.figure, "peak": _number(state.peak),
        "crossing": None if state.crossing is None else {
            "step": state.crossing.step, "key": _key(state.crossing.key), "day": state.crossing.day.isoformat(),
        },
        "first_day": state.first_day.isoformat() if state.first_day is not None else None,
        "partner": [state.partner_steps, state.partner_informed, state.partner_expected],
    }


def state_from_json(data: dict, shares: Sequence[float]) -> leak.TestState:
    parts = {
        name: leak.EValue(shares, e["spent"], [_from_number(x) for x in e["started"]], e["days"],
                          date.fromisoformat(e["day"]) if e["day"] else None)
        for name, e in data["parts"].items()
    }
    crossing = data["crossing"]
    return leak.TestState(
        data["weight"], parts, dict(data["counted"]), data["steps"], data["informed"], data["expected"],
        data["figure"], _from_number(data["peak"]),
        None if crossing is None else leak.Crossing(
            crossing["step"], tuple(crossing["key"]), date.fromisoformat(crossing["day"])),
        date.fromisoformat(data["first_day"]) if data["first_day"] else None,
        *data["partner"],
    )
