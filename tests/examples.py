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
    # ROUND_RECORD.md: a void round is ``void`` even when it also breaks a rule.
    if example["record"].get("void"):
        return "void"
    if set(example["expect"]["codes"]) - INFORMATIONAL:
        return "flagged"
    return "verified"


def as_decimals(results: dict) -> dict:
    return {str(seat): {bet: Decimal(v) for bet, v in bets.items()} for seat, bets in results.items()}


# What a contribution brings with it (the part above a ceiling, the reserve's share).
_WITH_CONTRIBUTION = {"overflow", "reserve"}


def expected_events(example: dict) -> list[tuple]:
    """The round's events in the contract's order.

    The examples list a round's contributions in the order of the body's
    seats; ROUND_RECORD.md records them highest seat first, like the awards
    (RULES.md: the order of the seats in the body never matters). Same
    events, same amounts: the contributions are put in that order, and the
    meter after each counted again from the meter before the round.
    """
    events = [(kind, seat, Decimal(amount), Decimal(meter)) for kind, seat, amount, meter in example["expect"]["events"]]
    contributions = 0
    while contributions < len(events) and (
        events[contributions][0] == "contribution" or events[contributions][0] in _WITH_CONTRIBUTION
    ):
        contributions += 1
    if not contributions:
        return events
    first_kind, _, first_amount, first_meter = events[0]
    meter = first_meter - first_amount if first_kind == "contribution" else first_meter
    chunks: dict[int, list[tuple]] = {}
    for event in events[:contributions]:
        chunks.setdefault(event[1], []).append(event)
    ordered = []
    for seat in sorted(chunks, reverse=True):
        for kind, _, amount, _ in chunks[seat]:
            if kind == "contribution":
                meter += amount
            ordered.append((kind, seat, amount, meter))
    return ordered + events[contributions:]


def label(example: dict, index: int) -> str:
    return f"{example['record']['round']} ({example.get('title') or 'line ' + str(index + 1)})"
