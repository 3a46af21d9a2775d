"""Tables posting at once to the embedded default: ``runserver`` on a SQLite file.

    .venv/bin/python -m bench.embedded_concurrency                 # 8 tables for 15 s, about a minute
    .venv/bin/python -m bench.embedded_concurrency --tables 4 --seconds 10
    .venv/bin/python -m bench.embedded_concurrency --options transaction_mode=DEFERRED

1. Makes a SQLite file in a fresh temporary folder and migrates it, as
   ``scripts/serve`` does, with the settings' own SQLite options
   (``casino/settings.py``); ``--options`` adds a query to ``DATABASE_URL``,
   whose options override the settings' (to compare other choices).
2. Registers ``--tables`` tables, alternately on ``se-50kr`` and ``us-30k``
   (every ``us-30k`` round feeds the shipped pool) as the demo's are, each
   with its own key, and deals each table's rounds beforehand
   (``bench.http_ingest.deal``: ``rounds.simulation``, four seats a round).
3. Starts ``manage.py runserver --noreload`` on a free port of 127.0.0.1 with
   the development settings: Celery inline, the default throttle.
4. One client process per table posts one round to warm up, then, once all
   are ready, its rounds one after another on one keep-alive connection for
   ``--seconds`` (``--connect-each``: a new connection for every post;
   ``runserver`` answers on a kept-alive connection about 40 ms late, its
   headers and body going out in two writes). An answer other than 201 is
   counted and the client goes on with its next round: the answers are what
   this run measures.
5. Prints the answers by status, rounds/s, latency percentiles, the CPU of
   the server and of the clients, the journal mode and synchronous setting the
   server's connections use, and how many database errors the server logged;
   then checks that the stored rounds are exactly those answered 201, the
   audit chain and the pool's ledger, and removes the folder (``--keep``
   keeps it).

Nothing here asserts a speed or a count: the figures go to docs/SCALING.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench import scaffold
from bench.http_ingest import ROUNDS, checks, deal, free_port, percentile

ROOT = scaffold.ROOT
CONFIGS = ("se-50kr", "us-30k")


# ---- the floor ----------------------------------------------------------------------------


def sqlite_url(path: Path, options: str) -> str:
    return f"sqlite:///{path}" + (f"?{options}" if options else "")


def migrate(url: str) -> None:
    env = os.environ | {"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings"}
    env.pop("CELERY_BROKER_URL", None)
    env.pop("DJANGO_ENV", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
    )


def floor_open(tables: int, rounds: int) -> tuple[dict[str, str], dict[str, list[bytes]]]:
    """Register the tables and deal their rounds: ``(keys, bodies)`` by table code."""
    from trail.services import SYSTEM
    from progressive.models import PoolVersion
    from game.progressive import Meters
    from rounds.models import TableConfigVersion
    from rounds.services import table_register

    keys, bodies = {}, {}
    for n in range(1, tables + 1):
        code, config = f"E{n:02d}", CONFIGS[n % 2]
        keys[code] = table_register(code=code, config_name=config, actor=SYSTEM).key
        version = TableConfigVersion.objects.filter(config__name=config).order_by("-version").first()
        pool = meters = None
        if version.pool_id:
            pool_version = PoolVersion.objects.filter(pool_id=version.pool_id).order_by("-version").first()
            pool, meters = pool_version.rules(), Meters(pool_version.pool.meter)
        records = deal(code, rounds, n, version.rules(), pool, meters)
        bodies[code] = [json.dumps(r, separators=(",", ":")).encode() for r in records]
    return keys, bodies


# ---- the server ---------------------------------------------------------------------------


def server_start(url: str, port: int, log: Path) -> subprocess.Popen:
    """``manage.py runserver`` as ``scripts/serve`` runs it, but without the reloader."""
    env = os.environ | {"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings"}
    for name in ("CELERY_BROKER_URL", "DJANGO_ENV", "DEBUG", "THROTTLE_TABLE", "CACHE_URL"):
        env.pop(name, None)
    return scaffold.server_started([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                                   env=env, log=log, port=port, name="runserver", probe=ROUNDS)


server_stop = scaffold.server_stopped


# ---- clients ------------------------------------------------------------------------------


def client_run(port: int, key: str, bodies: list[bytes], barrier, seconds: float, each: bool,
               out) -> None:
    """Post the first body, wait for the others, then post the rest in order for ``seconds``,
    on one keep-alive connection or (``each``) on a new connection every time.

    Reports every answer's round id and status (the warm-up's included), and
    the latencies of those after the start.
    """
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    answers: list[tuple[str, int]] = []
    latencies: list[float] = []
    sample = b""

    def post(body: bytes) -> tuple[int, bytes]:
        nonlocal conn
        for attempt in range(2):
            try:
                conn.request("POST", ROUNDS, body, headers)
                response = conn.getresponse()
                answer = response.read()
                if each:
                    conn.close()
                return response.status, answer
            except (http.client.HTTPException, OSError):
                # The server closed the connection; a table reconnects and resends.
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    status, _ = post(bodies[0])
    answers.append((json.loads(bodies[0])["round"], status))
    barrier.wait()
    began = time.perf_counter()
    cpu_began = time.process_time()
    for body in bodies[1:]:
        if time.perf_counter() - began > seconds:
            break
        t0 = time.perf_counter()
        status, answer = post(body)
        latencies.append(time.perf_counter() - t0)
        answers.append((json.loads(body)["round"], status))
        if status != 201 and not sample:
            sample = answer[:300]
    out.send({
        "answers": answers, "latencies": latencies, "sample": sample,
        "finished": time.perf_counter(), "cpu": time.process_time() - cpu_began,
    })
    out.close()
    conn.close()


def phase(port: int, keys: dict[str, str], bodies: dict[str, list[bytes]], seconds: float,
          each: bool, server: subprocess.Popen) -> dict:
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(len(keys) + 1)
    pipes, procs = {}, []
    for code, key in keys.items():
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=client_run, args=(port, key, bodies[code], barrier, seconds, each, send))
        proc.start()
        pipes[code] = receive
        procs.append(proc)
    barrier.wait(timeout=300)
    began = time.perf_counter()
    server_before = scaffold.cpu_seconds(scaffold.descendants(server.pid))
    machine_before, _ = scaffold.machine_cpu()
    reports = {code: pipe.recv() for code, pipe in pipes.items()}
    server_cpu = scaffold.cpu_seconds(scaffold.descendants(server.pid)) - server_before
    machine_busy = scaffold.machine_cpu()[0] - machine_before
    for proc in procs:
        proc.join()
    return {
        "wall": max(r["finished"] for r in reports.values()) - began,
        # The warm-up's answers are left out of the counts, not of the stored check.
        "statuses": Counter(status for r in reports.values() for _, status in r["answers"][1:]),
        "accepted": {(code, round_id) for code, r in reports.items()
                     for round_id, status in r["answers"] if status == 201},
        "latencies": sorted(x for r in reports.values() for x in r["latencies"]),
        "cpu": {"server": server_cpu, "clients": sum(r["cpu"] for r in reports.values()),
                "machine": machine_busy},
        "sample": next((r["sample"] for r in reports.values() if r["sample"]), b""),
    }


# ---- the report ---------------------------------------------------------------------------


def report(result: dict) -> list[str]:
    wall, lat, cpu, statuses = result["wall"], result["latencies"], result["cpu"], result["statuses"]
    requests = sum(statuses.values())
    errors = sum(n for status, n in statuses.items() if status >= 500)
    lines = [
        f"  answers by status: {dict(sorted(statuses.items()))} of {requests:,} requests in {wall:.1f} s"
        f" ({errors:,} 5xx)",
        f"  rounds stored: {statuses[201]:,}  ->  {statuses[201] / wall:,.1f} rounds/s",
        "  latency per request (ms): "
        + ", ".join(f"p{p} {percentile(lat, p) * 1000:.0f}" for p in (50, 90, 99))
        + f", max {lat[-1] * 1000 if lat else float('nan'):.0f}"
        + f", mean {statistics.fmean(lat) * 1000 if lat else float('nan'):.0f}",
    ]
    cores = os.cpu_count() or 1
    other = max(0.0, cpu["machine"] - cpu["server"] - cpu["clients"])
    lines.append(f"  CPU seconds over {wall:.1f} s x {cores} cores = {wall * cores:.1f} available:")
    for label, seconds in (("runserver (service)", cpu["server"]), ("bench clients", cpu["clients"]),
                           ("other work on machine", other)):
        lines.append(f"    {label:22} {seconds:7.1f} s  {seconds / wall * 100:5.0f}% of a core")
    if result["sample"]:
        lines.append(f"  first answer other than 201: {result['sample']!r}")
    return lines


def stored_check(accepted: set[tuple[str, str]]) -> list[str]:
    """The stored rounds against those answered 201: the same set, or what differs."""
    from django.db import connection

    from rounds.models import Round

    connection.close()
    stored = set(Round.objects.values_list("table__code", "round_id"))
    if stored == accepted:
        return [f"stored rounds = rounds answered 201: {len(stored):,}"]
    return [
        f"stored rounds {len(stored):,}, answered 201 {len(accepted):,}: MISMATCH "
        f"({len(stored - accepted)} stored unanswered, {len(accepted - stored)} answered unstored)"
    ]


def pragmas() -> str:
    """The journal mode and synchronous setting of a connection made as the server makes them."""
    from django.db import connection

    with connection.cursor() as cursor:
        mode = cursor.execute("PRAGMA journal_mode").fetchone()[0]
        synchronous = cursor.execute("PRAGMA synchronous").fetchone()[0]
    names = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
    return (f"journal_mode={mode}, synchronous={names.get(synchronous, synchronous)}; "
            f"OPTIONS {connection.settings_dict['OPTIONS']}")


# ---- the run ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--rounds", type=int, default=1500, help="rounds dealt per table")
    parser.add_argument("--options", default="", help="a query for DATABASE_URL: its options override the settings'")
    parser.add_argument(
        "--connect-each", action="store_true",
        help="a new connection for every post (runserver answers a kept-alive one about 40 ms late)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the SQLite file and the server's log")
    args = parser.parse_args(argv)

    print("bench.embedded_concurrency: tables posting at once to runserver on a SQLite file")
    folder = Path(tempfile.mkdtemp(prefix="table-audit-embedded-"))
    url = sqlite_url(folder / "table-audit.sqlite3", args.options)
    server = None
    try:
        migrate(url)
        scaffold.django_setup(url)
        for line in scaffold.machine_lines():
            print(line)
        print(f"sqlite {sqlite3.sqlite_version}: {pragmas()}")
        began = time.perf_counter()
        keys, bodies = floor_open(args.tables, args.rounds)
        print(f"{args.tables} tables ({', '.join(CONFIGS[n % 2] for n in range(1, 3))}, alternately); "
              f"dealt {sum(len(b) for b in bodies.values()):,} rounds in {time.perf_counter() - began:.1f} s")
        from django.db import connections

        connections.close_all()
        port = free_port()
        log = folder / "runserver.log"
        server = server_start(url, port, log)
        print(f"runserver on 127.0.0.1:{port}; log {log}")
        how = "a new connection for each post" if args.connect_each else "one keep-alive connection each"
        print(f"\n{args.tables} tables posting single rounds at once ({how}), up to {args.seconds:.0f} s")
        result = phase(port, keys, bodies, args.seconds, args.connect_each, server)
        for line in report(result):
            print(line)
        server_stop(server)
        server = None
        logged = log.read_text(errors="replace")
        print(f"  server log: {logged.count('database unavailable')} 'database unavailable', "
              f"{logged.count('database is locked')} 'database is locked', "
              f"{logged.count('Traceback')} tracebacks")
        print()
        for line in [*stored_check(result["accepted"]), *checks(url)]:
            print(line)
    finally:
        if server is not None:
            server_stop(server)
        from django.db import connections

        connections.close_all()
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
