"""Load with the books checked afterwards: table clients on two pools, against gunicorn.

    .venv/bin/python -m bench.load                       # 20 tables, 60 s, local PostgreSQL
    .venv/bin/python -m bench.load --seconds 10 --tables 6
    .venv/bin/python -m bench.load --server postgres://postgres@127.0.0.1:5433

1. Creates a throwaway database on ``--server`` (default: the local PostgreSQL
   on 5432) and migrates it. Nothing else on that server is touched.
2. Opens a second pool, ``bench-progressive`` (the shipped pool's numbers), and
   a second configuration, ``us-30k-b`` (us-30k's numbers), feeding it; then
   registers ``--tables`` tables, alternately on ``us-30k`` (pool
   ``us-progressive``) and ``us-30k-b``.
3. Starts gunicorn on a free port on 127.0.0.1 against that database.
4. Each table's client posts simulated rounds (``rounds.simulation``) over its
   own keep-alive connection, one after another, for ``--seconds``. A round
   whose answer is lost (connection error, 502-504, 500) is posted again, the
   same body, until it is answered: the service must count it once.
5. Stops, then checks the books in that database: every round a client was
   answered for is stored exactly once and nothing else is; each pool's ledger
   proves its meter row by row; each pool has exactly one contribution per lit
   wager of its stored rounds.
6. Prints the figures and drops the database (unless ``--keep``). Exit status
   1 when a check fails.

The machine this runs on runs the clients, gunicorn and PostgreSQL at once:
the figures are of all three sharing its cores.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
GUNICORN = str(Path(sys.executable).with_name("gunicorn"))
ROUNDS = "/api/v1/rounds/"
SECOND_POOL = "bench-progressive"
SECOND_CONFIG = "us-30k-b"
SHIPPED_FROM = datetime(2000, 1, 1, tzinfo=UTC)
RETRY_STATUSES = {500, 502, 503, 504, 429}


# ---- a throwaway database -----------------------------------------------------------

# The role the service runs as on a throwaway database, as in production: it owns nothing
# (trail.privileges). Made on the server once, without a password (the local servers trust
# their loopback); the database's owner is whoever ``server`` names.
APP_ROLE = "table_audit_app"


def app_role_ensure(server: str) -> None:
    """The application's role on ``server`` (``postgres://user@host:port``), made if missing."""
    import psycopg
    from psycopg import errors, sql

    with psycopg.connect(f"{server.rstrip('/')}/postgres", autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [APP_ROLE]).fetchone():
            return
        try:
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(APP_ROLE)))
        except (errors.DuplicateObject, errors.UniqueViolation):
            pass  # made by another run at the same moment


def as_app_role(database_url: str) -> str:
    """``database_url`` logged in as the application's role instead of the owner."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(database_url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{APP_ROLE}@{host}"))


@dataclass
class Throwaway:
    """A database of its own on ``server`` (``postgres://user@host:port``)."""

    server: str
    name: str = field(default_factory=lambda: f"ta_load_{os.getpid()}_{secrets.token_hex(3)}")

    @property
    def url(self) -> str:
        return f"{self.server.rstrip('/')}/{self.name}"

    def _admin(self):
        import psycopg

        return psycopg.connect(f"{self.server.rstrip('/')}/postgres", autocommit=True)

    def create(self, *, template: str | None = None) -> Throwaway:
        """Create it (a copy of ``template`` if given, else migrated from scratch)."""
        app_role_ensure(self.server)
        with self._admin() as admin:
            suffix = f' TEMPLATE "{template}"' if template else ""
            admin.execute(f'CREATE DATABASE "{self.name}"{suffix}')
        if template is None:
            django_run(self.url, "manage.py", "migrate", "--no-input", "-v", "0", module=False, as_owner=True)
        else:
            self._sequences_logged()
        return self

    def _sequences_logged(self) -> None:
        """Each sequence of a copied database written to its own WAL.

        A sequence logs its values 32 ahead and writes nothing until they are
        used up; a copy starts with the template's unlogged margin, so after a
        crash its sequences would go back and hand out ids its rows already
        hold. ``setval`` to where each stands logs it at once.
        """
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            names = [name for (name,) in connection.execute(
                "SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences")]
            for name in names:
                connection.execute(
                    f"SELECT setval('{name}', last_value, is_called) FROM {name}")

    def drop(self) -> None:
        with self._admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def django_run(database_url: str, *args: str, stdin: str | None = None, module: bool = True,
               env: dict | None = None, as_owner: bool = False) -> str:
    """Run ``python -m bench.load ARGS`` (or ``python ARGS``) with Django on ``database_url``,
    as the application's role (as the owner, who also grants that role, if ``as_owner``)."""
    command = [PYTHON, "-m", "bench.load", *args] if module else [PYTHON, *args]
    done = subprocess.run(
        command, cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, **service_env(database_url, as_owner=as_owner), **(env or {})},
    )
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def service_env(database_url: str, *, as_owner: bool = False) -> dict:
    """The service's settings on ``database_url`` (the owner's), logged in as the application's
    role unless ``as_owner``."""
    return {
        "DATABASE_URL": database_url if as_owner else as_app_role(database_url),
        "DATABASE_APP_ROLE": APP_ROLE,
        "DJANGO_SETTINGS_MODULE": "casino.settings",
        "DJANGO_ENV": "development",
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CELERY_BROKER_URL": "",
        "LOG_LEVEL": "WARNING",
    }


# ---- the floor: pools, configurations, tables ----------------------------------------


def floor_open(database_url: str, *, tables: int, prefix: str = "L") -> dict:
    """Open the second pool and configuration, register the tables; their keys and rules."""
    return json.loads(django_run(database_url, "floor", "--tables", str(tables), "--prefix", prefix))


def _floor(tables: int, prefix: str) -> dict:
    from trail.services import SYSTEM
    from progressive.models import Pool
    from progressive.services import pool_create
    from rounds.models import TableConfig
    from rounds.selectors import config_version_in_force, pool_version_in_force
    from rounds.services import table_register
    from rounds.services.configs import SNAPSHOT_FIELDS, config_version_create

    now = datetime.now(UTC)
    shipped = config_version_in_force(config=TableConfig.objects.get(name="us-30k"), at=now)
    shipped_pool = pool_version_in_force(pool=shipped.pool, at=now)
    pool = Pool.objects.filter(code=SECOND_POOL).first() or pool_create(
        code=SECOND_POOL, name="Bench progressive", currency=shipped_pool.pool.currency,
        wager=shipped_pool.wager, rate=shipped_pool.rate, reseed=shipped_pool.reseed,
        lines=shipped_pool.lines, actor=SYSTEM, effective_from=SHIPPED_FROM,
    )
    config, _ = TableConfig.objects.get_or_create(
        name=SECOND_CONFIG, defaults={"description": "us-30k's numbers, feeding bench-progressive"}
    )
    if not config.versions.exists():
        config_version_create(
            config=config, effective_from=SHIPPED_FROM, actor=SYSTEM, pool=pool,
            **{name: getattr(shipped, name) for name in SNAPSHOT_FIELDS},
        )
    registered = []
    for n in range(1, tables + 1):
        name = "us-30k" if n % 2 else SECOND_CONFIG
        issued = table_register(code=f"{prefix}{n:02d}", config_name=name, actor=SYSTEM)
        registered.append({"code": issued.table.code, "config": name, "key": issued.key})
    return {
        "tables": registered,
        "rules": {name: _plain(getattr(shipped, name)) for name in SNAPSHOT_FIELDS},
        "pool": {name: _plain(getattr(shipped_pool, name))
                 for name in ("wager", "rate", "reseed", "ceiling", "reserve_rate", "lines")},
    }


def _plain(value):
    return str(value) if isinstance(value, Decimal) else value


def engine_rules(floor: dict):
    """The floor's configuration and pool as the engine (and the simulator) takes them."""
    from game.evaluator import CATEGORY_INDEX
    from game.rules import PoolRules, TableRules, pay_line, pay_table

    r, p = floor["rules"], floor["pool"]
    rules = TableRules(
        currency=r["currency"], minor_unit=Decimal(r["minor_unit"]).normalize(), unit=Decimal(r["unit"]),
        ante_min=Decimal(r["ante_min"]), ante_max=Decimal(r["ante_max"]),
        trips_min=Decimal(r["trips_min"]), trips_max=Decimal(r["trips_max"]),
        blind_pays=pay_table(r["blind_pays"]), trips_pays=pay_table(r["trips_pays"]),
        aggregate_limit=Decimal(r["aggregate_limit"]) if r["aggregate_limit"] else None,
        dealer_qualifier=CATEGORY_INDEX[r["dealer_qualifier"]],
        one_hand_per_player=r["one_hand_per_player"],
    )
    pool = PoolRules(
        currency=r["currency"], minor_unit=Decimal("0.01"), wager=Decimal(p["wager"]),
        rate=Decimal(p["rate"]), reseed=Decimal(p["reseed"]),
        lines=tuple(pay_line(line) for line in p["lines"]),
        ceiling=Decimal(p["ceiling"]) if p["ceiling"] else None,
        reserve_rate=Decimal(p["reserve_rate"]),
    )
    return rules, pool


# ---- gunicorn ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Service:
    """gunicorn serving ``casino.wsgi`` on 127.0.0.1 against ``database_url``."""

    def __init__(self, database_url: str, *, workers: int = 2, threads: int = 4, env: dict | None = None):
        self.port = free_port()
        self.log = Path(tempfile.mkstemp(prefix=f"ta-gunicorn-{self.port}-", suffix=".log")[1])
        command = [
            GUNICORN, "casino.wsgi", "--bind", f"127.0.0.1:{self.port}", "--workers", str(workers),
            "--worker-class", "gthread", "--threads", str(threads), "--timeout", "60",
            "--graceful-timeout", "5", "--log-level", "warning",
        ]
        self._log = open(self.log, "w")  # noqa: SIM115 - open for gunicorn's whole life, closed in stop()
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT,
            env={**os.environ, **service_env(database_url), **(env or {})},
        )
        self._wait_ready()

    @property
    def base(self) -> tuple[str, int]:
        return "127.0.0.1", self.port

    def _wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.log.read_text()[-3000:]
                self.stop()
                raise RuntimeError(f"gunicorn exited {self.process.returncode}:\n{log}")
            try:
                connection = http.client.HTTPConnection(*self.base, timeout=2)
                connection.request("GET", "/api/schema/")
                if connection.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("gunicorn did not answer within a minute")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        self.log.unlink(missing_ok=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# ---- a table's client --------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    body: dict
    attempts: int  # 1 when the first post was answered
    seconds: float  # from the first attempt to the answer
    transient: list[str]  # what the attempts before the answer got (statuses or errors)


class TableClient:
    """One table posting its rounds over a keep-alive connection, re-posting a lost one."""

    def __init__(self, address: tuple[str, int], code: str, key: str, *, timeout: float = 30):
        self.address, self.code, self.timeout = address, code, timeout
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.connection: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self.connection is None:
            self.connection = http.client.HTTPConnection(*self.address, timeout=self.timeout)
        return self.connection

    def _drop(self) -> None:
        if self.connection is not None:
            self.connection.close()
        self.connection = None

    def post(self, record: dict, *, give_up_after: float = 120, path: str = ROUNDS) -> Answer:
        body = json.dumps(record).encode()
        transient: list[str] = []
        started = time.monotonic()
        backoff = 0.05
        while True:
            try:
                connection = self._connection()
                connection.request("POST", path, body, self.headers)
                response = connection.getresponse()
                status, data = response.status, response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self._drop()
            except (OSError, http.client.HTTPException) as exc:
                self._drop()
                status, data = None, b""
                transient.append(type(exc).__name__)
            else:
                if status not in RETRY_STATUSES:
                    answer = json.loads(data) if data else {}
                    return Answer(status, answer, len(transient) + 1, time.monotonic() - started, transient)
                transient.append(str(status))
            if time.monotonic() - started > give_up_after:
                raise TimeoutError(f"{self.code}: round {record['round']} unanswered after {transient}")
            time.sleep(backoff)
            backoff = min(backoff * 2, 1.0)


# ---- the load ----------------------------------------------------------------------------------


@dataclass
class LoadResult:
    seconds: float
    accepted: list[tuple[str, str]] = field(default_factory=list)  # (table, round) answered 200/201
    statuses: Counter = field(default_factory=Counter)  # final answers
    transient: Counter = field(default_factory=Counter)  # what was retried
    latencies: list[float] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # answers that are not 200/201: a bug here


def load_run(address: tuple[str, int], floor: dict, *, seconds: float, seed: int = 2026) -> LoadResult:
    from rounds.simulation import TableSimulator

    rules, pool = engine_rules(floor)
    result = LoadResult(seconds=seconds)
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    start = datetime.now(timezone(timedelta(hours=1))) - timedelta(days=1)

    def table(index: int, spec: dict) -> None:
        client = TableClient(address, spec["code"], spec["key"])
        simulator = TableSimulator(
            table=spec["code"], rules=rules, pool=pool, rng=random.Random(seed + index), start=start,
            mean_gap=timedelta(seconds=30),
        )
        while time.monotonic() < stop_at:
            record = simulator.deal().record
            answer = client.post(record)
            with lock:
                result.statuses[answer.status] += 1
                result.transient.update(answer.transient)
                result.latencies.append(answer.seconds)
                if answer.status in (200, 201):
                    result.accepted.append((spec["code"], record["round"]))
                else:
                    result.refused.append(f"{spec['code']}/{record['round']}: {answer.status} {answer.body}")
        client._drop()

    threads = [threading.Thread(target=table, args=(i, spec)) for i, spec in enumerate(floor["tables"])]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds = time.monotonic() - began
    return result


# ---- the books ----------------------------------------------------------------------------------


def books_check(database_url: str, accepted: list[tuple[str, str]], tables: list[str]) -> dict:
    payload = json.dumps({"accepted": accepted, "tables": tables})
    return json.loads(django_run(database_url, "check", stdin=payload))


def _check(accepted: list[list[str]], tables: list[str]) -> dict:
    from progressive.models import MeterEvent, Pool
    from progressive.selectors import pool_ledger_check
    from rounds.models import Round, Seat, Submission

    stored = Counter(Round.objects.filter(table__code__in=tables).values_list("table__code", "round_id"))
    wanted = Counter(tuple(key) for key in accepted)
    pools = []
    for pool in Pool.objects.order_by("code"):
        check = pool_ledger_check(pool=pool)
        contributions = MeterEvent.objects.filter(pool=pool, kind=MeterEvent.Kind.CONTRIBUTION).count()
        lit = Seat.objects.filter(
            round__pool_version__pool=pool, round__void=False, progressive_lit=True, progressive__gt=0
        ).count()
        pools.append({
            "pool": pool.code, "meter": str(pool.meter), "events": check.events, "ledger_ok": check.ok,
            "problem": check.problem, "delta_sum": str(check.delta_sum),
            "contributions": contributions, "lit_wagers": lit,
            "awards": MeterEvent.objects.filter(pool=pool, kind__in=["award", "fixed_award"]).count(),
        })
    outcomes = Counter(
        Submission.objects.filter(table__code__in=tables).values_list("outcome", flat=True)
    )
    missing = sorted(set(wanted) - set(stored))
    unexpected = sorted(set(stored) - set(wanted))
    twice = sorted(key for key, n in stored.items() if n > 1)
    answered_twice = sorted(key for key, n in wanted.items() if n > 1)
    ok = not (missing or unexpected or twice or answered_twice) and all(
        p["ledger_ok"] and p["contributions"] == p["lit_wagers"] for p in pools
    )
    return {
        "ok": ok, "stored": sum(stored.values()), "answered": len(accepted),
        "missing": missing[:20], "unexpected": unexpected[:20], "stored_twice": twice[:20],
        "answered_twice": answered_twice[:20], "pools": pools, "submissions": dict(outcomes),
    }


# ---- the whole run ----------------------------------------------------------------------------------


def figures(result: LoadResult, books: dict) -> str:
    lat = sorted(result.latencies) or [0.0]
    q = statistics.quantiles(lat, n=100) if len(lat) > 1 else [lat[0]] * 99
    lines = [
        (f"{len(result.accepted):,} rounds answered in {result.seconds:.1f} s: "
         f"{len(result.accepted) / result.seconds:,.1f} rounds/s"),
        (f"latency per round (incl. retries): p50 {q[49] * 1000:.0f} ms, p95 {q[94] * 1000:.0f} ms, "
         f"p99 {q[98] * 1000:.0f} ms, max {lat[-1] * 1000:.0f} ms"),
        f"answers: {dict(sorted(result.statuses.items()))}; retried: {dict(result.transient) or 'none'}",
        (f"books: {books['stored']:,} stored for {books['answered']:,} answered; "
         f"missing {len(books['missing'])}, unexpected {len(books['unexpected'])}, "
         f"stored twice {len(books['stored_twice'])}"),
    ]
    for p in books["pools"]:
        lines.append(
            f"pool {p['pool']}: meter {p['meter']} = sum of {p['events']:,} events {p['delta_sum']} "
            f"(ledger {'proves it' if p['ledger_ok'] else 'BROKEN: ' + p['problem']}); "
            f"{p['contributions']:,} contributions for {p['lit_wagers']:,} lit wagers; {p['awards']} awards"
        )
    lines.append("BOOKS OK" if books["ok"] and not result.refused else "BOOKS NOT OK")
    return "\n".join(lines)


def run(*, server: str, seconds: float, tables: int, workers: int, threads: int, keep: bool = False,
        template: str | None = None, out=print) -> tuple[LoadResult, dict]:
    database = Throwaway(server)
    out(f"database {database.name} on {server} ({'copied from ' + template if template else 'migrating'})")
    database.create(template=template)
    try:
        floor = floor_open(database.url, tables=tables)
        out(f"{tables} tables on us-progressive and {SECOND_POOL}; gunicorn {workers}×{threads} (gthread)")
        with Service(database.url, workers=workers, threads=threads) as service:
            result = load_run(service.base, floor, seconds=seconds)
        books = books_check(database.url, result.accepted, [t["code"] for t in floor["tables"]])
        out(figures(result, books))
        for refusal in result.refused[:10]:
            out(f"refused: {refusal}")
        return result, books
    finally:
        if keep:
            out(f"kept database {database.url}")
        else:
            database.drop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    parser.add_argument("--server", default=os.environ.get("LOAD_SERVER", "postgres://postgres@127.0.0.1:5432"))
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--keep", action="store_true", help="keep the throwaway database")
    floor = sub.add_parser("floor", help="(internal) open the floor in $DATABASE_URL")
    floor.add_argument("--tables", type=int, default=20)
    floor.add_argument("--prefix", default="L")
    sub.add_parser("check", help="(internal) check the books in $DATABASE_URL")
    args = parser.parse_args(argv)

    if args.command in ("floor", "check"):
        import django

        sys.path.insert(0, str(ROOT))
        django.setup()
        if args.command == "floor":
            print(json.dumps(_floor(args.tables, args.prefix)))
        else:
            given = json.loads(sys.stdin.read())
            print(json.dumps(_check(given["accepted"], given["tables"])))
        return 0

    result, books = run(server=args.server, seconds=args.seconds, tables=args.tables,
                        workers=args.workers, threads=args.threads, keep=args.keep)
    return 0 if books["ok"] and not result.refused else 1


if __name__ == "__main__":
    sys.exit(main())
