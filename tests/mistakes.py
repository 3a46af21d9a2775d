"""The rows a findings queue lists, worked out here from the findings themselves.

An Ante off the unit raises ``bet_off_unit`` on each bet it reaches; a queue
lists a seat's such findings in one state as one row, the first of them. The
rule is written again here, not read from ``rounds.mistakes``, so that a test
holds the queue to it rather than to itself.
"""

from __future__ import annotations

from collections.abc import Iterable

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
