"""The worked rounds of ../shared/examples, read once for every test that needs them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

from game.progressive import in_contract_order

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "shared" / "examples"
# Each file is one table's rounds in order: (file, table code, configuration).
EXAMPLE_FILES = (("se-50kr.jsonl", "S01", "se-50kr"), ("us-30k.jsonl", "U01", "us-30k"))
INFORMATIONAL = {"aggregate_limit_applied", "progressive_award"}


@cache
def load(name: str) -> tuple[dict, ...]:
    path = EXAMPLES_DIR / name
    return tuple(json.loads(line) for line in path.read_text().splitlines() if line.strip())


def expected_status(example: dict) -> str:
    # ROUND_RECORD.md: a void round is ``void`` even when it also breaks a rule.
    if example["record"].get("void"):
        return "void"
    if set(example["expect"]["codes"]) - INFORMATIONAL:
        return "flagged"
    return "verified"


def as_decimals(results: dict) -> dict:
    return {str(seat): {bet: Decimal(v) for bet, v in bets.items()} for seat, bets in results.items()}


def expected_events(example: dict) -> list[tuple]:
    """The round's events in the contract's order (``game.progressive.in_contract_order``):
    the examples list a round's contributions in the order of the body's seats, ROUND_RECORD.md
    records them highest seat first, like the awards."""
    return in_contract_order([
        (kind, seat, Decimal(amount), Decimal(meter)) for kind, seat, amount, meter in example["expect"]["events"]
    ])


def label(example: dict, index: int) -> str:
    return f"{example['record']['round']} ({example.get('title') or 'line ' + str(index + 1)})"


def redated(record: dict, dealt_at: datetime) -> dict:
    """``record`` as if dealt at ``dealt_at`` (an aware datetime): its cards, bets and payouts as they were."""
    return {**record, "dealt_at": dealt_at.isoformat()}


def last_gaming_day_evening(now: datetime) -> datetime:
    """18:00 of the gaming day before the current one, in the casino's time."""
    from infra.gaming_day import gaming_day_of

    day = gaming_day_of(now) - timedelta(days=1)
    return datetime(day.year, day.month, day.day, 18, tzinfo=ZoneInfo("Europe/Stockholm"))


def post_all_on(table_client, start: datetime) -> None:
    """Every worked example, at S01 and U01, a round every 75 seconds from ``start``."""
    for name, code, config in EXAMPLE_FILES:
        client = table_client(code, config)
        for i, example in enumerate(load(name)):
            body = redated(example["record"], start + timedelta(seconds=75 * i))
            assert client.post("/api/v1/rounds/", body, format="json").status_code == 201


def post_two_stints(table_client, code: str, *, dealer: str = "") -> dict:
    """Twenty rounds at ``code``, one every three minutes from the last gaming day's evening, a
    two-hour break, and twenty more (two stints of 57 minutes, 3:57 h from first to last), all of
    one verified example by ``dealer`` (the example's own if none); the example's record."""
    from django.utils import timezone

    client = table_client(code, "se-50kr")
    record = next(e for e in load("se-50kr.jsonl") if not e["expect"]["codes"])["record"]
    start = last_gaming_day_evening(timezone.now())
    every = timedelta(minutes=3)
    moments = [start + i * every for i in range(20)] + [start + timedelta(hours=3) + i * every for i in range(20)]
    for n, moment in enumerate(moments):
        body = redated({**record, "table": code, "round": f"stint-{n}", **({"dealer": dealer} if dealer else {})},
                       moment)
        assert client.post("/api/v1/rounds/", body, format="json").status_code == 201
    return record
