"""bench/load.py, short: 20 tables on 2 pools for 10 s against gunicorn, then the books.

The full run (60 s, figures in docs/RELIABILITY.md) is ``python -m bench.load``;
this one runs in CI on the private cluster, so that a change that loses or
doubles a round under concurrency fails a test, not only a benchmark.
"""

from __future__ import annotations

import os

import pytest

from bench.load import run

from .conftest import TEMPLATE

pytestmark = pytest.mark.slow
SECONDS = float(os.environ.get("LOAD_SMOKE_SECONDS", "10"))


def test_twenty_tables_on_two_pools_lose_and_double_nothing(private_cluster):
    lines: list[str] = []
    result, books = run(server=private_cluster.url, seconds=SECONDS, tables=20, workers=2, threads=4,
                        template=TEMPLATE, out=lines.append)
    print("\n".join(lines))
    assert not result.refused, result.refused[:5]
    assert len(result.accepted) >= 20, "\n".join(lines)
    assert books["ok"], books
    assert books["stored"] == len(result.accepted)
    assert {p["pool"] for p in books["pools"]} == {"us-progressive", "bench-progressive"}
    for pool in books["pools"]:
        assert pool["ledger_ok"] and pool["contributions"] == pool["lit_wagers"] > 0, pool
