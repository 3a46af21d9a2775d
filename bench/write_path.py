"""The write path of this tree against another revision's, A/B in one run.

    .venv/bin/python -m bench.write_path                  # against HEAD, about two minutes
    .venv/bin/python -m bench.write_path --vs f569e0c     # against any revision
    .venv/bin/python -m bench.write_path --quick

The other revision is checked out in a temporary git worktree (the same
virtualenv runs both). Each side gets a throwaway PostgreSQL database
migrated by its own migrations and a ``us-30k`` table (every round feeds the
shared progressive pool, the costliest path). Then, in turns (old, new, new,
old, ...), a child process of each side stores freshly dealt rounds through
the services the API calls: single posts (``ingest_round``, one transaction
each, the round writer off) and batches (``ingest_rounds``, 100 a
transaction). Each child prints the CPU seconds of its own process
(``time.process_time``: the web worker's share, not PostgreSQL's) and the
wall time; the run prints the median per side: CPU per round and rounds per
second. Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from bench import scaffold

ROOT = scaffold.ROOT

CHILD = r"""
import json, os, random, sys, time
from datetime import datetime, timedelta, timezone
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
import django
django.setup()
from rounds.models import Table, TableConfigVersion
from rounds.services import Received, ingest_round, ingest_rounds, table_register
from rounds.simulation import simulate_rounds
try:
    from rounds.wire.serializers import RoundRecordSerializer
    from trail.services import SYSTEM
except ImportError:  # a revision from before the re-housing (issue 29)
    from rounds.api.serializers import RoundRecordSerializer
    from audit.services import SYSTEM

prefix, count, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
code = "B" + prefix[-6:]
table_register(code=code, config_name="us-30k", actor=SYSTEM)
table = Table.objects.get(code=code)
version = TableConfigVersion.objects.filter(config=table.config).order_by("-version").first()
pool = version.pool.versions.order_by("-version").first().rules()
records = []
for n, wire in enumerate(simulate_rounds(table=code, rules=version.rules(), pool=pool, rng=random.Random(7),
                                         start=datetime(2026, 11, 20, 18, tzinfo=timezone.utc), count=2 * count)):
    wire["round"] = f"{prefix}-{n}"
    serializer = RoundRecordSerializer(data=wire)
    assert serializer.is_valid(), serializer.errors
    records.append((serializer.validated_data, json.dumps(wire).encode()))
single, batched = records[:count], records[count:]
cpu, wall = time.process_time(), time.perf_counter()
for record, body in single:
    ingest_round(table=table, record=record, body=body)
single_cpu, single_wall = time.process_time() - cpu, time.perf_counter() - wall
cpu, wall = time.process_time(), time.perf_counter()
for start in range(0, len(batched), batch):
    ingest_rounds(table=table, received=[Received(r, b) for r, b in batched[start:start + batch]])
batch_cpu, batch_wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({"single_cpu": single_cpu / count, "single_rps": count / single_wall,
                  "batch_cpu": batch_cpu / count, "batch_rps": count / batch_wall}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vs", default="HEAD", help="the revision to compare with (default HEAD)")
    parser.add_argument("--rounds", type=int, default=400, help="rounds per pass and way (single, batch)")
    parser.add_argument("--passes", type=int, default=6)
    parser.add_argument("--quick", action="store_true", help="100 rounds, 4 passes")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.passes = 100, 4
    for line in scaffold.machine_lines():
        print(line)
    with tempfile.TemporaryDirectory(prefix="ta-write-path-") as scratch:
        old = Path(scratch) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), args.vs], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sides = {f"old ({args.vs})": old, "new (this tree)": ROOT}
        databases = {}
        try:
            databases = {name: _database(tree) for name, tree in sides.items()}
            figures: dict[str, list[dict]] = {name: [] for name in sides}
            order = list(sides)
            for number in range(args.passes):
                for name in order if number % 2 == 0 else reversed(order):
                    figures[name].append(_pass(sides[name], databases[name][1], number, args.rounds))
            _report(figures, args.rounds)
        finally:
            for name, _ in databases.values():
                scaffold.database_drop(name)
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)


def _database(tree: Path) -> tuple[str, str]:
    name = f"bench_write_{uuid.uuid4().hex[:8]}"
    with scaffold._admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = scaffold.database_url(name)
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"], cwd=tree,
                   env=_env(url), check=True, stdout=subprocess.DEVNULL)
    return name, url


def _env(url: str) -> dict:
    env = os.environ | {"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings",
                        "INGEST_COMBINE": "0", "LOG_LEVEL": "WARNING"}
    env.pop("CELERY_BROKER_URL", None)
    return env


def _pass(tree: Path, url: str, number: int, rounds: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, f"p{number}x{uuid.uuid4().hex[:5]}", str(rounds), "100"],
                          cwd=tree, env=_env(url), check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _report(figures: dict[str, list[dict]], rounds: int) -> None:
    print(f"\n{rounds} rounds per pass and way, {len(next(iter(figures.values())))} passes a side, "
          "in turns; medians (CPU: the storing process's own)")
    print(f"{'side':<28} {'single CPU/round':>17} {'single rounds/s':>16} {'batch CPU/round':>16} "
          f"{'batch rounds/s':>15}")
    for name, passes in figures.items():
        median = {key: statistics.median(p[key] for p in passes) for key in passes[0]}
        print(f"{name:<28} {median['single_cpu'] * 1e3:>14.3f} ms {median['single_rps']:>16.0f} "
              f"{median['batch_cpu'] * 1e3:>13.3f} ms {median['batch_rps']:>15.0f}")
    # Each pass stores 2 × rounds more: a side whose database costs grow with what is stored
    # shows it here, pass after pass, where the medians hide it.
    print(f"\nrounds/s pass by pass (stored before the pass: 0, {2 * rounds:,}, {4 * rounds:,}, …), single / batch")
    for name, passes in figures.items():
        print(f"{name:<28} " + "  ".join(f"{p['single_rps']:.0f}/{p['batch_rps']:.0f}" for p in passes))


if __name__ == "__main__":
    main()
