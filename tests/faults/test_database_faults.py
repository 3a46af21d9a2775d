"""Faults with real processes: gunicorn serving, PostgreSQL restarted or starved under it.

Each test runs the service as production does (gunicorn, gthread workers,
psycopg's connection pool) against its own database on a private PostgreSQL
cluster (tests/faults/cluster.py), so restarting that cluster disturbs no one
else's tests. Tables are ``bench.load.TableClient``: a lost answer (a dropped
connection, a 5xx) is posted again, the same body, until it is answered.

- PostgreSQL restarted (crash-style) while two tables post: every round is
  stored exactly once, each meter still proves its ledger, and what a table
  was told meanwhile was a retryable 503 or a dropped connection, never a 500.
- An answer cut off after the commit, before it reaches the table: the table
  posts again and is answered 200 with the stored round, counted once.
- A statement that times out (a pool row held by someone else): a 503 in the
  error shape with Retry-After, no stack trace; the retry stores the round.
"""

from __future__ import annotations

import http.client
import json
import random
import select
import socket
import threading
import time
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from bench.load import Service, TableClient, books_check, engine_rules, floor_open, free_port
from rounds.simulation import TableSimulator

pytestmark = pytest.mark.slow
START = datetime(2026, 11, 28, 20, 0, tzinfo=timezone(timedelta(hours=1)))


def simulated(floor: dict, code: str, count: int, seed: int = 7) -> list[dict]:
    rules, pool = engine_rules(floor)
    simulator = TableSimulator(table=code, rules=rules, pool=pool, rng=random.Random(seed), start=START)
    return [simulator.deal().record for _ in range(count)]


def codes(floor: dict) -> list[str]:
    return [t["code"] for t in floor["tables"]]


# ---- PostgreSQL restarted mid-run -------------------------------------------------------------


@pytest.mark.parametrize("connections", [
    {"DB_POOL": "1"},  # psycopg's pool in each worker, as the README's production runs
    {"DB_CONN_MAX_AGE": "60"},  # Django's persistent connections
], ids=["psycopg-pool", "persistent-connections"])
def test_tables_posting_through_a_postgresql_restart_store_every_round_once(
    private_cluster, fresh_database, connections
):
    floor = floor_open(fresh_database.url, tables=2, prefix="R")
    plans = {t["code"]: (t["key"], simulated(floor, t["code"], 40, seed=i)) for i, t in enumerate(floor["tables"])}
    answers: dict[str, list] = {code: [] for code in plans}
    errors: list[BaseException] = []

    with Service(fresh_database.url, workers=2, threads=2, env=connections) as service:

        def post_all(code: str):
            key, records = plans[code]
            client = TableClient(service.base, code, key, timeout=10)
            try:
                for record in records:
                    answers[code].append((record["round"], client.post(record, give_up_after=90)))
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)

        threads = [threading.Thread(target=post_all, args=(code,)) for code in plans]
        for thread in threads:
            thread.start()
        # Restart once a quarter of the rounds are in: a crash (immediate stop), 2 s down.
        while sum(len(a) for a in answers.values()) < 20 and not errors:
            time.sleep(0.02)
        private_cluster.restart(down_for=2, mode="immediate")
        for thread in threads:
            thread.join(timeout=180)

    assert not errors, errors
    felt = [t for a in answers.values() for _, answer in a for t in answer.transient]
    assert felt, "the restart went unnoticed: no answer was ever lost"
    assert "500" not in felt, f"a table was told 500 while the database was down: {felt}"
    assert set(felt) <= {"503", "RemoteDisconnected", "ConnectionResetError", "ConnectionRefusedError",
                         "BrokenPipeError", "TimeoutError", "IncompleteRead"}, felt
    refused = [(code, r, a.status, a.body) for code, a_ in answers.items() for r, a in a_ if a.status not in (200, 201)]
    assert not refused, refused
    accepted = [(code, round_id) for code, records in answers.items() for round_id, _ in records]
    assert len(accepted) == 80

    books = books_check(fresh_database.url, accepted, codes(floor))
    assert books["ok"], books
    assert books["stored"] == 80
    print(f"restart: {len(felt)} lost answers retried ({sorted(set(felt))}); "
          f"submissions {books['submissions']}; pools {[(p['pool'], p['meter'], p['events']) for p in books['pools']]}")


def test_a_round_answered_201_survives_a_postgresql_crash_right_after(private_cluster, fresh_database):
    """The service answers only once the disk holds the round, however it commits.

    The cluster's WAL writer waits 10 s, so a commit that was not flushed
    before its answer is still only in memory when PostgreSQL is killed: the
    same run with ``synchronous_commit`` off for the whole service must lose
    rounds, or this test could not tell.
    """
    floor = floor_open(fresh_database.url, tables=2, prefix="D")
    lost = {}
    for spec, options in zip(floor["tables"], ["", "-c synchronous_commit=off"]):
        records = simulated(floor, spec["code"], 3)
        _checkpoint(fresh_database.url)  # the recovery's own checkpoint over, none due while the rounds go in
        with Service(fresh_database.url, workers=1, threads=1, env={"PGOPTIONS": options}) as service:
            client = TableClient(service.base, spec["code"], spec["key"])
            assert [client.post(r).status for r in records] == [201] * 3
            private_cluster.stop("immediate")  # a crash, the instant the last answer is in
        private_cluster.start()
        books = books_check(fresh_database.url, [(spec["code"], r["round"]) for r in records], [spec["code"]])
        lost[options or "as configured"] = books["missing"]
    assert lost["as configured"] == [], f"answered 201, then lost in a crash: {lost['as configured']}"
    assert lost["-c synchronous_commit=off"], "the crash lost nothing even without a flush: the test cannot tell"


def _checkpoint(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CHECKPOINT")


# ---- an answer lost after the commit ------------------------------------------------------------


class CuttingProxy:
    """A TCP relay that, when armed, drops the connection as the answer starts to come back.

    The service has committed by the time it writes its answer, so a table
    behind an armed proxy sees its round stored but hears nothing: the case
    of a network cut, a proxy time-out or a table rebooting at that moment.
    """

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.port = free_port()
        self.cut_next = 0
        self.cut = 0
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._server.settimeout(0.2)
        self._running = True
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        return "127.0.0.1", self.port

    def _serve(self):
        while self._running:
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket):
        upstream = socket.create_connection(self.upstream)
        try:
            while True:
                ready, _, _ = select.select([client, upstream], [], [], 30)
                if not ready:
                    return
                for source in ready:
                    data = source.recv(65536)
                    if not data:
                        return
                    if source is upstream and self.cut_next:
                        self.cut_next -= 1
                        self.cut += 1
                        # A reset, not a clean close: the table hears nothing at all.
                        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                        return
                    (upstream if source is client else client).sendall(data)
        except OSError:
            return
        finally:
            client.close()
            upstream.close()

    def close(self):
        self._running = False
        self._server.close()


def test_an_answer_cut_off_after_the_commit_is_retried_without_a_double_count(fresh_database):
    floor = floor_open(fresh_database.url, tables=2, prefix="C")
    single, batch = floor["tables"]
    with Service(fresh_database.url, workers=1, threads=2) as service:
        proxy = CuttingProxy(service.base)
        try:
            record = simulated(floor, single["code"], 1)[0]
            proxy.cut_next = 1
            answer = TableClient(proxy.address, single["code"], single["key"]).post(record)

            rounds = simulated(floor, batch["code"], 5, seed=3)
            proxy.cut_next = 1
            batch_answer = TableClient(proxy.address, batch["code"], batch["key"]).post(
                {"rounds": rounds}, path="/api/v1/rounds/batch"
            )
        finally:
            proxy.close()

    assert proxy.cut == 2
    # The first answer was lost on its way; the retry is told the stored round, not stored again.
    assert len(answer.transient) == 1 and answer.status == 200, (answer.transient, answer.status)
    assert answer.body["round"] == record["round"]
    assert batch_answer.status == 200 and len(batch_answer.transient) == 1
    assert [item["status"] for item in batch_answer.body["results"]] == [200] * 5

    accepted = [(single["code"], record["round"])] + [(batch["code"], r["round"]) for r in rounds]
    books = books_check(fresh_database.url, accepted, codes(floor))
    assert books["ok"], books
    assert books["stored"] == 6
    assert books["submissions"] == {"accepted": 6, "replayed": 6}


# ---- a statement that cannot finish in time -----------------------------------------------------


def test_a_statement_timeout_is_a_503_in_the_error_shape_and_the_retry_stores_the_round(fresh_database):
    floor = floor_open(fresh_database.url, tables=1, prefix="T")
    table = floor["tables"][0]
    record = simulated(floor, table["code"], 1)[0]
    body = json.dumps(record)
    headers = {"Authorization": f"Bearer {table['key']}", "Content-Type": "application/json"}
    # Every statement of the service may take at most 1 s (libpq reads PGOPTIONS).
    with Service(fresh_database.url, workers=1, threads=2,
                 env={"PGOPTIONS": "-c statement_timeout=1000"}) as service:
        with psycopg.connect(fresh_database.url) as holder:
            # Someone else holds the pool's row: the round's meter update waits, then times out.
            holder.execute("SELECT 1 FROM progressive_pool WHERE code = 'us-progressive' FOR UPDATE")
            connection = http.client.HTTPConnection(*service.base, timeout=30)
            connection.request("POST", "/api/v1/rounds/", body, headers)
            refused = connection.getresponse()
            refused_body = refused.read().decode()
            holder.rollback()
        connection = http.client.HTTPConnection(*service.base, timeout=30)
        connection.request("POST", "/api/v1/rounds/", body, headers)
        stored = connection.getresponse()
        stored.read()

    assert refused.status == 503, refused_body
    assert refused.getheader("Retry-After") == "1"
    error = json.loads(refused_body)
    assert error["code"] == "service_unavailable" and error["request_id"]
    assert "Traceback" not in refused_body and "statement timeout" not in refused_body
    assert stored.status == 201
    books = books_check(fresh_database.url, [(table["code"], record["round"])], codes(floor))
    assert books["ok"] and books["stored"] == 1, books
