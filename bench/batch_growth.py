"""Whether a web worker's batches slow down as the books grow: each worker's batch time by thousands stored.

    .venv/bin/python -m bench.batch_growth                      # 50,000 rounds, about ten minutes
    .venv/bin/python -m bench.batch_growth --rounds 10000       # a quicker look
    .venv/bin/python -m bench.batch_growth --set DB_PREPARED_STATEMENTS=0

As production runs (issue 50): a fresh PostgreSQL database (autovacuum off on
this machine, so no statistics are gathered while it grows), gunicorn in
production settings with two workers, each on one persistent connection
(``DB_POOL=1``, a pool of one), a ``us-30k`` table (every seat feeds the
progressive pool, the costliest path). The table posts ``--batch`` rounds a
request, one request at a time, over two keep-alive connections each held by a
different worker (the worker is read off the server's socket with ``ss``), in
turns. Each worker's session plans its statements, and the triggers' queries,
while the books are nearly empty and keeps those plans: a plan that reads what
is stored makes its worker's batches slower the more there is.

Printed: each worker's median and slowest batch time and CPU a round (gunicorn's
processes and this database's PostgreSQL backends) for each thousand rounds
stored, and each worker's last five batches' median over its first five, and
the median of its batches in the last 5,000 rounds over the first 5,000
(steadier on a shared machine; each worker's first batch is left out: it
opens the connection). Nothing
here asserts a speed (docs/SCALING.md).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import re
import statistics
import subprocess
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone

from bench import scaffold
from bench.http_ingest import postgres_pids
from bench.load import Service, Throwaway, engine_rules, floor_open

SERVER = "postgres://postgres@127.0.0.1:5432"
PRODUCTION = {
    "DB_POOL": "1", "DB_POOL_MIN": "1", "DB_POOL_MAX": "1", "DJANGO_ENV": "production",
    "SECRET_KEY": "bench-" + "k" * 60, "TABLE_KEPT_BYTES_PER_HOUR": "0",
    "AUDIT_ANCHOR_PATH": "/tmp", "AUDIT_ANCHOR_KEY": "bench-anchor-" + "k" * 40,
    "PASSKEY_ORIGINS": "https://audit.example.com", "SECURE_SSL_REDIRECT": "0",  # plain HTTP on 127.0.0.1
}


def _worker_of(port: int, local_port: int) -> int | None:
    """The pid of the gunicorn worker holding the server's end of the client's connection."""
    shown = subprocess.run(["ss", "-tnpH", "state", "established", f"( sport = :{port} )"],
                           capture_output=True, text=True, check=False).stdout
    for line in shown.splitlines():
        if f":{local_port} " in line + " ":
            found = re.search(r"pid=(\d+)", line)
            return int(found.group(1)) if found else None
    return None


def _connections(address: tuple[str, int]) -> dict[int, http.client.HTTPConnection]:
    """Two keep-alive connections, each held by a different worker."""
    held: dict[int, http.client.HTTPConnection] = {}
    for _ in range(200):
        connection = http.client.HTTPConnection(*address, timeout=300)
        connection.request("GET", "/healthz")
        connection.getresponse().read()
        worker = _worker_of(address[1], connection.sock.getsockname()[1])
        if worker is None or worker in held:
            connection.close()
            continue
        held[worker] = connection
        if len(held) == 2:
            return held
    raise RuntimeError("could not reach two workers")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.batch_growth", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=50_000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--server", default=SERVER)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting of the service's beside production's (e.g. DB_PREPARED_STATEMENTS=0)")
    args = parser.parse_args(argv)
    for line in scaffold.machine_lines():
        print(line)
    database = Throwaway(args.server).create()
    try:
        floor = floor_open(database.url, tables=1, prefix="G")
        table = floor["tables"][0]
        rules, pool = engine_rules(floor)
        from rounds.simulation import TableSimulator

        start = datetime.now(timezone(timedelta(hours=1))) - timedelta(hours=30)
        simulator = TableSimulator(table=table["code"], rules=rules, pool=pool, rng=random.Random(50), start=start,
                                   mean_gap=timedelta(hours=29) / args.rounds)
        records = [simulator.deal().record for _ in range(args.rounds)]
        headers = {"Authorization": f"Bearer {table['key']}", "Content-Type": "application/json"}
        times: dict[int, list[tuple[int, float]]] = defaultdict(list)
        cpu: dict[int, list[float]] = defaultdict(list)
        settings = PRODUCTION | dict(pair.split("=", 1) for pair in args.set)
        with Service(database.url, workers=2, threads=1, env=settings) as service:
            workers = _connections(service.base)
            order = list(workers)
            pids: list[int] = []
            for n, first in enumerate(range(0, args.rounds, args.batch)):
                worker = order[n % 2]
                body = json.dumps({"rounds": records[first:first + args.batch]}).encode()
                used, began = scaffold.cpu_seconds(pids), time.perf_counter()
                workers[worker].request("POST", "/api/v1/rounds/batch", body, headers)
                answer = workers[worker].getresponse()
                body_of_answer = answer.read()
                took = time.perf_counter() - began
                if answer.status not in (200, 201, 207):
                    raise RuntimeError(f"batch at {first}: {answer.status} {body_of_answer[:300]!r}")
                if n < 2:  # each worker's connection is open once it has served: the service's processes
                    pids = scaffold.descendants(service.process.pid) + postgres_pids(database.url, database.name)[0]
                    continue
                times[worker].append((first, took))
                cpu[worker].append((scaffold.cpu_seconds(pids) - used) / min(args.batch, args.rounds - first))
        _report(times, cpu, args)
    finally:
        database.drop()
    return 0


def _report(times: dict[int, list[tuple[int, float]]], cpu: dict[int, list[float]], args) -> None:
    names = {worker: f"worker {'AB'[i]}" for i, worker in enumerate(times)}
    print(f"\n{args.rounds} rounds in batches of {args.batch}, one request at a time, two workers in turns")
    print(f"{'stored':>8}  " + "  ".join(f"{names[w]:>26}" for w in times))
    print(f"{'':>8}  " + "  ".join(f"{'median s':>8} {'slowest':>7} {'CPU ms/rd':>9}" for _ in times))
    for thousand in range(0, args.rounds, 1000):
        cells = []
        for worker, taken in times.items():
            inside = [(s, c) for (first, s), c in zip(taken, cpu[worker]) if thousand <= first < thousand + 1000]
            cells.append(f"{statistics.median(s for s, _ in inside):8.3f} {max(s for s, _ in inside):7.3f} "
                         f"{1000 * statistics.median(c for _, c in inside):9.2f}" if inside else f"{'':>26}")
        print(f"{thousand:>8}  " + "  ".join(cells))
    span = min(5000, args.rounds // 4)
    for worker, taken in times.items():
        seconds = [s for _, s in taken]
        first = [s for at, s in taken if at < span]
        last = [s for at, s in taken if at >= args.rounds - span]
        print(f"{names[worker]}: last five batches' median over its first five: "
              f"{statistics.median(seconds[-5:]) / statistics.median(seconds[:5]):.2f}; its batches' median in the "
              f"last {span:,} rounds over the first {span:,}: {statistics.median(last) / statistics.median(first):.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
