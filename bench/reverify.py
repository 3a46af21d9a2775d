"""Re-verification of stored rounds: rounds per second per worker, and what the worker holds.

    .venv/bin/python -m bench.reverify                        # 100,000 rounds, about 2 minutes
    .venv/bin/python -m bench.reverify --rounds 1000000       # about 15 minutes
    .venv/bin/python -m bench.reverify --keep                 # keep the database for --reuse
    .venv/bin/python -m bench.reverify --reuse DATABASE

1. Creates a throwaway PostgreSQL database (``BENCH_DATABASE_URL`` names the
   server), migrates it, and fills one gaming day with ``--rounds`` rounds
   straight into the tables (COPY, with ``bench.reconcile``'s generator: dealt
   from shuffled decks, judged by the engine, a few dealer mistakes and void
   rounds, every fifth table on the shared progressive pool, every round's
   audit event chained).
2. Starts one fresh worker process, as a Celery worker of the nightly
   reconciliation would be, and re-verifies every table's rounds exactly as
   the reconciliation's table parts do: ``audit.reconciliation.selectors.
   stored_rounds`` streams each round with its stored seats, findings and
   meter events through a server-side cursor, and ``reverify`` judges it
   again with ``round_from_wire`` and the stored configuration and pool
   versions from the stored ``meter_before``, and compares.
3. Prints rounds per second of that one worker (wall clock and CPU), where
   its time went, the drift found (0 on freshly generated data), and its peak
   resident memory (VmHWM) after start-up and at the end: flat is the point.

Nothing is asserted; docs/SCALING.md keeps the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import scaffold

GOAL = 20_000  # rounds per second per worker


def generate(url: str, rounds: int, tables: int) -> dict:
    """``rounds`` rounds of ``bench.reconcile.DAY`` on ``tables`` tables, written with COPY.

    In a fresh interpreter: Django reads its database from the environment once.
    """
    done = subprocess.run(
        [sys.executable, "-m", "bench.reverify", "--generate", str(rounds), "--tables", str(tables),
         "--url", url],
        cwd=scaffold.ROOT, capture_output=True, text=True, check=False,
        env=os.environ | {"LOG_LEVEL": "WARNING"},
    )
    if done.returncode:
        raise RuntimeError(f"generating the rounds failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _generate_here(url: str, rounds: int, tables: int) -> dict:
    from bench import reconcile

    os.environ["DATABASE_URL"] = url
    os.environ["DJANGO_SETTINGS_MODULE"] = "casino.settings"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.pop("CELERY_BROKER_URL", None)
    with tempfile.TemporaryDirectory() as workdir:
        return reconcile.generate(url, rounds, tables, os.cpu_count() or 2, Path(workdir))


def worker(task: str, url: str) -> dict:
    """One task in this (fresh) process; its figures as a dict."""
    scaffold.django_setup(url)
    from django.db import connection

    from bench.reconcile import DAY
    from game.evaluator import fill_rank_table

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    fill_rank_table()  # as a Celery worker's parent does before forking (casino.celery)
    rss_at_start = scaffold.peak_rss_kib(os.getpid())
    began, cpu_began = time.perf_counter(), time.process_time()
    pg_began = scaffold.cpu_seconds([backend])
    machine_began = scaffold.machine_cpu()[0]
    figures = TASKS[task](DAY)
    cpu = time.process_time() - cpu_began
    database_cpu = scaffold.cpu_seconds([backend]) - pg_began
    figures.update(
        wall=time.perf_counter() - began,
        cpu=cpu,
        database_cpu=database_cpu,
        # Whatever else ran meanwhile: the machine is shared, and this is what to read the figures by.
        other_cpu=max(0.0, scaffold.machine_cpu()[0] - machine_began - cpu - database_cpu),
        rss_at_start_kib=rss_at_start,
        peak_rss_kib=scaffold.peak_rss_kib(os.getpid()),
        rss_now_kib=scaffold.rss_kib(os.getpid()),
    )
    return figures


def reverify_all(day) -> dict:
    from django.conf import settings

    from audit.reconciliation import selectors
    from audit.reconciliation.reverify import cached, reverify
    from progressive.models import PoolVersion
    from rounds.models import Table, TableConfigVersion

    table_rules = cached(lambda pk: TableConfigVersion.objects.get(pk=pk).rules())
    pool_rules = cached(lambda pk: PoolVersion.objects.select_related("pool").get(pk=pk).rules())
    rounds = drift = 0
    examples = []
    for table in Table.objects.order_by("code"):
        checked = reverify(
            selectors.stored_rounds(table_id=table.pk, day_from=day, day_to=day),
            table_rules=table_rules, pool_rules=pool_rules, table_code=table.code,
            clock_tolerance=settings.CLOCK_TOLERANCE,
        )
        rounds += checked.rounds
        drift += checked.drift
        examples += checked.examples[: 3 - len(examples)]
    return {"rounds": rounds, "drift": drift, "examples": examples}


def export_rounds(day) -> dict:
    return _export("round_rows", day)


def export_audit(day) -> dict:
    return _export("audit_rows", day)


def _export(rows: str, day) -> dict:
    """The CSV export as the API streams it, written to /dev/null."""
    from infra.exports import Period, csv_lines
    from rounds.exports import finding_rows, round_rows
    from trail.exports import audit_rows

    read = {"round_rows": round_rows, "finding_rows": finding_rows, "audit_rows": audit_rows}[rows]
    lines = 0
    with open(os.devnull, "w") as sink:
        for line in csv_lines(read(Period(day, day))):
            sink.write(line)
            lines += 1
    return {"rows": lines - 1}


TASKS = {"reverify": reverify_all, "export-rounds": export_rounds, "export-audit": export_audit}


def run_worker(task: str, url: str) -> dict:
    """``task`` in a fresh interpreter, so its peak memory is the task's own."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.reverify", "--worker", task, "--url", url],
        cwd=scaffold.ROOT, capture_output=True, text=True, check=False,
        env=os.environ | {"LOG_LEVEL": "WARNING"},
    )
    if done.returncode:
        raise RuntimeError(f"the {task} worker failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def database_for(args) -> tuple[str, str, bool]:
    """(name, url, made here) of the database to measure."""
    if args.reuse:
        return args.reuse, scaffold.database_url(args.reuse), False
    name, url = scaffold.database_create("bench_reverify")
    began = time.perf_counter()
    try:
        made = generate(url, args.rounds, args.tables)
    except BaseException:
        scaffold.database_drop(name)
        raise
    print(f"generated {made['rounds']:,} rounds ({made['seats']:,} seats, {made['meter_events']:,} "
          f"meter events, {made['audit_events']:,} audit events) on {made['tables']} tables "
          f"in {time.perf_counter() - began:.0f} s", flush=True)
    return name, url, True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument("--reuse", metavar="DATABASE", help="measure a database a --keep run left")
    parser.add_argument("--worker", choices=TASKS, help=argparse.SUPPRESS)
    parser.add_argument("--generate", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.url), default=str))
        return
    if args.generate:
        print(json.dumps(_generate_here(args.url, args.generate, args.tables), default=str))
        return

    print("bench.reverify: stored rounds judged again by one worker")
    name, url, made = database_for(args)
    try:
        for line in scaffold.machine_lines(url):
            print(line)
        result = run_worker("reverify", url)
        print(re_verification_lines(result))
    finally:
        if args.keep or not made:
            print(f"kept database {name}: {url}")
        else:
            scaffold.database_drop(name)


def re_verification_lines(result: dict) -> str:
    rounds, wall, cpu = result["rounds"], result["wall"], result["cpu"]
    lines = [
        f"re-verified {rounds:,} rounds in {wall:.1f} s: {rounds / wall:,.0f} rounds/s per worker "
        f"(wall clock; goal >= {GOAL:,}: {'met' if rounds / wall >= GOAL else 'NOT met'}), "
        f"{rounds / cpu:,.0f} rounds per CPU-second of the worker",
        f"  worker CPU {cpu:.1f} s ({cpu / rounds * 1e6:.0f} us/round), its PostgreSQL backend "
        f"{result['database_cpu']:.1f} s ({result['database_cpu'] / rounds * 1e6:.0f} us/round)",
        f"  other work on machine {result['other_cpu']:.1f} s ({result['other_cpu'] / wall:.2f} of a core)",
        f"  drift: {result['drift']} rounds" + (f", e.g. {result['examples'][:1]}" if result["drift"] else ""),
        f"  worker resident memory: {result['rss_at_start_kib'] / 1024:.0f} MiB after start-up, "
        f"peak {result['peak_rss_kib'] / 1024:.0f} MiB",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
