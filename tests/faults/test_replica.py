"""Reads from a real streaming replica, every write on the primary, and no 500 when it fails.

The suite makes its own pair: a private primary (tests/faults/cluster.py)
and a hot standby streaming from it (``pg_basebackup -R``), both logging
every statement. The service runs against them in subprocesses
(tests/faults/replica_driver.py) with ``DATABASE_URL`` on the primary and
``DATABASE_REPLICA_URL`` on the replica. What each server was asked is read
from its own log: the lists, the exports and the nightly report's reads of
rounds, seats and ledgers are the replica's; the exports' audit events, the
report's rows and every other write are the primary's, and the replica is
never sent a write. Stopped, or paused behind the primary, the replica is
passed over: the same reads are answered from the primary, never a 500.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass

from urllib.parse import quote

import psycopg
import pytest

from bench.load import Throwaway, django_run
from infra.process_names import WEB

from .cluster import Cluster, postgres_bin

pytestmark = pytest.mark.slow
DATABASE = "ta_replica"
# The driver's test client plays the web service's part, as the suite's does (infra.process_names):
# its connections carry the web's name, so the people's acts it writes are the web's.
AS_THE_WEB = f"?application_name={quote(WEB)}"
ROUNDS = "SELECT count(*) FROM rounds_round"
WRITE = re.compile(r"\b(INSERT|UPDATE|DELETE|TRUNCATE|CREATE|ALTER|DROP)\b|FOR (NO KEY )?UPDATE|FOR SHARE", re.I)


@dataclass
class Pair:
    primary: Cluster
    replica: Cluster
    floor: dict | None = None

    def env(self, **more: str) -> dict:
        return {
            "DATABASE_REPLICA_URL": f"{self.replica.url}/{DATABASE}{AS_THE_WEB}",
            "REPLICA_MAX_LAG_SECONDS": "0.5",
            "REPLICA_CHECK_SECONDS": "0",
            "ALLOWED_HOSTS": "testserver",
            **more,
        }

    def run(self, step: str, given: dict | None = None, **env: str) -> dict:
        out = django_run(f"{self.primary.url}/{DATABASE}{AS_THE_WEB}", "-m", "tests.faults.replica_driver", step,
                         module=False, stdin=json.dumps(given or {}), env=self.env(**env))
        return json.loads(out.strip().splitlines()[-1])

    def caught_up(self, timeout: float = 10) -> None:
        """Wait until the replica has replayed everything the primary has written."""
        with psycopg.connect(f"{self.primary.url}/postgres", autocommit=True) as primary:
            [(position,)] = primary.execute("SELECT pg_current_wal_lsn()").fetchall()
        deadline = time.monotonic() + timeout
        with psycopg.connect(f"{self.replica.url}/postgres", autocommit=True) as replica:
            while replica.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [position]).fetchone() != (True,):
                assert time.monotonic() < deadline, "the replica did not catch up"
                time.sleep(0.05)


class Statements:
    """The statements each server logs for the service's database from now on."""

    def __init__(self, pair: Pair):
        self.logs = {"primary": pair.primary.log, "replica": pair.replica.log}
        self.start = {name: log.stat().st_size for name, log in self.logs.items()}

    def of(self, server: str) -> list[str]:
        with open(self.logs[server], errors="replace") as log:
            log.seek(self.start[server])
            text = log.read()
        # One entry per logged line of the service's database; a statement's
        # continuation lines (a multi-line query) belong to the one before.
        entries: list[str] = []
        for line in text.splitlines():
            if re.match(r"^\d{4}-\d\d-\d\d ", line):
                entries.append(line)
            elif entries:
                entries[-1] += "\n" + line
        return [e for e in entries if f" {DATABASE} " in e and ("statement: " in e or "execute " in e)]

    def touching(self, server: str, table: str) -> list[str]:
        return [s for s in self.of(server) if f'"{table}"' in s or f" {table} " in s]

    def writes(self, server: str) -> list[str]:
        return [s for s in self.of(server) if WRITE.search(s.split("statement: ", 1)[-1])]


@pytest.fixture(scope="module")
def pair():
    if postgres_bin() is None:
        pytest.skip("no PostgreSQL server binaries (initdb) on this machine")
    primary = Cluster().init()
    primary.configure(log_statement="all", log_line_prefix="%m [%p] %d ")
    primary.start()
    replica = None
    try:
        replica = primary.replica()
        replica.start()
        # Made on the primary after the replica started: the schema and the data
        # reach the replica by streaming, as in production.
        Throwaway(primary.url, DATABASE).create()
        made = Pair(primary, replica)
        made.floor = made.run("seed")["floor"]
        yield made
    finally:
        if replica is not None:
            replica.destroy()
        primary.destroy()


def _primary_count(pair: Pair, sql: str) -> int:
    with psycopg.connect(f"{pair.primary.url}/{DATABASE}") as connection:
        return connection.execute(sql).fetchone()[0]


def _answers_ok(seen: dict) -> None:
    assert {name: answer["status"] for name, answer in seen.items()} == dict.fromkeys(seen, 200), seen


def test_lists_exports_and_the_nightly_report_are_read_on_the_replica_and_written_on_the_primary(pair):
    pair.caught_up()
    exports_before = _primary_count(pair, "SELECT count(*) FROM audit_auditevent WHERE action = 'export.downloaded'")
    statements = Statements(pair)
    seen = pair.run("lists")

    _answers_ok(seen)
    assert not statements.writes("replica"), statements.writes("replica")
    assert seen["rounds"]["count"] == _primary_count(pair, ROUNDS) and seen["detail"]["round"]
    assert len(seen["export-rounds"]["csv"].splitlines()) > 24  # a row a seat, and the header
    # Every round, seat and finding was read on the replica, none on the primary.
    for table in ("rounds_round", "rounds_seat", "rounds_finding", "progressive_meterevent"):
        assert statements.touching("replica", table), f"{table} was not read on the replica"
        assert not statements.touching("primary", table), statements.touching("primary", table)
    # The three downloads' audit events were written on the primary, under its chain lock.
    assert any('INSERT INTO "audit_auditevent"' in s for s in statements.writes("primary"))
    assert _primary_count(
        pair, "SELECT count(*) FROM audit_auditevent WHERE action = 'export.downloaded'") == exports_before + 3

    statements = Statements(pair)
    report = pair.run("report")
    assert not statements.writes("replica"), statements.writes("replica")
    assert report["status"] == "complete" and report["rounds"] == _primary_count(pair, ROUNDS), report
    # Nobody scored the day's decisions here: that alert is expected, and no other.
    assert all(report["balanced"].values()) and all(a.startswith("SCORING") for a in report["alerts"]), report
    # Table parts, the players' part, the pools' ledgers and the bodies: read on the replica.
    for table in ("rounds_seat", "rounds_submission", "progressive_meterevent", "progressive_meterreading"):
        assert statements.touching("replica", table), f"{table} was not read on the replica"
    assert not statements.touching("primary", "rounds_seat")
    # The report and its parts are rows of the primary.
    assert statements.touching("primary", "audit_reconciliationpart")
    assert _primary_count(pair, f"SELECT count(*) FROM audit_reconciliationreport WHERE id = {report['id']} "
                                "AND status = 'complete'") == 1


def test_the_replica_refuses_writes(pair):
    with psycopg.connect(f"{pair.replica.url}/{DATABASE}") as connection:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            connection.execute("UPDATE audit_chainhead SET seq = seq WHERE id = 1")


def test_a_stopped_replica_leaves_the_reads_to_the_primary(pair):
    pair.caught_up()
    served = pair.run("lists")
    pair.replica.stop("immediate")
    try:
        statements = Statements(pair)
        seen = pair.run("lists")
        _answers_ok(seen)
        assert seen["rounds"] == served["rounds"]
        assert seen["export-rounds"] == served["export-rounds"]
        assert statements.touching("primary", "rounds_seat")
        report = pair.run("report")
        assert report["status"] == "complete" and report["rounds"] == _primary_count(pair, ROUNDS), report
    finally:
        pair.replica.start()
    pair.caught_up()


def test_a_replica_behind_by_more_than_the_allowed_lag_leaves_the_reads_to_the_primary(pair):
    pair.caught_up()
    with psycopg.connect(f"{pair.replica.url}/postgres", autocommit=True) as replica:
        replica.execute("SELECT pg_wal_replay_pause()")
        try:
            listed = _primary_count(pair, ROUNDS)
            assert pair.run("post", {"floor": pair.floor, "nth": 0})["statuses"] == [201]
            time.sleep(1)  # twice REPLICA_MAX_LAG_SECONDS
            statements = Statements(pair)
            seen = pair.run("lists")
            _answers_ok(seen)
            # The round only the primary holds yet is listed: the primary answered.
            assert seen["rounds"]["count"] == _primary_count(pair, ROUNDS) == listed + 1
            assert statements.touching("primary", "rounds_round")
            assert not statements.touching("replica", "rounds_round")
            # A report part must see all the primary holds: it does not wait out a replica this far behind.
            statements = Statements(pair)
            report = pair.run("report")
            assert report["status"] == "complete" and report["rounds"] == _primary_count(pair, ROUNDS), report
            assert statements.touching("primary", "rounds_seat")
            assert not statements.touching("replica", "rounds_seat")
        finally:
            replica.execute("SELECT pg_wal_replay_resume()")
    pair.caught_up()
    seen = pair.run("lists")
    assert seen["rounds"]["count"] == _primary_count(pair, ROUNDS)


def test_a_report_part_waits_for_a_replica_a_little_behind_to_replay_what_the_primary_holds(pair):
    pair.caught_up()
    with psycopg.connect(f"{pair.replica.url}/postgres", autocommit=True) as replica:
        replica.execute("SELECT pg_wal_replay_pause()")
        try:
            assert pair.run("post", {"floor": pair.floor, "nth": 1})["statuses"] == [201]
            statements = Statements(pair)
            done: dict = {}
            # Behind, within the lag allowed: the report's parts wait for the replica to replay.
            running = threading.Thread(target=lambda: done.update(pair.run("report", REPLICA_MAX_LAG_SECONDS="60")))
            running.start()
            time.sleep(2)
            assert not done, "the report did not wait for the replica"
        finally:
            replica.execute("SELECT pg_wal_replay_resume()")
    running.join(timeout=60)
    # The round the replica had not replayed when the report began is in it, read on the replica.
    assert done["status"] == "complete" and done["rounds"] == _primary_count(pair, ROUNDS), done
    assert statements.touching("replica", "rounds_seat")
    assert not statements.touching("primary", "rounds_seat")
