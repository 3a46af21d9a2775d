"""What the pool's row lock costs: rounds ingested per second, one shared pool vs a pool per table.

Run by hand: ``.venv/bin/python -m bench.progressive [--workers 1,2,4,8] [--rounds 40]``.

It creates a throwaway PostgreSQL database (``bench_progressive`` on
127.0.0.1, or ``--database-url``/``BENCH_DATABASE_URL``), migrates it, and for
each worker count N registers N tables twice over: all N on one shared pool,
then each on a pool of its own (the same us-30k numbers and the shipped pool's
pay table). Every worker posts its own table's rounds, each of them dealt at
random with five lit progressive wagers, through ``ingest_round`` (or the API
view with ``--path api``), in its own database connection. The database is
dropped at the end unless ``--keep`` (a given URL is never dropped).

Figures, never asserts: the numbers depend on the machine and on what else it
runs. Every ingest also appends to the audit chain, whose single head row is
locked by every writer, so the shared pool's lock is measured on top of that.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit, urlunsplit

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/bench_progressive"
RANKS, SUITS = "23456789TJQKA", "cdhs"
DECK = [rank + suit for rank in RANKS for suit in SUITS]
SEATS = (1, 2, 3, 5, 7)
WARMUP_ROUNDS = 3


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    url = args.database_url or os.environ.get("BENCH_DATABASE_URL") or DEFAULT_URL
    throwaway = not (args.database_url or os.environ.get("BENCH_DATABASE_URL"))
    if throwaway:
        _database_create(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        _machine_print(url)
        bench = Bench(path=args.path, rounds=args.rounds, seed=args.seed)
        print(f"\nrounds per worker: {args.rounds} (+{WARMUP_ROUNDS} warm-up), "
              f"{len(SEATS)} lit wagers each, path: {args.path}, workers are threads\n")
        print(f"{'workers':>7}  {'layout':<9} {'rounds':>6} {'seconds':>8} {'rounds/s':>9} "
              f"{'p50 ms':>7} {'p95 ms':>7}")
        results: dict[tuple[int, str], list[Run]] = {}
        # Repeats alternate the layouts, so a burst of load elsewhere on the
        # machine falls on both rather than on one; the summary takes medians.
        for repeat in range(args.repeat):
            for workers in args.workers:
                for layout in ("shared", "separate"):
                    run = bench.run(workers=workers, layout=layout)
                    results.setdefault((workers, layout), []).append(run)
                    print(f"{workers:>7}  {layout:<9} {run.rounds:>6} {run.seconds:>8.2f} "
                          f"{run.per_second:>9.1f} {run.p50_ms:>7.1f} {run.p95_ms:>7.1f}")
        print(f"\nshared pool vs a pool per table (median rounds/s of {args.repeat}):")
        for workers in args.workers:
            shared = statistics.median(r.per_second for r in results[(workers, "shared")])
            separate = statistics.median(r.per_second for r in results[(workers, "separate")])
            print(f"  {workers} workers: {shared:.1f} vs {separate:.1f} "
                  f"({100 * (shared / separate - 1):+.1f} % for sharing)")
        bench.verify()
    finally:
        if throwaway and not args.keep:
            from django.db import connections

            connections.close_all()
            _database_drop(url)
    return 0


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m bench.progressive", description=__doc__.split("\n")[0])
    parser.add_argument("--workers", default="1,2,4,8",
                        type=lambda text: [int(n) for n in text.split(",")], help="e.g. 1,2,4,8")
    parser.add_argument("--rounds", type=int, default=40, help="rounds each worker posts")
    parser.add_argument("--path", choices=("service", "api"), default="service",
                        help="ingest_round directly, or the whole API view")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case (medians are shown)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--database-url", default="", help="use this database as it is (never dropped)")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway database")
    return parser.parse_args(argv)


# ---- the database ----------------------------------------------------------------


def _maintenance(url: str):
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    return psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True), name


def _database_create(url: str) -> None:
    from psycopg import sql

    conn, name = _maintenance(url)
    with conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _database_drop(url: str) -> None:
    from psycopg import sql

    conn, name = _maintenance(url)
    with conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _machine_print(url: str) -> None:
    import django
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        pg_version = cursor.fetchone()[0].split(" on ")[0]
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{n:.2f}" for n in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    print("machine:", platform.node(), "|", platform.platform())
    print("cpu:", cpu, f"| {os.cpu_count()} logical cores | load average {load}")
    print("python:", sys.version.split()[0], "| django:", django.get_version(), "|", pg_version)
    print("database:", urlsplit(url)._replace(netloc=urlsplit(url).hostname or "").geturl())


# ---- the bench ----------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    rounds: int
    seconds: float
    latencies: list[float]

    @property
    def per_second(self) -> float:
        return self.rounds / self.seconds

    @property
    def p50_ms(self) -> float:
        return 1000 * statistics.median(self.latencies)

    @property
    def p95_ms(self) -> float:
        return 1000 * statistics.quantiles(self.latencies, n=20)[-1] if len(self.latencies) > 1 else self.p50_ms


class Bench:
    def __init__(self, *, path: str, rounds: int, seed: int):
        self.path, self.rounds, self.rng = path, rounds, random.Random(seed)
        self.runs = 0
        self.pools: list = []

    def run(self, *, workers: int, layout: str) -> Run:
        self.runs += 1
        tables = self._tables(workers, layout)
        records = {
            table.code: [self._deal(table.code, f"r{self.runs}-{n}") for n in range(WARMUP_ROUNDS + self.rounds)]
            for table, _ in tables
        }
        start = threading.Barrier(workers + 1)
        finished: list[float] = []
        latencies: list[float] = []
        errors: list[BaseException] = []

        def work(table, key):
            from django.db import connection

            prepare, post = self._poster(table, key)
            try:
                prepared = [prepare(record) for record in records[table.code]]
                for record in prepared[:WARMUP_ROUNDS]:
                    post(record)
                start.wait()
                mine = []
                for record in prepared[WARMUP_ROUNDS:]:
                    began = time.perf_counter()
                    post(record)
                    mine.append(time.perf_counter() - began)
                latencies.extend(mine)
                finished.append(time.perf_counter())
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                start.abort()
            finally:
                connection.close()

        threads = [threading.Thread(target=work, args=pair) for pair in tables]
        for thread in threads:
            thread.start()
        start.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        return Run(workers * self.rounds, max(finished) - began, latencies)

    def verify(self) -> None:
        """Every pool's ledger still proves its meter after all that."""
        from progressive.selectors import pool_ledger_check

        bad = [check for pool in self.pools if not (check := pool_ledger_check(pool=pool)).ok]
        print(f"\nledger check: {len(self.pools) - len(bad)} of {len(self.pools)} pools prove their meter"
              + "".join(f"\n  {check.pool}: {check.problem}" for check in bad))

    def _poster(self, table, key):
        if self.path == "api":
            from rest_framework.test import APIClient

            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

            def post(record):
                response = client.post("/api/v1/rounds/", record, format="json")
                if response.status_code != 201:
                    raise RuntimeError(f"{response.status_code}: {response.content[:300]!r}")
            return (lambda record: record), post

        import json

        from rounds.wire.serializers import RoundRecordSerializer
        from rounds.services import ingest_round

        def prepare(record):
            # The shape checks are the API's, not the lock's: done before the clock starts.
            serializer = RoundRecordSerializer(data=record)
            serializer.is_valid(raise_exception=True)
            return serializer.validated_data, json.dumps(record).encode()

        def post(prepared):
            record, body = prepared
            result = ingest_round(table=table, record=record, body=body)
            if result.outcome != "accepted":
                raise RuntimeError(f"round {record['round']}: {result.outcome}")
        return prepare, post

    def _tables(self, workers: int, layout: str):
        """``workers`` fresh tables: on one new shared pool, or each on a new pool of its own."""
        from trail.services import SYSTEM
        from rounds.services import table_register

        tag = f"b{self.runs}"
        if layout == "shared":
            config = self._config(f"{tag}-shared")
            configs = [config] * workers
        else:
            configs = [self._config(f"{tag}-own{i}") for i in range(workers)]
        issued = [
            table_register(code=f"{tag}-t{i}", config_name=configs[i].name, actor=SYSTEM)
            for i in range(workers)
        ]
        return [(key.table, key.key) for key in issued]

    def _config(self, name: str):
        """A table configuration with us-30k's numbers, linked to a new pool like us-progressive."""
        from trail.services import SYSTEM
        from progressive.models import Pool
        from progressive.services import pool_create
        from rounds.models import TableConfig, TableConfigVersion

        shipped = Pool.objects.get(code="us-progressive").versions.order_by("version").first()
        pool = pool_create(
            code=f"pool-{name}", currency="USD", wager=shipped.wager, rate=shipped.rate,
            reseed=shipped.reseed, lines=shipped.lines, actor=SYSTEM,
            effective_from=datetime(2000, 1, 1, tzinfo=timezone.utc),
        )
        self.pools.append(pool)
        us = TableConfigVersion.objects.filter(config__name="us-30k").order_by("version").first()
        config = TableConfig.objects.create(name=name)
        fields = {
            f.name: getattr(us, f.name) for f in TableConfigVersion._meta.concrete_fields
            if f.name not in {"id", "config", "pool", "created_at", "created_by"}
        }
        TableConfigVersion.objects.create(**fields, config=config, pool=pool)
        return config

    def _deal(self, table: str, round_id: str) -> dict:
        cards = self.rng.sample(DECK, 7 + 2 * len(SEATS))
        dealt = datetime(2026, 11, 29, 20, 0, tzinfo=timezone(timedelta(hours=1)))
        return {
            "table": table, "round": round_id, "dealt_at": dealt.isoformat(), "dealer": "D-BENCH",
            "void": False, "board": cards[:5], "dealer_cards": cards[5:7],
            "seats": [
                {"seat": seat, "hole": cards[7 + 2 * i: 9 + 2 * i], "ante": "25", "blind": "25",
                 "trips": "5", "decision": "preflop_4x", "play": "100", "progressive": "5",
                 "progressive_lit": True}
                for i, seat in enumerate(SEATS)
            ],
        }


if __name__ == "__main__":
    raise SystemExit(main())
