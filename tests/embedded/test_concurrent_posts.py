"""Eight tables posting at once to the embedded default: one SQLite file, in WAL mode.

Runs in ``scripts/test``'s SQLite pass (skipped on PostgreSQL). The live
server is the threaded WSGI server ``runserver`` uses: each request thread
opens its own connection to the file, as the embedded default's do. Each
table's thread posts its rounds over its own HTTP connection and reads each
one back at once while the others write; all eight also race with the very
same round of one table. Every post must be answered as if it came alone (no
503 for a busy database), every round stored once and readable back.
"""

from __future__ import annotations

import base64
import copy
import http.client
import json
import threading
from collections import Counter
from urllib.parse import urlsplit

import pytest
from django.db import connection

from progressive.models import Pool
from progressive.selectors import pool_ledger_check
from rounds.models import Round, Submission
from rounds.services import table_register
from tests import examples
from trail.selectors import audit_chain_verify
from trail.services import SYSTEM

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the embedded default's SQLite file: scripts/test's SQLite pass"
)

ROUNDS = "/api/v1/rounds/"
TABLES = [(f"E{n:02d}", ("se-50kr", "us-30k")[n % 2]) for n in range(1, 9)]
ROUNDS_PER_TABLE = 10
PASSWORD = "a-long-test-password"  # the ``auditor`` fixture's


def _records(table: str, config: str, count: int, prefix: str = "w") -> list[dict]:
    """``count`` worked rounds of ``config`` (cycled), as table ``table`` posts them."""
    worked = examples.load(f"{config}.jsonl")
    records = []
    for n in range(count):
        record = copy.deepcopy(worked[n % len(worked)]["record"])
        record["table"], record["round"] = table, f"{prefix}-{table}-{n}"
        records.append(record)
    return records


class _Client:
    """One keep-alive connection to the live server, as a table or an auditor keeps one."""

    def __init__(self, url: str, authorization: str):
        where = urlsplit(url)
        self.conn = http.client.HTTPConnection(where.hostname, where.port, timeout=60)
        self.headers = {"Authorization": authorization, "Content-Type": "application/json"}

    def send(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        self.conn.request(method, path, json.dumps(body) if body is not None else None, self.headers)
        response = self.conn.getresponse()
        return response.status, json.loads(response.read() or b"null")

    def close(self) -> None:
        self.conn.close()


@pytest.mark.django_db(transaction=True)
def test_eight_tables_posting_at_once_store_every_round(live_server, auditor):
    with connection.cursor() as cursor:
        assert cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    keys = {code: table_register(code=code, config_name=config, actor=SYSTEM).key for code, config in TABLES}
    plans = {code: _records(code, config, ROUNDS_PER_TABLE) for code, config in TABLES}
    raced_table = TABLES[0][0]
    raced = _records(raced_table, TABLES[0][1], 1, prefix="raced")[0]
    reader = "Basic " + base64.b64encode(f"{auditor.username}:{PASSWORD}".encode()).decode()

    posted: list[tuple[str, str, int]] = []  # (table, round, status), in any order
    unequal: list[tuple[str, str, int]] = []  # a round read back otherwise than it was answered
    errors: list[BaseException] = []
    start = threading.Barrier(len(TABLES))

    def table_work(code: str):
        table = _Client(live_server.url, f"Bearer {keys[code]}")
        racer = _Client(live_server.url, f"Bearer {keys[raced_table]}")
        auditor_view = _Client(live_server.url, reader)
        try:
            start.wait(timeout=60)
            status, _ = racer.send("POST", ROUNDS, raced)
            posted.append((raced_table, raced["round"], status))
            for record in plans[code]:
                status, answer = table.send("POST", ROUNDS, record)
                posted.append((code, record["round"], status))
                if status == 201:
                    read_status, stored = auditor_view.send("GET", f"{ROUNDS}{answer['id']}/")
                    if (read_status, stored) != (200, answer):
                        unequal.append((code, record["round"], read_status))
        except BaseException as exc:  # noqa: BLE001 - every failure is reported by the test
            errors.append(exc)
        finally:
            for client in (table, racer, auditor_view):
                client.close()

    threads = [threading.Thread(target=table_work, args=(code,)) for code, _ in TABLES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads), "a table's thread hung"
    assert not errors, errors

    statuses = Counter(status for _, _, status in posted)
    assert statuses == {201: len(TABLES) * ROUNDS_PER_TABLE + 1, 200: len(TABLES) - 1}, statuses
    raced_answers = sorted(status for _, round_id, status in posted if round_id == raced["round"])
    assert raced_answers == [200] * (len(TABLES) - 1) + [201], raced_answers
    assert not unequal, unequal

    stored = set(Round.objects.values_list("table__code", "round_id"))
    assert stored == {(table, round_id) for table, round_id, _ in posted}
    assert Submission.objects.count() == len(posted)
    chain = audit_chain_verify()
    assert chain.ok, chain.problem
    ledger = pool_ledger_check(pool=Pool.objects.get(code="us-progressive"))
    assert ledger.ok, ledger.problem
