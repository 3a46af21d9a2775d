"""The numbers a reconciliation depends on, read from settings (environment) once per run.

Each name is a Django setting (casino/settings.py reads it from the environment):

- ``GAMING_DAY_TIME_ZONE``, ``GAMING_DAY_CUTOFF_HOUR``: the casino's day (casino.settings).
- ``GAMING_DAY_SHIFTS``: shift starts, ``06:00,14:00,22:00`` or ``day=06:00,...``.
- ``BASE_GAME_HOUSE_EDGE``: the house's expected win per Ante on Ante + Blind + Play
  under optimal play, 0.02185 (2.185 %).
- ``BASE_GAME_SD``: the standard deviation of a hand's Ante + Blind + Play result in
  Antes, 4.94 (the published figure for optimal play).

The Trips edge and spread are not configured: they are computed exactly from
each configuration version's pay table (``books.statistics``).

The covariances of two seats of one round (they share the board and the
dealer's cards) are derived by ``manage.py derive_seat_covariance`` and
shipped as versioned data (``books/data/seat_covariance.json``,
``books.seat_covariance``); the report records which version it used.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from audit.shifts import Shift, parse_shifts
from books.seat_covariance import SeatCovariance, load_seat_covariance
import game
from infra.gaming_day import gaming_day_of


@dataclass(frozen=True, slots=True)
class ReconciliationSettings:
    time_zone: str
    cutoff_hour: int
    shifts: tuple[Shift, ...]
    base_edge: Decimal
    base_sd: Decimal
    covariance: SeatCovariance

    def as_json(self) -> dict:
        return {
            "time_zone": self.time_zone,
            "cutoff_hour": self.cutoff_hour,
            "shifts": [[s.name, s.start.strftime("%H:%M")] for s in self.shifts],
            "base_edge": str(self.base_edge),
            "base_sd": str(self.base_sd),
            "seat_covariance": {
                "version": self.covariance.version, "fingerprint": self.covariance.fingerprint,
                "base": str(self.covariance.base_covariance),
            },
        }


def reconciliation_settings() -> ReconciliationSettings:
    shifts = settings.GAMING_DAY_SHIFTS
    if isinstance(shifts, (list, tuple)):
        shifts = ",".join(shifts)
    return ReconciliationSettings(
        time_zone=str(settings.GAMING_DAY_TIME_ZONE),
        cutoff_hour=int(settings.GAMING_DAY_CUTOFF_HOUR),
        shifts=parse_shifts(str(shifts)),
        base_edge=Decimal(str(settings.BASE_GAME_HOUSE_EDGE)),
        base_sd=Decimal(str(settings.BASE_GAME_SD)),
        covariance=load_seat_covariance(),
    )


GAME_DIR = Path(game.__file__).resolve().parent
# What judges a round: the verdict, the choice of the versions in force, and every module of the
# game they import. The game's other mathematics (game protection's, the simulations') judges no
# round, and changing it leaves the engine's version as it was.
JUDGING = ("verdict", "versions")


def engine_files(directory: Path = GAME_DIR) -> list[Path]:
    """The source files of ``JUDGING`` and of every module of the game they import, read as text."""
    found: set[str] = set()
    waiting = list(JUDGING)
    while waiting:
        name = waiting.pop()
        if name in found:
            continue
        found.add(name)
        for node in ast.walk(ast.parse((directory / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                waiting += [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
    return sorted(directory / f"{name}.py" for name in found)


def engine_fingerprint(directory: Path = GAME_DIR) -> str:
    digest = hashlib.sha256()
    for path in engine_files(directory):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return f"engine-sha256:{digest.hexdigest()[:16]}"


@cache
def engine_version() -> str:
    """A fingerprint of the engine's source: any change to how rounds are judged changes it."""
    return engine_fingerprint()


def day_to_reconcile(*, now: datetime | None = None) -> date:
    """The gaming day that ended last: the nightly job's day."""
    clock = reconciliation_settings()
    today = gaming_day_of(now or timezone.now(), time_zone=clock.time_zone, cutoff_hour=clock.cutoff_hour)
    return today - timedelta(days=1)


def report_maker() -> str:
    """What makes a missing or stale day's report, as a page says it: the hourly healing job where a
    scheduler runs (a broker is configured); on the embedded default (no broker, tasks inline) no
    scheduler runs, and nothing makes it but a person."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return ("no scheduler runs without a broker (the embedded default): "
                "manage.py reconcile --day YYYY-MM-DD makes it")
    return "the hourly healing job makes it"
