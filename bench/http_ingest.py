"""Rounds per second through the real HTTP stack: gunicorn, Django, PostgreSQL.

    .venv/bin/python -m bench.http_ingest                 # about two minutes
    .venv/bin/python -m bench.http_ingest --quick         # about 40 seconds
    .venv/bin/python -m bench.http_ingest --workers 4 --threads 4 --db-pool

1. Creates a throwaway PostgreSQL database (``BENCH_DATABASE_URL`` names the
   server) and migrates it; registers ``--clients`` tables (``us-30k``: every
   round feeds the one shared progressive pool, the costliest path) and a few
   more for the batch phase, each with its own key through ``table_register``.
2. Deals every round up front with ``rounds.simulation`` (4 seats a round, a
   dealer error now and then), so no client spends time dealing.
3. Starts gunicorn with ``gunicorn.conf.py`` on a free port on 127.0.0.1,
   production settings, and a table throttle high enough never to refuse.
4. Single-round posts: ``--clients`` processes, one per table, each on one
   keep-alive connection, post their rounds one after another for at most
   ``--seconds`` (or until their rounds run out).
5. Batch posts: ``--batch-clients`` tables post ``--batch-size`` rounds a request.
6. Prints rounds/s, latency percentiles, where the CPU went (gunicorn, the
   PostgreSQL backends of this database, PostgreSQL's own background work,
   the clients, and anything else on the machine), checks the audit chain and
   the pool's ledger, then stops gunicorn and drops the database.

Nothing here asserts a speed: the goals (docs/SCALING.md) are read off the output.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bench import scaffold

ROOT = scaffold.ROOT
GUNICORN = Path(sys.executable).with_name("gunicorn")
ROUNDS = "/api/v1/rounds/"
BATCH = "/api/v1/rounds/batch"
SEATS = 4
WARM_UP = 5  # rounds each client posts before the clock starts (connections, caches)
GOALS = {"single": 400.0, "single_p99_ms": 100.0, "batch": 4000.0}


# ---- dealing ------------------------------------------------------------------------------


def deal(table: str, count: int, seed: int, rules, pool, meters) -> list[dict]:
    """``count`` 4-seat rounds of one table, in the wire format."""
    from rounds.simulation import TableSimulator

    class FourSeats(TableSimulator):
        # The benchmark's rounds all have four seats: same players, all evening.
        def _change_seats(self) -> None:
            for seat in list(self.seats):
                if seat > SEATS:
                    del self.seats[seat]
            for seat in range(1, SEATS + 1):
                self.seats.setdefault(seat, self._new_player())

    zone = ZoneInfo("Europe/Stockholm")
    start = datetime.now(zone).replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=1)
    simulator = FourSeats(
        table=table, rules=rules, pool=pool, rng=random.Random(seed), start=start,
        mean_gap=timedelta(seconds=5), rule_break_rate=0.0, void_rate=0.0,
    )
    records = []
    for _ in range(count):
        dealt = simulator.deal(meters)
        meters = dealt.meters_after
        records.append(dealt.record)
    return records


def _deal_job(job):
    table, count, seed, config = job
    from progressive.models import PoolVersion
    from game.progressive import Meters
    from rounds.models import TableConfigVersion

    version = TableConfigVersion.objects.filter(config__name=config).order_by("-version").first()
    pool = meters = None
    if version.pool_id:
        pool_version = PoolVersion.objects.filter(pool_id=version.pool_id).order_by("-version").first()
        pool, meters = pool_version.rules(), Meters(pool_version.pool.meter)
    records = deal(table, count, seed, version.rules(), pool, meters)
    return table, [json.dumps(r, separators=(",", ":")).encode() for r in records]


def tables_register(codes: list[str], config: str) -> dict[str, str]:
    from trail.services import SYSTEM
    from rounds.services import table_register

    return {code: table_register(code=code, config_name=config, actor=SYSTEM).key for code in codes}


# ---- the server ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(url: str, port: int, args) -> dict:
    env = os.environ | {
        "DATABASE_URL": url,
        "DJANGO_ENV": "production",
        "SECRET_KEY": "bench-" + os.urandom(16).hex(),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "THROTTLE_TABLE": "100000000/min",
        "LOG_LEVEL": "WARNING",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_LOG_LEVEL": "warning",
    }
    env.pop("CELERY_BROKER_URL", None)
    if args.workers:
        env["WEB_CONCURRENCY"] = str(args.workers)
    if args.threads:
        env["GUNICORN_THREADS"] = str(args.threads)
    if args.db_pool:
        env["DB_POOL"] = "1"
        env["DB_POOL_MAX"] = str(args.db_pool)
    else:
        env["DB_POOL"] = "0"
        env["DB_CONN_MAX_AGE"] = str(args.conn_max_age)
    return env


def server_start(env: dict, log: Path, port: int) -> subprocess.Popen:
    return scaffold.server_started([str(GUNICORN), "-c", str(ROOT / "gunicorn.conf.py"), "casino.wsgi"],
                                   env=env, log=log, port=port, name="gunicorn", probe=ROUNDS)


server_stop = scaffold.server_stopped


# ---- clients ------------------------------------------------------------------------------


def client_run(port: int, key: str, path: str, bodies: list[bytes], barrier, seconds: float, out) -> None:
    """Post ``bodies`` in order on one keep-alive connection; report latencies and answers."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def post(body: bytes) -> tuple[int, bytes]:
        nonlocal conn
        for attempt in range(2):
            try:
                conn.request("POST", path, body, headers)
                response = conn.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, OSError):
                # The server closed an idle connection; a table reconnects and resends.
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    for body in bodies[:WARM_UP]:
        post(body)
    barrier.wait()
    began = time.perf_counter()
    cpu_began = time.process_time()
    latencies, statuses, items = [], Counter(), Counter()
    sample = b""
    for body in bodies[WARM_UP:]:
        if time.perf_counter() - began > seconds:
            break
        t0 = time.perf_counter()
        status, answer = post(body)
        latencies.append(time.perf_counter() - t0)
        statuses[status] += 1
        if path == BATCH and status == 200:
            items.update(item["status"] for item in json.loads(answer)["results"])
        elif status >= 300 and not sample:
            sample = answer[:500]
    out.send({
        "latencies": latencies, "statuses": statuses, "items": items, "sample": sample,
        "finished": time.perf_counter(), "cpu": time.process_time() - cpu_began,
    })
    out.close()
    conn.close()


def phase(name: str, port: int, keys: dict[str, str], bodies: dict[str, list[bytes]], path: str,
          seconds: float, server: subprocess.Popen, dbname: str, url: str) -> dict:
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(len(keys) + 1)
    pipes, procs = [], []
    for code, key in keys.items():
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=client_run, args=(port, key, path, bodies[code], barrier, seconds, send))
        proc.start()
        pipes.append(receive)
        procs.append(proc)
    barrier.wait(timeout=300)
    began = time.perf_counter()
    before = cpu_snapshot(server, dbname, url, [p.pid for p in procs])
    sampler = WaitSampler(url, dbname)
    sampler.start()
    reports = [pipe.recv() for pipe in pipes]
    sampler.stop()
    ended = max(r["finished"] for r in reports)
    after = cpu_snapshot(server, dbname, url, [p.pid for p in procs])
    for proc in procs:
        proc.join()
    wall = ended - began
    latencies = sorted(x for r in reports for x in r["latencies"])
    statuses = sum((r["statuses"] for r in reports), Counter())
    items = sum((r["items"] for r in reports), Counter())
    stored = items[201] if path == BATCH else statuses[201]
    cpu = {k: after[k] - before[k] for k in before}
    cpu["clients"] = sum(r["cpu"] for r in reports)
    return {
        "waits": sampler.shares(),
        "name": name, "wall": wall, "requests": len(latencies), "stored": stored,
        "statuses": dict(statuses), "items": dict(items), "latencies": latencies, "cpu": cpu,
        "sample": next((r["sample"] for r in reports if r["sample"]), b""),
    }


class WaitSampler(threading.Thread):
    """What the database's backends are doing, sampled every 20 ms: the wait that bounds throughput.

    ``idle in transaction`` is a backend waiting for its web worker inside a
    transaction (while it may hold the pool's or the chain's lock); ``Lock``
    is a backend queued for a row lock another transaction holds.
    """

    def __init__(self, url: str, dbname: str):
        super().__init__(daemon=True)
        self.url, self.dbname = url, dbname
        self.counts: Counter = Counter()
        self.samples = 0
        self.done = threading.Event()

    def run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.done.wait(0.02):
                rows = conn.execute(
                    "SELECT state, wait_event_type, wait_event FROM pg_stat_activity "
                    "WHERE datname = %s AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
                    [self.dbname],
                ).fetchall()
                self.samples += 1
                for state, kind, event in rows:
                    if state == "active":
                        label = f"waiting: {kind}/{event}" if kind else "active (on a CPU)"
                    else:
                        label = state or "?"
                    self.counts[label] += 1

    def stop(self) -> None:
        self.done.set()
        self.join()

    def shares(self) -> list[tuple[str, float]]:
        """(what, average number of backends doing it), most common first."""
        if not self.samples:
            return []
        return [(label, n / self.samples) for label, n in self.counts.most_common(6)]


def postgres_pids(url: str, dbname: str) -> tuple[list[int], list[int]]:
    """(backends serving ``dbname``, PostgreSQL's own background processes)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        me = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        rows = conn.execute("SELECT pid, datname, backend_type FROM pg_stat_activity").fetchall()
    backends = [pid for pid, db, kind in rows if db == dbname and kind == "client backend" and pid != me]
    background = [pid for pid, db, kind in rows if kind not in ("client backend",) and db is None]
    return backends, background


def cpu_snapshot(server: subprocess.Popen, dbname: str, url: str, clients: list[int]) -> dict:
    backends, background = postgres_pids(url, dbname)
    busy, _ = scaffold.machine_cpu()
    return {
        "gunicorn": scaffold.cpu_seconds(scaffold.descendants(server.pid)),
        "postgres": scaffold.cpu_seconds(backends),
        "postgres_background": scaffold.cpu_seconds(background),
        "machine": busy,
    }


# ---- the report ---------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def report(result: dict, rounds_per_request: int) -> list[str]:
    wall, lat, cpu = result["wall"], result["latencies"], result["cpu"]
    rate = result["stored"] / wall if wall else 0.0
    lines = [
        f"  requests {result['requests']:,} in {wall:.1f} s; answers {result['statuses']}"
        + (f"; items {result['items']}" if result["items"] else ""),
        f"  rounds stored: {result['stored']:,}  ->  {rate:,.0f} rounds/s"
        + (f"  ({result['requests'] / wall:,.1f} requests/s of {rounds_per_request} rounds)"
           if rounds_per_request > 1 else ""),
        "  latency per request (ms): "
        + ", ".join(f"p{p} {percentile(lat, p) * 1000:.1f}" for p in (50, 90, 99))
        + f", max {lat[-1] * 1000 if lat else float('nan'):.1f}, mean {statistics.fmean(lat) * 1000 if lat else 0:.1f}",
    ]
    ours = cpu["gunicorn"] + cpu["postgres"] + cpu["postgres_background"] + cpu["clients"]
    other = max(0.0, cpu["machine"] - ours)
    cores = os.cpu_count() or 1
    lines.append(
        f"  CPU seconds over {wall:.1f} s x {cores} cores = {wall * cores:.1f} available:"
    )
    for label, key in (("gunicorn (service)", "gunicorn"), ("postgres backends", "postgres"),
                       ("postgres background", "postgres_background"), ("bench clients", "clients")):
        lines.append(
            f"    {label:22} {cpu[key]:7.1f} s  {cpu[key] / wall * 100:5.0f}% of a core"
            + (f"  {cpu[key] / result['stored'] * 1e6:7.0f} us/round" if result["stored"] else "")
        )
    lines.append(f"    {'other work on machine':22} {other:7.1f} s  {other / wall * 100:5.0f}% of a core")
    service, database = cpu["gunicorn"], cpu["postgres"] + cpu["postgres_background"]
    if service + database:
        lines.append(
            f"    split service/database: {service / (service + database) * 100:.0f}% / "
            f"{database / (service + database) * 100:.0f}%"
        )
    if result["waits"]:
        lines.append("  database backends, on average over the run: " + ", ".join(
            f"{n:.1f} {label}" for label, n in result["waits"]))
    if result["sample"]:
        lines.append(f"  first refusal: {result['sample']!r}")
    return lines


def checks(url: str) -> list[str]:
    from django.db import connection
    from django.db.models import Count, Sum

    from trail.selectors import audit_chain_verify
    from progressive.models import MeterEvent, Pool
    from rounds.models import Round

    connection.close()
    chain = audit_chain_verify()
    statuses = dict(Round.objects.values_list("status").annotate(n=Count("id")))
    lines = [
        f"stored: {Round.objects.count():,} rounds {statuses}",
        f"audit chain: {'unbroken' if chain.ok else 'BROKEN: ' + chain.problem}, {chain.checked:,} events",
    ]
    for pool in Pool.objects.all():
        ledger = MeterEvent.objects.filter(pool=pool).aggregate(s=Sum("delta"))["s"]
        lines.append(
            f"pool {pool.code}: meter {pool.meter}, ledger sums to {ledger}"
            + ("" if ledger == pool.meter else "  MISMATCH")
        )
    return lines


# ---- the run ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0, help="time bound of each phase")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds dealt per single-round client")
    parser.add_argument("--batch-clients", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--batches", type=int, default=12, help="batches dealt per batch client")
    parser.add_argument("--config", default="us-30k", help="table configuration (us-30k feeds the pool)")
    parser.add_argument("--workers", type=int, help="gunicorn processes (default: gunicorn.conf.py)")
    parser.add_argument("--threads", type=int, help="threads per process (default: gunicorn.conf.py)")
    parser.add_argument("--db-pool", type=int, default=0, help="psycopg pool max size per process")
    parser.add_argument("--conn-max-age", type=int, default=600, help="without --db-pool")
    parser.add_argument("--quick", action="store_true", help="10 s phases, fewer rounds")
    parser.add_argument("--skip-batch", action="store_true")
    parser.add_argument("--skip-single", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.rounds, args.batches = 10.0, min(args.rounds, 500), min(args.batches, 6)

    print("bench.http_ingest: rounds through gunicorn + Django + PostgreSQL")
    dbname, url = scaffold.database_create("bench_ingest")
    server = None
    try:
        scaffold.django_setup(url)
        for line in scaffold.machine_lines(url):
            print(line)
        single = [f"HT{n:02d}" for n in range(1, args.clients + 1)]
        batch = [f"HB{n:02d}" for n in range(1, args.batch_clients + 1)]
        keys = tables_register(single + batch, args.config)
        from django.db import connections

        connections.close_all()
        jobs = [(code, WARM_UP + args.rounds, n, args.config) for n, code in enumerate(single)]
        jobs += [(code, WARM_UP + args.batch_size * args.batches, 100 + n, args.config)
                 for n, code in enumerate(batch)]
        began = time.perf_counter()
        with multiprocessing.get_context("fork").Pool(os.cpu_count()) as pool:
            bodies = dict(pool.map(_deal_job, jobs, chunksize=1))
        print(f"dealt {sum(len(b) for b in bodies.values()):,} rounds of {SEATS} seats "
              f"({args.config}) in {time.perf_counter() - began:.1f} s")
        for code in batch:
            # The first WARM_UP go one by one; the rest as batches of --batch-size.
            rounds = bodies[code]
            bodies[code] = rounds[:WARM_UP] + [
                b'{"rounds":[' + b",".join(rounds[i : i + args.batch_size]) + b"]}"
                for i in range(WARM_UP, len(rounds), args.batch_size)
            ]

        port = free_port()
        env = server_env(url, port, args)
        log = Path(f"/tmp/{dbname}-gunicorn.log")
        server = server_start(env, log, port)
        workers = len(scaffold.descendants(server.pid)) - 1
        print(f"gunicorn: {workers} workers x {env.get('GUNICORN_THREADS', 'conf')} threads (gthread), "
              + (f"psycopg pool max {args.db_pool}/process" if args.db_pool
                 else f"persistent connections (CONN_MAX_AGE={args.conn_max_age})")
              + f"; log {log}")

        if not args.skip_single:
            print(f"\nsingle-round posts: {args.clients} tables, one keep-alive connection each, "
                  f"up to {args.seconds:.0f} s")
            result = phase("single", port, {c: keys[c] for c in single}, bodies, ROUNDS,
                           args.seconds, server, dbname, url)
            for line in report(result, 1):
                print(line)
            rate = result["stored"] / result["wall"]
            p99 = percentile(result["latencies"], 99) * 1000
            print(f"  goal: >= {GOALS['single']:.0f} rounds/s with p99 < {GOALS['single_p99_ms']:.0f} ms: "
                  + ("met" if rate >= GOALS["single"] and p99 < GOALS["single_p99_ms"] else "NOT met"))
        if not args.skip_batch:
            print(f"\nbatch posts: {args.batch_clients} tables, {args.batch_size} rounds a request, "
                  f"up to {args.seconds:.0f} s")
            result = phase("batch", port, {c: keys[c] for c in batch}, bodies, BATCH,
                           args.seconds, server, dbname, url)
            for line in report(result, args.batch_size):
                print(line)
            rate = result["stored"] / result["wall"]
            print(f"  goal: >= {GOALS['batch']:.0f} rounds/s: " + ("met" if rate >= GOALS["batch"] else "NOT met"))
        server_stop(server)
        server = None
        print()
        for line in checks(url):
            print(line)
    finally:
        if server is not None:
            server_stop(server)
        from django.db import connections

        connections.close_all()
        if args.keep:
            print(f"kept database {dbname}: {url}")
        else:
            scaffold.database_drop(dbname)


if __name__ == "__main__":
    main()
