"""The worked rounds of ../shared/examples, read once for every test that needs them."""

from __future__ import annotations

import json
from decimal import Decimal
from functools import cache
from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "shared" / "examples"
# Each file is one table's rounds in order: (file, table code, configuration).
EXAMPLE_FILES = (("se-50kr.jsonl", "S01", "se-50kr"), ("us-30k.jsonl", "U01", "us-30k"))
INFORMATIONAL = {"aggregate_limit_applied", "progressive_award"}


@cache
def load(name: str) -> tuple[dict, ...]:
    path = EXAMPLES_DIR / name
    return tuple(json.loads(line) for line in path.read_text().splitlines() if line.strip())


def expected_status(example: dict) -> str:
    if set(example["expect"]["codes"]) - INFORMATIONAL:
        return "flagged"
    if example["record"].get("void"):
        return "void"
    return "verified"


def as_decimals(results: dict) -> dict:
    return {str(seat): {bet: Decimal(v) for bet, v in bets.items()} for seat, bets in results.items()}


def expected_events(example: dict) -> list[tuple]:
    return [(kind, seat, Decimal(amount), Decimal(meter)) for kind, seat, amount, meter in example["expect"]["events"]]


def label(example: dict, index: int) -> str:
    return f"{example['record']['round']} ({example.get('title') or 'line ' + str(index + 1)})"
