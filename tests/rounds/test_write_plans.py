"""Every statement of a round's write keeps a plan that does not read what is stored (issue 50).

A web worker's connection lives for weeks and keeps the plans it made (its
prepared statements', and the triggers' queries'). This one posts a batch
while the books are empty, then another connection stores thousands of rounds
behind its back (no ANALYZE, as with autovacuum off or behind), and the first
posts again: every plan its statements and their triggers ran, read back
through ``auto_explain``, finds rows by an index, never by reading a table
that grows (a sequential or bitmap scan, a hash or a materialized copy of it).
"""

from __future__ import annotations

import re
import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests.plans import plans_of
from tests.progressive.records import us_rounds

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="plans are PostgreSQL's"),
    pytest.mark.slow,
]
BATCH = "/api/v1/rounds/batch"
GROWN = 2_000  # rounds stored by the other connection
# Tables that grow with what is stored (partitions of rounds and seats included).
GROWING = re.compile(r"\b(rounds_round\w*|rounds_seat\w*|rounds_roundkey\w*|rounds_finding|rounds_submission\w*|"
                     r"progressive_meterevent|audit_auditevent)\b")


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def _reads_a_growing_table(plan: str) -> list[str]:
    found = []
    for line in plan.splitlines():
        scan = re.search(r"(Seq Scan|Bitmap Heap Scan|Index Only Scan|Index Scan(?: Backward)?) (?:using \w+ )?on (\w+)",
                         line)
        if scan and GROWING.search(scan.group(2)) and scan.group(1) in ("Seq Scan", "Bitmap Heap Scan"):
            found.append(line.strip())
    if "Materialize" in plan and GROWING.search(plan.split("Materialize", 1)[1]):
        found.append("Materialize over a growing table")
    return found


def test_a_connection_opened_on_empty_books_keeps_plans_that_read_no_growing_table(table_client, monkeypatch):
    from audit.tasks import notices_send
    from rounds.services import table_register
    from trail.services import SYSTEM

    # The notices a round may call for are a task, run in a Celery worker of their own in production
    # (inline here, where there is no broker): not the web worker's write.
    monkeypatch.setattr(notices_send, "delay", lambda **kwargs: None)

    keys = {code: table_register(code=code, config_name="us-30k", actor=SYSTEM).key for code in ("W01", "W02")}
    mine = _client(keys["W01"])
    for n in range(3):  # prepared and planned while the books are empty, as a worker's first batches
        answer = mine.post(BATCH, {"rounds": us_rounds("W01", f"early{n}", 50, start=50 * n)}, format="json")
        assert answer.status_code == 200, answer.content[:500]

    def other_worker():
        try:
            other = _client(keys["W02"])
            for n in range(GROWN // 200):
                assert other.post(BATCH, {"rounds": us_rounds("W02", f"grown{n}", 200, start=200 * n)},
                                  format="json").status_code == 200
        finally:
            connection.close()

    thread = threading.Thread(target=other_worker)
    thread.start()
    thread.join(timeout=600)
    assert not thread.is_alive()

    plans = plans_of(lambda: mine.post(BATCH, {"rounds": us_rounds("W01", "late", 50, start=1000)}, format="json"))
    assert plans
    wrong = {line for plan in plans for line in _reads_a_growing_table(plan)}
    assert wrong == set(), "\n\n".join(p for p in plans if _reads_a_growing_table(p))
