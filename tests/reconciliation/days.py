"""A gaming day of worked rounds, posted through the API, and its figures summed independently.

The expectations here come from the example files alone (the records and
their expected settlement), never from the service's stored rows, so a
report that adds up the wrong thing cannot agree with them.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from tests import examples

DAY = date(2026, 11, 28)
NEXT_DAY = date(2026, 11, 29)
BETS = ("ante", "blind", "play", "trips", "progressive")
ZERO = Decimal(0)
SHIFTS = (("06:00-14:00", 6 * 60), ("14:00-22:00", 14 * 60), ("22:00-06:00", 22 * 60))


def shift_of(dealt_at: str) -> str:
    local = datetime.fromisoformat(dealt_at).astimezone(ZoneInfo("Europe/Stockholm"))
    minute = local.hour * 60 + local.minute
    name = SHIFTS[-1][0]
    for shift, start in SHIFTS:
        if start <= minute:
            name = shift
    return name


def moved(record: dict, *, hours: float, prefix: str) -> dict:
    """The same round, dealt ``hours`` later under another round id."""
    record = copy.deepcopy(record)
    dealt = datetime.fromisoformat(record["dealt_at"]) + timedelta(hours=hours)
    record["dealt_at"] = dealt.isoformat()
    record["round"] = f"{prefix}{record['round']}"
    return record


@dataclass
class Group:
    rounds: int = 0
    void_rounds: int = 0
    hands: int = 0
    handle: dict = field(default_factory=lambda: dict.fromkeys(BETS, ZERO))
    win: dict = field(default_factory=lambda: dict.fromkeys(BETS, ZERO))
    mismatches: int = 0
    overpaid: Decimal = ZERO
    underpaid: Decimal = ZERO
    trips_handle: Decimal = ZERO


# The currency of each test table's configuration (se-50kr: kronor, us-30k: dollars).
CURRENCY = {"S": "SEK", "U": "USD"}


def _by_key_and_currency():
    return defaultdict(lambda: defaultdict(Group))


@dataclass
class Expected:
    """What the day adds up to, every group in each currency it dealt in: ``tables[code][currency]``."""

    casino: dict = field(default_factory=lambda: defaultdict(Group))
    tables: dict = field(default_factory=_by_key_and_currency)
    dealers: dict = field(default_factory=_by_key_and_currency)
    shifts: dict = field(default_factory=_by_key_and_currency)
    players: dict = field(default_factory=_by_key_and_currency)
    lit_wagers: int = 0

    def add(self, table: str, example: dict, record: dict) -> None:
        void = bool(record.get("void"))
        currency = CURRENCY[table[0]]
        round_groups = [self.casino[currency], self.tables[table][currency],
                        self.dealers[record.get("dealer") or "(none)"][currency],
                        self.shifts[shift_of(record["dealt_at"])][currency]]
        results = example["expect"]["results"]
        unverified = "duplicate_card" in example["expect"]["codes"]
        for group in round_groups:
            group.rounds += 1
            group.void_rounds += void
        for seat in record["seats"]:
            groups = list(round_groups)
            if seat.get("player"):
                groups.append(self.players[seat["player"]][currency])
            settled = {bet: Decimal(results[str(seat["seat"])][bet]) for bet in BETS}
            for group in groups:
                if not void:
                    group.hands += 1
                    for bet in BETS:
                        wagered = Decimal(str(seat.get(bet, 0)))
                        if bet == "progressive" and not seat.get("progressive_lit"):
                            wagered = ZERO
                        group.handle[bet] += wagered
                for bet in BETS:
                    group.win[bet] -= settled[bet]
            if not void and seat.get("progressive_lit"):
                self.lit_wagers += 1
            paid = seat.get("paid")
            if paid is None or unverified:
                continue
            for bet in BETS:
                claimed = Decimal(str(paid.get(bet, 0)))
                for group in round_groups:
                    if claimed != settled[bet]:
                        group.mismatches += 1
                    if claimed > settled[bet]:
                        group.overpaid += claimed - settled[bet]
                    elif claimed < settled[bet]:
                        group.underpaid += settled[bet] - claimed


def client_for(code: str, config: str):
    """An API client holding a fresh key of table ``code`` (what ``table_client`` makes)."""
    from rest_framework.test import APIClient

    from trail.services import SYSTEM
    from rounds.services import table_register

    issued = table_register(code=code, config_name=config, actor=SYSTEM)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
    return client


def post_day(table_client=client_for, *, per_table: int | None = None) -> Expected:
    """Post three tables' rounds over two gaming days; return what ``DAY`` must add up to.

    S01 deals the Swedish examples as written (evening shift), S02 the same
    rounds five hours later (night shift, still ``DAY`` before the 06:00
    cut-off) and a few again at noon of the next day, U01 the US examples with
    the shared pool. ``per_table`` takes only the first so many examples.
    """
    expected = Expected()
    swedish = examples.load("se-50kr.jsonl")[:per_table]
    us = examples.load("us-30k.jsonl")[:per_table]
    plan = [
        ("S01", "se-50kr", [(e, e["record"]) for e in swedish]),
        ("S02", "se-50kr", [(e, moved(e["record"], hours=5, prefix="n-")) for e in swedish]
         + [(e, moved(e["record"], hours=17, prefix="d2-")) for e in swedish[:5]]),
        ("U01", "us-30k", [(e, e["record"]) for e in us]),
    ]
    for code, config, rounds in plan:
        client = table_client(code, config)
        for example, record in rounds:
            record = dict(record, table=code)
            response = client.post("/api/v1/rounds/", record, format="json")
            assert response.status_code == 201, response.json()
            if _day_of(record) == DAY:
                expected.add(code, example, record)
    return expected


def _day_of(record: dict) -> date:
    local = datetime.fromisoformat(record["dealt_at"]).astimezone(ZoneInfo("Europe/Stockholm"))
    return (local - timedelta(hours=6)).date()


def figures_stored(report, figures: dict) -> None:
    """``report``'s figures replaced by ``figures`` in the database, with the summary and the dealers'
    and flags' rows its page reads, as the service writes them together (a report of an earlier
    shape: as its migrations left it, audit 0030 to 0032)."""
    import importlib

    from audit.models import ReportDealer, ReportFlag
    from books.report_figures import summary_of

    type(report).objects.filter(pk=report.pk).update(
        figures=figures, summary=summary_of(figures) if isinstance(figures, dict) else None)
    ReportDealer.objects.filter(report_id=report.pk).delete()
    ReportFlag.objects.filter(report_id=report.pk).delete()
    if isinstance(figures, dict) and "currencies" in figures:
        importlib.import_module("audit.migrations.0030_report_dealers").dealers_copied(
            ReportDealer, report.pk, figures.get("dealers"), figures.get("dealer_tables"))
    if isinstance(figures, dict) and isinstance(figures.get("flags"), list):
        importlib.import_module("audit.migrations.0032_report_flags").flags_copied(
            ReportFlag, report.pk, figures["flags"])
