"""Round records for a pool's tables: the us-30k worked rounds under new tables and ids."""

from __future__ import annotations

import copy
from decimal import ROUND_FLOOR, Decimal

from tests import examples

ROUNDS = "/api/v1/rounds/"


def us_rounds(table: str, prefix: str, count: int, *, start: int = 0) -> list[dict]:
    """``count`` us-30k worked rounds (cycled) as table ``table`` posts them, ids ``prefix-n``."""
    worked = examples.load("us-30k.jsonl")
    records = []
    for n in range(start, start + count):
        record = copy.deepcopy(worked[n % len(worked)]["record"])
        record["table"] = table
        record["round"] = f"{prefix}-{n}"
        records.append(record)
    return records


def lit_wagers(record: dict) -> list[Decimal]:
    """The wagers of a record that feed the meter: lit, on a round that is not void."""
    if record.get("void"):
        return []
    return [
        Decimal(str(seat["progressive"]))
        for seat in record["seats"]
        if seat.get("progressive_lit") and Decimal(str(seat.get("progressive") or 0))
    ]


def contribution(wager: Decimal, rate: Decimal = Decimal("0.20")) -> Decimal:
    return (wager * rate).quantize(Decimal("0.01"), rounding=ROUND_FLOOR)
