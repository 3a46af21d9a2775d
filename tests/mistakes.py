"""The rows a findings queue lists, worked out here from the findings themselves.

An Ante off the unit raises ``bet_off_unit`` on each bet it reaches; a queue
lists a seat's such findings in one state as one row, the first of them. The
rule is written again here, not read from ``rounds.mistakes``, so that a test
holds the queue to it rather than to itself. ``off_unit`` posts such a round.
"""

from __future__ import annotations

from collections.abc import Iterable

from rounds.models import Finding
from tests import examples

ONE_PER_BET = {"bet_off_unit"}


def firsts(findings: Iterable) -> list:
    """``findings`` (in their order) without those another of the same mistake comes before (by key)."""
    findings = list(findings)
    first: dict[tuple, int] = {}
    for finding in findings:
        if finding.code in ONE_PER_BET:
            key = (finding.round_id, finding.seat, finding.code, finding.state)
            first[key] = min(first.get(key, finding.pk), finding.pk)
    return [finding for finding in findings if finding.code not in ONE_PER_BET
            or first[(finding.round_id, finding.seat, finding.code, finding.state)] == finding.pk]


def keys(findings: Iterable) -> list[int]:
    return [finding.pk for finding in firsts(findings)]


def off_unit(table_client, round_id: str = "off-unit-1", *, seats=(1,), dealt_at=None) -> list[Finding]:
    """A round whose seats bet an Ante of 75 kr on a 50 kr table, playing 3x: the Ante, the Blind and
    the Play off the unit, each a finding, and the dealer paid to the rules (no other finding)."""
    example = next(e for e in examples.load("se-50kr.jsonl") if e["record"]["round"] == "c-se-14")
    record = example["record"]
    seat = {**record["seats"][0], "decision": "preflop_3x", "play": "225",
            "paid": {**record["seats"][0]["paid"], "play": "225"}}
    # A second seat holds aces where the first holds kings: the same win against the dealer's queens.
    holes = (["Kc", "Kh"], ["Ac", "Ah"])
    body = {**record, "round": round_id, "seats": [{**seat, "seat": n, "hole": hole} for n, hole in zip(seats, holes)]}
    if dealt_at is not None:
        body = examples.redated(body, dealt_at)
    answer = table_client("S01", "se-50kr").post("/api/v1/rounds/", body, format="json")
    assert answer.status_code == 201, answer.content
    # The table's answer is the contract's: a finding for each bet, as before.
    assert sorted((f["seat"], f["bet"]) for f in answer.json()["findings"]) == sorted(
        (n, bet) for n in seats for bet in ("ante", "blind", "play"))
    return list(Finding.objects.filter(round__round_id=round_id).order_by("pk"))
