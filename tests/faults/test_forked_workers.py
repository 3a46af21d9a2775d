"""gunicorn in production settings, its master loading the application before it forks (``preload_app``)
and each worker on a pool of connections (``DB_POOL``): every worker has a PostgreSQL session of its own.

The master checks at start that the service's role cannot switch the records'
protections off (``trail.privileges.refuse_the_owner``). It once left the
pooled connection it checked with open: every worker forked with it wrote to
that one session, and the second worker's first batch was a 500 (a prepared
statement "already exists": the first worker had prepared it in the session
they shared), where two requests at once could read each other's answers.
"""

from __future__ import annotations

import json
import random

import psycopg
import pytest

from bench.batch_growth import PRODUCTION, _connections
from bench.load import Service, engine_rules, floor_open
from rounds.simulation import TableSimulator

pytestmark = pytest.mark.slow


def test_each_forked_worker_stores_through_a_session_of_its_own(fresh_database):
    from datetime import datetime, timedelta, timezone

    floor = floor_open(fresh_database.url, tables=1, prefix="F")
    table = floor["tables"][0]
    rules, pool = engine_rules(floor)
    simulator = TableSimulator(table=table["code"], rules=rules, pool=pool, rng=random.Random(3),
                               start=datetime.now(timezone.utc) - timedelta(hours=1))
    records = [simulator.deal().record for _ in range(20)]
    headers = {"Authorization": f"Bearer {table['key']}", "Content-Type": "application/json"}
    with Service(fresh_database.url, workers=2, threads=1, env=PRODUCTION) as service:
        workers = _connections(service.base)
        for n, connection in enumerate(workers.values()):
            connection.request("POST", "/api/v1/rounds/batch", json.dumps({"rounds": records[10 * n:10 * n + 10]}),
                               headers)
            answer = connection.getresponse()
            body = answer.read()
            assert answer.status == 200, body[:2000]
            assert [r["status"] for r in json.loads(body)["results"]] == [201] * 10
        with psycopg.connect(fresh_database.url) as admin:
            sessions = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend' "
                "AND pid <> pg_backend_pid()", [fresh_database.name]).fetchone()[0]
        assert sessions == 2  # one each: a pool of one a worker, none kept from the master
