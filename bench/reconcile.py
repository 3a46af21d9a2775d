"""How long the nightly reconciliation of one gaming day takes, and how much memory it needs.

    .venv/bin/python bench/reconcile.py [--rounds 1000000] [--tables 100] [--workers 2] [--keep]

1. Creates a throwaway PostgreSQL database and migrates it.
2. Generates ``--rounds`` rounds of one gaming day straight into it (COPY, not
   the API), in parallel: dealt from shuffled decks, played by a simple
   strategy, settled by the engine (so the stored verdicts are today's), with
   a few dealer mistakes and void rounds; every fifth table feeds the shared
   progressive pool (its meter events in order). Every round gets its
   ``round.stored`` audit event, hash-chained as the service writes them.
3. Starts a real Celery worker with ``--workers`` processes on a Redis
   queue of its own, sends the nightly task for that day, and times it from
   sending to the report becoming current.
4. Prints the time, the per-part timings, and the peak RSS of every worker
   process (VmHWM), then drops the database (unless ``--keep``).

Generation is not part of the timing. Environment: ``BENCH_DATABASE_URL``
(the server, default ``postgres://postgres@127.0.0.1:5432/postgres``),
``BENCH_BROKER_URL`` (default ``redis://127.0.0.1:6379/14``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DAY = date(2026, 11, 28)
SERVER = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
BROKER = os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/14")
PLAYERS = 5000
DEALER_ERROR_RATE = 0.02
VOID_RATE = 0.002
COPY_BATCH = 5000


def database_url(name: str) -> str:
    parts = urlsplit(SERVER)
    return urlunsplit(parts._replace(path=f"/{name}"))


def psql(url: str):
    import psycopg

    return psycopg.connect(url, autocommit=True)


# ---- the database -----------------------------------------------------------------------


def create_database(name: str) -> str:
    with psql(SERVER) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = database_url(name)
    env = os.environ | {"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings"}
    env.pop("CELERY_BROKER_URL", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--verbosity", "0"],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
    )
    return url


def drop_database(name: str) -> None:
    with psql(SERVER) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def copy_columns(conn, table: str, provided: list[str]) -> tuple[list[str], list]:
    """``provided`` plus every NOT NULL column without a default, with an empty filler.

    Other engineers add columns; a bench that names only what it knows keeps working.
    """
    rows = conn.execute(
        "SELECT column_name, is_nullable, column_default, data_type, is_identity "
        "FROM information_schema.columns WHERE table_name = %s", [table],
    ).fetchall()
    extra, fillers = [], []
    for column, nullable, default, data_type, identity in rows:
        if column in provided or nullable == "YES" or default is not None or identity == "YES":
            continue
        filler = {"boolean": False, "jsonb": "null"}.get(data_type, "")
        if data_type in ("integer", "bigint", "smallint", "numeric"):
            filler = 0
        elif data_type.startswith("timestamp"):
            filler = datetime.now(UTC)
        extra.append(column)
        fillers.append(filler)
    return provided + extra, fillers


# ---- dealing a day ---------------------------------------------------------------------


@dataclass(frozen=True)
class TableSpec:
    pk: int
    code: str
    index: int
    config_version_id: int
    pool_version_id: int | None


@dataclass(frozen=True)
class Job:
    tables: tuple[TableSpec, ...]  # one table, or every table of the pool (dealt in time order)
    rounds_per_table: int
    first_pk: int
    seed: int
    url: str
    start: datetime
    end: datetime
    pool_id: int | None
    audit_path: str


ROUND_COLUMNS = [
    "id", "table_id", "round_id", "dealt_at", "gaming_day", "dealer", "void", "board",
    "dealer_cards", "status", "dealer_hand", "dealer_qualifies", "config_version_id",
    "pool_version_id", "meter_before", "meter_after", "record", "record_hash", "received_at",
]
KEY_COLUMNS = ["id", "table_id", "round_id", "gaming_day"]
SEAT_COLUMNS = [
    "round_id", "gaming_day", "seat", "player", "hole", "ante", "blind", "trips", "play", "progressive",
    "progressive_lit", "decision", "hand", "settled_ante", "settled_blind", "settled_play",
    "settled_trips", "settled_progressive", "paid_reported", "paid_ante", "paid_blind",
    "paid_play", "paid_trips", "paid_progressive",
]
FINDING_COLUMNS = [
    "round_id", "code", "informational", "seat", "bet", "expected", "claimed", "detail", "state",
    "created_at",
]
EVENT_COLUMNS = [
    "pool_id", "seq", "kind", "amount", "delta", "overflow_delta", "reserve_delta", "meter_after",
    "overflow_after", "reserve_after", "round_id", "seat", "actor_name", "reason", "created_at",
]
METER_SIGN = {"contribution": 1, "award": -1, "reseed": 1}


def deal_job(job: Job) -> tuple[int, int, int]:
    """Deal, judge and COPY one job's rounds; write their audit facts for the chain."""
    import django

    django.setup()
    from game import judge_round
    from game.cards import cards_text
    from game.evaluator import PAIR, category_name, category_of, evaluate
    from game.progressive import Meters
    from game.record import round_from_wire
    from game.rules import BETS
    from rounds.models import TableConfigVersion
    from progressive.models import PoolVersion

    rng = random.Random(job.seed)
    versions = {t.config_version_id for t in job.tables}
    rules = {pk: TableConfigVersion.objects.get(pk=pk).rules() for pk in versions}
    unit = {pk: TableConfigVersion.objects.get(pk=pk).unit for pk in versions}
    pool_rules = meters = None
    pool_version_id = job.tables[0].pool_version_id
    if pool_version_id:
        version = PoolVersion.objects.select_related("pool").get(pk=pool_version_id)
        pool_rules, meters = version.rules(), Meters(version.pool.meter)
    from django.db import connections

    connections.close_all()

    # Every table's rounds spread evenly over the day; a pool's tables interleaved in time.
    span = (job.end - job.start).total_seconds()
    schedule = sorted(
        (job.start + timedelta(seconds=span * (i + rng.random()) / job.rounds_per_table), t.index, i)
        for t in job.tables for i in range(job.rounds_per_table)
    )
    by_index = {t.index: t for t in job.tables}
    seq = 1  # the pool's opening reseed is event 1
    pk = job.first_pk
    counts = [0, 0, 0]

    def decide(hole, board):
        # Loose and random, not ``game.strategy``: the day's rounds should settle every way a table's do.
        if category_of(evaluate(list(hole) + board[:3])) >= PAIR and rng.random() < 0.9:
            return "preflop_4x" if max(c >> 2 for c in hole) >= 9 else "flop_2x"
        if max(c >> 2 for c in hole) >= 11 and rng.random() < 0.7:
            return "preflop_4x"
        if category_of(evaluate(list(hole) + board)) >= PAIR:
            return "river_1x"
        return "fold" if rng.random() < 0.85 else "river_1x"

    with psql(job.url) as conn, open(job.audit_path, "w") as audit:
        round_cols, round_fill = copy_columns(conn, "rounds_round", ROUND_COLUMNS)
        seat_cols, seat_fill = copy_columns(conn, "rounds_seat", SEAT_COLUMNS)
        finding_cols, finding_fill = copy_columns(conn, "rounds_finding", FINDING_COLUMNS)
        event_cols, event_fill = copy_columns(conn, "progressive_meterevent", EVENT_COLUMNS)
        buffers = {"key": [], "round": [], "seat": [], "finding": [], "event": []}

        def flush():
            with conn.transaction():
                for name, table, cols in (
                    ("key", "rounds_roundkey", KEY_COLUMNS), ("round", "rounds_round", round_cols), ("seat", "rounds_seat", seat_cols),
                    ("finding", "rounds_finding", finding_cols),
                    ("event", "progressive_meterevent", event_cols),
                ):
                    if not buffers[name]:
                        continue
                    with conn.cursor().copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as copy:
                        for row in buffers[name]:
                            copy.write_row(row)
                    buffers[name].clear()

        for dealt_at, index, number in schedule:
            table = by_index[index]
            version = table.config_version_id
            seats_taken = sorted(rng.sample(range(1, 8), rng.randint(1, 6)))
            deck = rng.sample(range(52), 7 + 2 * len(seats_taken))
            board, dealer_cards = deck[:5], deck[5:7]
            void = rng.random() < VOID_RATE
            hour = int((dealt_at - job.start).total_seconds() // 1800)
            wire_seats = []
            for i, seat in enumerate(seats_taken):
                hole = deck[7 + 2 * i: 9 + 2 * i]
                ante = unit[version] * rng.choice((1, 1, 1, 2, 2, 4, 10))
                decision = decide(hole, board)
                multiple = {"preflop_4x": 4, "flop_2x": 2, "river_1x": 1, "fold": 0}[decision]
                lit = pool_rules is not None and rng.random() < 0.5
                wire_seats.append({
                    "seat": seat,
                    "player": f"P-{rng.randrange(PLAYERS):05d}" if rng.random() < 0.7 else None,
                    "hole": cards_text(hole),
                    "ante": str(ante), "blind": str(ante),
                    "trips": str(unit[version] * rng.choice((1, 2))) if rng.random() < 0.4 else "0",
                    "progressive": str(pool_rules.wager) if lit else "0",
                    "progressive_lit": lit,
                    "decision": decision, "play": str(ante * multiple),
                    "paid": None,
                })
            record = {
                "table": table.code, "round": f"{DAY:%Y%m%d}-{number:06d}",
                "dealt_at": dealt_at.isoformat(), "dealer": f"D{(index * 7 + hour) % 300:03d}",
                "void": void, "board": cards_text(board), "dealer_cards": cards_text(dealer_cards),
                "seats": wire_seats,
            }
            before = meters if table.pool_version_id else None
            pool = pool_rules if table.pool_version_id else None
            verdict = judge_round(round_from_wire(record), rules[version], pool, before)
            by_seat = {s.seat: s for s in verdict.seats}
            for wire in wire_seats:
                wire["paid"] = {bet: str(by_seat[wire["seat"]].settled[bet]) for bet in BETS}
            if not void and rng.random() < DEALER_ERROR_RATE:
                wrong = rng.choice(wire_seats)
                wrong["paid"]["blind"] = str(Decimal(wrong["paid"]["blind"]) + Decimal(wrong["blind"]))
            verdict = judge_round(round_from_wire(record), rules[version], pool, before)
            by_seat = {s.seat: s for s in verdict.seats}
            if pool is not None and verdict.meters_after is not None:
                meters = verdict.meters_after
            digest = hashlib.sha256(
                json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
            ).hexdigest()
            stored_at = dealt_at + timedelta(seconds=1)

            buffers["key"].append([pk, table.pk, record["round"], DAY])
            buffers["round"].append([
                pk, table.pk, record["round"], dealt_at, DAY, record["dealer"], void,
                "".join(record["board"]), "".join(record["dealer_cards"]), verdict.status,
                category_name(verdict.dealer_hand) if verdict.dealer_hand is not None else "",
                verdict.dealer_qualifies, version, table.pool_version_id,
                before.meter if before else None,
                verdict.meters_after.meter if (pool and verdict.meters_after) else None,
                json.dumps(record), digest, stored_at, *round_fill,
            ])
            for wire in wire_seats:
                judged = by_seat[wire["seat"]]
                buffers["seat"].append([
                    pk, DAY, wire["seat"], wire["player"] or "", "".join(wire["hole"]),
                    wire["ante"], wire["blind"], wire["trips"], wire["play"], wire["progressive"],
                    wire["progressive_lit"], wire["decision"],
                    category_name(judged.hand) if judged.hand is not None else "",
                    *(judged.settled[b] for b in BETS),
                    True, *(wire["paid"][b] for b in BETS), *seat_fill,
                ])
            for f in verdict.findings:
                buffers["finding"].append([
                    pk, f.code, f.informational, f.seat, f.bet or "", f.expected, f.claimed,
                    f.detail, "open", stored_at, *finding_fill,
                ])
            previous = before
            for event in verdict.events:
                seq += 1
                delta = METER_SIGN.get(event.kind, 0) * event.amount
                buffers["event"].append([
                    job.pool_id, seq, event.kind, event.amount, delta,
                    event.overflow - previous.overflow, event.reserve - previous.reserve,
                    event.meter, event.overflow, event.reserve, pk, event.seat, "", "", stored_at,
                    *event_fill,
                ])
                previous = Meters(event.meter, event.overflow, event.reserve)
            audit.write(json.dumps([pk, stored_at.isoformat(), table.code, record["round"],
                                    verdict.status, digest, sorted({f.code for f in verdict.findings})]) + "\n")
            counts[0] += 1
            counts[1] += len(wire_seats)
            counts[2] += len(verdict.events)
            pk += 1
            if len(buffers["round"]) >= COPY_BATCH:
                flush()
        flush()
        if job.pool_id:
            conn.execute(
                "UPDATE progressive_pool SET meter = %s, overflow = %s, reserve = %s, last_event_seq = %s "
                "WHERE id = %s", [meters.meter, meters.overflow, meters.reserve, seq, job.pool_id],
            )
    return tuple(counts)


def chain_audit_events(url: str, audit_paths: list[str]) -> int:
    """Every round's ``round.stored`` event, hash-chained in one order, as the service writes them."""
    from trail.chain import event_hash

    written = 0
    with psql(url) as conn:
        head = conn.execute("SELECT coalesce(max(seq), 0), "
                            "coalesce((SELECT hash FROM audit_auditevent ORDER BY seq DESC LIMIT 1), %s) "
                            "FROM audit_auditevent", ["0" * 64]).fetchone()
        seq, prev = head
        columns = ["seq", "at", "actor_kind", "actor_id", "actor_name", "action", "object_type",
                   "object_id", "object_repr", "before", "after", "request_id", "prev_hash", "hash"]
        for path in audit_paths:
            with open(path) as lines, conn.transaction():
                with conn.cursor().copy(f"COPY audit_auditevent ({', '.join(columns)}) FROM STDIN") as copy:
                    for line in lines:
                        pk, at, code, round_id, status, digest, codes = json.loads(line)
                        seq += 1
                        fields = {
                            "seq": seq, "at": datetime.fromisoformat(at), "actor_kind": "table",
                            "actor_id": code, "actor_name": code, "action": "round.stored",
                            "object_type": "rounds.round", "object_id": str(pk),
                            "object_repr": f"{code}/{round_id}", "before": None,
                            "after": {"status": status, "record_hash": digest, "findings": codes},
                            "request_id": "", "prev_hash": prev,
                        }
                        digest_ = event_hash(fields)
                        copy.write_row([
                            seq, fields["at"], "table", code, code, "round.stored", "rounds.round",
                            str(pk), fields["object_repr"], None, json.dumps(fields["after"]), "",
                            prev, digest_,
                        ])
                        prev = digest_
                        written += 1
        conn.execute(
            "INSERT INTO audit_chainhead (id, seq, hash) VALUES (1, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash", [seq, prev],
        )
        conn.execute("SELECT setval(pg_get_serial_sequence('rounds_round', 'id'), "
                     "(SELECT max(id) FROM rounds_round))")
        conn.execute("ANALYZE")
    return written


# ---- the run ------------------------------------------------------------------------------


def generate(url: str, rounds: int, tables: int, processes: int, workdir: Path) -> dict:
    import django

    django.setup()
    from audit.reconciliation.config import reconciliation_settings
    from infra.gaming_day import gaming_day_window
    from progressive.models import PoolVersion
    from rounds.models import Table, TableConfig, TableConfigVersion
    from django.db import connections

    clock = reconciliation_settings()
    from rounds.partitions import partitions_make

    partitions_make([DAY])  # the rows go straight into the day's partition
    start, end = gaming_day_window(DAY, time_zone=clock.time_zone, cutoff_hour=clock.cutoff_hour)
    se = TableConfig.objects.get(name="se-50kr")
    us = TableConfig.objects.get(name="us-30k")
    se_version = TableConfigVersion.objects.filter(config=se).order_by("-version").first()
    us_version = TableConfigVersion.objects.filter(config=us).order_by("-version").first()
    pool_version = PoolVersion.objects.filter(pool=us_version.pool).order_by("-version").first()
    specs = []
    for index in range(tables):
        linked = index % 5 == 4
        code = f"{'U' if linked else 'S'}{index:03d}"
        table = Table.objects.create(code=code, config=us if linked else se)
        specs.append(TableSpec(
            table.pk, code, index, (us_version if linked else se_version).pk,
            pool_version.pk if linked else None,
        ))
    connections.close_all()

    per_table = max(1, rounds // tables)
    solo = [s for s in specs if s.pool_version_id is None]
    pooled = tuple(s for s in specs if s.pool_version_id is not None)
    jobs, next_pk = [], 1
    groups = ([pooled] if pooled else []) + [(s,) for s in solo]
    for number, group in enumerate(groups):
        jobs.append(Job(
            tables=group, rounds_per_table=per_table, first_pk=next_pk, seed=1000 + number, url=url,
            start=start, end=end, pool_id=pool_version.pool_id if group[0].pool_version_id else None,
            audit_path=str(workdir / f"audit-{number:04d}.jsonl"),
        ))
        next_pk += per_table * len(group)
    began = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(processes) as workers:
        counts = workers.map(deal_job, jobs, chunksize=1)
    chained = chain_audit_events(url, [job.audit_path for job in jobs])
    return {
        "rounds": sum(c[0] for c in counts), "seats": sum(c[1] for c in counts),
        "meter_events": sum(c[2] for c in counts), "audit_events": chained,
        "tables": tables, "seconds": time.perf_counter() - began,
    }


def peak_rss(pgid: int) -> dict[int, int]:
    """VmHWM (peak resident set, KiB) of every live process in the process group."""
    peaks = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != pgid:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks[int(entry.name)] = int(line.split()[1])
        except (OSError, ProcessLookupError):
            continue
    return peaks


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used so far (its own, not its children's)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def backend_pids(name: str) -> list[int]:
    with psql(SERVER) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [name]
        ).fetchall()
    return [pid for (pid,) in rows]


def reconcile(url: str, workers: int, log: Path, timeout: float) -> dict:
    from django.db import connection

    from audit.models import ReconciliationPart, ReconciliationReport
    from casino.celery import app

    queue = f"bench-reconcile-{uuid.uuid4().hex[:8]}"
    env = os.environ | {
        "DATABASE_URL": url, "CELERY_BROKER_URL": BROKER, "CELERY_TASK_DEFAULT_QUEUE": queue,
        "DJANGO_SETTINGS_MODULE": "casino.settings", "LOG_LEVEL": "WARNING",
    }
    command = [str(Path(sys.executable).with_name("celery")), "-A", "casino", "worker",
               "--pool", "prefork", "--concurrency", str(workers), "--queues", queue,
               "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("wb") as out:
        worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while b" ready." not in log.read_bytes():
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        app.conf.update(broker_url=BROKER, task_always_eager=False, task_default_queue=queue)
        began = time.perf_counter()
        app.send_task("audit.reconcile_day", kwargs={"day": str(DAY), "requested_by": "bench"},
                      queue=queue)
        peaks: dict[int, int] = {}
        cpu: dict[int, float] = {}  # the most CPU each worker process and database backend was seen to use
        database = urlsplit(url).path.lstrip("/")
        report = None
        while time.perf_counter() - began < timeout:
            peaks |= peak_rss(worker.pid)
            for pid in [*peaks, *(-p for p in backend_pids(database))]:
                cpu[pid] = max(cpu.get(pid, 0.0), cpu_seconds(abs(pid)))
            report = ReconciliationReport.objects.filter(day_from=DAY).exclude(
                status=ReconciliationReport.Status.RUNNING).first()
            if report is not None:
                break
            if worker.poll() is not None:
                raise RuntimeError(f"the worker died:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)
            connection.close()
        elapsed = time.perf_counter() - began
        peaks |= peak_rss(worker.pid)
        if report is None:
            raise RuntimeError(f"no report after {timeout:.0f}s")
        parts = list(ReconciliationPart.objects.filter(report=report).values_list(
            "kind", "key", "started_at", "finished_at"))
    finally:
        try:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=20)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        import redis

        broker = redis.Redis.from_url(BROKER)
        for key in broker.scan_iter(match=f"*{queue}*"):
            broker.delete(key)
    durations = {(k, key): (f - s).total_seconds() for k, key, s, f in parts if s and f}
    tables = [d for (k, _), d in durations.items() if k == "table"]
    return {
        "seconds": elapsed, "status": report.status, "rounds": report.rounds, "drift": report.drift,
        "chain_ok": report.chain_ok, "flags": report.flags,
        "chain_parts": len([1 for (k, _) in durations if k == "chain"]),
        "chain_seconds": sum(d for (k, _), d in durations.items() if k == "chain"),
        "table_parts": len(tables), "table_part_max": max(tables, default=0),
        "table_part_sum": sum(tables),
        "pools_balanced": all(p.get("balanced") for p in (report.figures or {}).get("pools", {}).values()),
        "peak_rss_mib": {pid: kib / 1024 for pid, kib in sorted(peaks.items())},
        "cpu_workers": sum(v for pid, v in cpu.items() if pid > 0),
        "cpu_database": sum(v for pid, v in cpu.items() if pid < 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (prefork)")
    parser.add_argument("--generators", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--reuse", metavar="DATABASE",
                        help="reconcile a database an earlier --keep run left (implies --keep)")
    args = parser.parse_args()

    os.environ["DJANGO_SETTINGS_MODULE"] = "casino.settings"
    os.environ.pop("CELERY_BROKER_URL", None)
    if args.reuse:
        name, args.keep = args.reuse, True
        url = os.environ["DATABASE_URL"] = database_url(name)
        with psql(url) as conn:
            conn.execute("DELETE FROM audit_variancefinding; DELETE FROM audit_reconciliationpart; "
                         "DELETE FROM audit_reportband; DELETE FROM audit_reportdealer; DELETE FROM audit_reportflag; "
                         "DELETE FROM audit_reconciliationreport")
    else:
        name = f"ta_bench_reconcile_{os.getpid()}"
        print(f"database {name}: migrating", flush=True)
        url = os.environ["DATABASE_URL"] = create_database(name)
    try:
        with tempfile.TemporaryDirectory() as workdir:
            if not args.reuse:
                made = generate(url, args.rounds, args.tables, args.generators, Path(workdir))
                print(f"generated {made['rounds']:,} rounds ({made['seats']:,} seats, "
                      f"{made['meter_events']:,} meter events, {made['audit_events']:,} audit events) "
                      f"on {made['tables']} tables in {made['seconds']:.1f}s", flush=True)
            else:
                import django

                django.setup()
            result = reconcile(url, args.workers, Path(workdir) / "worker.log", args.timeout)
        rss = result["peak_rss_mib"]
        print(f"reconciled {result['rounds']:,} rounds with {args.workers} workers in "
              f"{result['seconds']:.1f}s ({result['rounds'] / result['seconds']:,.0f} rounds/s); "
              f"report {result['status']}, drift {result['drift']}, chain "
              f"{'intact' if result['chain_ok'] else 'BROKEN'}, pools "
              f"{'balanced' if result['pools_balanced'] else 'NOT BALANCED'}, flags {result['flags']}")
        print(f"parts: {result['table_parts']} tables, slowest {result['table_part_max']:.1f}s, "
              f"sum {result['table_part_sum']:.1f}s; audit chain {result['chain_parts']} segment(s), "
              f"{result['chain_seconds']:.1f}s")
        print("peak RSS (MiB): " + ", ".join(f"{mib:.0f}" for mib in rss.values())
              + f"  (largest {max(rss.values(), default=0):.0f})")
        busy = result["cpu_workers"] + result["cpu_database"]
        print(f"CPU used: workers {result['cpu_workers']:.1f}s, PostgreSQL {result['cpu_database']:.1f}s "
              f"(sampled); on {os.cpu_count()} otherwise idle cores that is at least "
              f"{busy / (os.cpu_count() or 1):.1f}s of wall time")
    finally:
        if args.keep:
            print(f"kept database {name} ({url})")
        else:
            drop_database(name)


if __name__ == "__main__":
    main()
