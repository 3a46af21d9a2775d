"""Counts what the fuzzer sent, per operation and answer, and prints it after the run."""

from __future__ import annotations

from collections import Counter

import pytest

# (operation label, generation mode, HTTP status) -> how many cases got that answer.
CASES: Counter = Counter()


def pytest_terminal_summary(terminalreporter):
    if not CASES:
        return
    terminalreporter.section("API fuzzing (schemathesis): cases run")
    by_operation: dict[tuple[str, str], Counter] = {}
    for (label, mode, status), count in sorted(CASES.items()):
        by_operation.setdefault((label, mode), Counter())[status] += count
    for (label, mode), statuses in by_operation.items():
        answers = ", ".join(f"{status}×{count}" for status, count in sorted(statuses.items()))
        terminalreporter.write_line(f"{label:50} {mode:8} {sum(statuses.values()):5}  {answers}")
    positive = sum(c for (_, mode, _), c in CASES.items() if mode == "positive")
    negative = sum(c for (_, mode, _), c in CASES.items() if mode == "negative")
    terminalreporter.write_line(
        f"total {positive + negative} cases over {len({k[0] for k in CASES})} operations "
        f"({positive} positive, {negative} negative)"
    )


@pytest.fixture
def fuzz_cases() -> Counter:
    return CASES
