"""The nightly leak test's cost as history grows: one night's ``day_findings_raise`` after 30 and after 90 days.

    .venv/bin/python -m bench.leak_nightly                          # this checkout, about ten minutes
    .venv/bin/python -m bench.leak_nightly --against /tmp/before    # git worktree add /tmp/before <commit>

Each day, ``--tables`` tables deal ``--rounds`` rounds of six seats; the seats
are drawn each day from ``--players`` regulars, so most players have played
most days before (the night's hardest case: a regular's whole history). The
rounds are simulated and scored as the service scores them once (seeded),
then stored as every day's ``SeatScore`` rows under that day's names: only
the leak test's cost is measured, not scoring. A checkout that keeps the
tests' state runs every night before the timed one as the nightly would, so
the timed night is an ordinary one; one that does not reads the whole
history each night. The timed night is run ``--repeat`` times (a rerun of
the same day does the same work), A and B in turns, each in its own
database, with persistent connections (``DB_POOL=1``) and the statistics as
the load left them (no ANALYZE). Printed: wall and CPU seconds of the night,
and CPU per stored seat of the day and per round.

``--against DIR`` copies this file into DIR's ``bench/`` (a throwaway
worktree) and runs it there as A.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from bench.scaffold import database_create, database_drop

FIRST = date(2025, 1, 1)
SEATS = 6


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    if args.step:
        return _step(args)
    here = Path(__file__).resolve().parents[1]
    trees = {"B": here}
    if args.against:
        other = Path(args.against).resolve()
        shutil.copy(Path(__file__), other / "bench" / Path(__file__).name)
        trees = {"A": other, "B": here}
    # Each checkout's step migrates its own database: the code before must not meet columns it never wrote.
    databases = {name: database_create(f"bench_leak_nightly_{name.lower()}", migrated=False) for name in trees}
    urls = {name: url for name, (_, url) in databases.items()}
    common = ["--tables", str(args.tables), "--rounds", str(args.rounds), "--players", str(args.players)]
    print(f"{args.tables} tables x {args.rounds} rounds a day, {SEATS} seats, {args.players} regulars; "
          f"A: {trees.get('A', '-')}, B: {trees['B']}")
    built = 0
    try:
        for history in args.history:
            for name, tree in trees.items():
                _run(tree, urls[name], ["build", "--from", str(built), "--through", str(history), *common])
            built = history + 1
            nights: dict[str, list[dict]] = {name: [] for name in trees}
            for _ in range(args.repeat):
                for name, tree in trees.items():
                    nights[name].append(_run(tree, urls[name], ["night", "--day", str(history), *common]))
            print(f"\nthe night after {history} days of history (medians of {args.repeat}, in turns):")
            for name, runs in nights.items():
                wall = statistics.median(r["wall"] for r in runs)
                cpu = statistics.median(r["cpu"] for r in runs)
                seats, rounds = runs[0]["seats"], runs[0]["rounds"]
                print(f"  {name}: {wall:7.2f} s wall, {cpu:7.2f} s CPU (this process; the database's apart), "
                      f"{1000 * cpu / seats:.3f} ms CPU a seat, {1000 * cpu / rounds:.3f} ms a round "
                      f"({seats} seats, {rounds} rounds); walls {', '.join(f'{r['wall']:.2f}' for r in runs)}")
    finally:
        for database, _ in databases.values():
            database_drop(database)
    return 0


def _run(tree: Path, url: str, step: list[str]) -> dict:
    env = os.environ | {"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings", "DB_POOL": "1",
                        "LOG_LEVEL": "WARNING"}
    done = subprocess.run([str(tree / ".venv/bin/python"), "-m", "bench.leak_nightly", "--step", *step],
                          cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"{tree}: {' '.join(step)} failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _step(args) -> int:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if args.step == "build":
        _build(args)
        print(json.dumps({}))
        return 0
    from audit.protection.raising import day_findings_raise
    from audit.models import SeatScore

    day = FIRST + timedelta(days=args.day)
    seats = SeatScore.objects.filter(gaming_day=day).count()
    wall, cpu = time.perf_counter(), time.process_time()
    day_findings_raise(day=day)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"wall": wall, "cpu": cpu, "seats": seats, "rounds": seats // SEATS}))
    return 0


def _template(args) -> list[list[tuple[int, str, list, dict, dict]]]:
    """Each table's day: (round, template seat name, decisions, seen and partners as stored) per seat."""
    from audit.protection.scores import decisions_json
    from game.protection import players as pl
    from game.protection.flop_table import shipped_table as shipped_flops
    from game.protection.preflop import shipped_table
    from game.protection.values import PayTable
    from tests.game.protection.styles import basic_strategy
    from tests.game.engine_rules import SE_50KR

    pays, preflop, flops = PayTable.of(SE_50KR), shipped_table(), shipped_flops()
    tables = []
    for t in range(args.tables):
        players = [basic_strategy(f"T{t}S{s}", pays, preflop, flops) for s in range(SEATS)]
        dealt = pl.deal_rounds(players, args.rounds, seed=1000 + t)
        scored = pl.scored_seats(dealt, pays, preflop, flops=flops, rounds_a_day=args.rounds)
        tables.append([
            (seat.key[0], seat.player, decisions_json(seat.score),
             seat.score.seen.as_json() if seat.score.seen is not None else {},
             {name: [list(step) for step in steps] for name, steps in getattr(seat, "partners", {}).items()})
            for seat in scored
        ])
    return tables


def _renamed(decisions: list[dict], names: dict[str, str]) -> list[dict]:
    prefix = "companion:"
    return [
        {**d, "informed": {(prefix + names[k[len(prefix):]] if k.startswith(prefix) else k): v
                           for k, v in d["informed"].items()}}
        for d in decisions
    ]


def _build(args) -> None:
    """Store days ``--from``..``--through`` and, where the checkout keeps the tests' state, run every
    night before ``--through`` as the nightly would."""
    from django.utils import timezone

    from audit import models
    from audit.models import SeatScore
    from audit.protection.raising import day_findings_raise
    from rounds.models import Table
    from rounds.services import table_register
    from trail.services import SYSTEM

    tables = []
    for t in range(args.tables):
        code = f"B{t:02d}"
        table = Table.objects.filter(code=code).first()
        tables.append(table or table_register(code=code, config_name="se-50kr", actor=SYSTEM).table)
    template = _template(args)
    pool = [f"P-{n:04d}" for n in range(args.players)]
    keeps_state = hasattr(models, "LeakTestState")
    keeps_partners = hasattr(SeatScore, "partners")  # a checkout that reads the pair both ways
    for d in range(args.start, args.through + 1):
        day = FIRST + timedelta(days=d)
        rng = random.Random(d)
        drawn = rng.sample(pool, args.tables * SEATS)
        start = timezone.make_aware(datetime.combine(day, datetime.min.time()) + timedelta(hours=18))
        rows = []
        for t, seats in enumerate(template):
            names = {f"T{t}S{s}": drawn[t * SEATS + s] for s in range(SEATS)}
            for round_number, player, decisions, seen, partners in seats:
                rows.append(SeatScore(
                    round_id=(d * args.tables + t) * args.rounds + round_number, gaming_day=day, table=tables[t],
                    dealt_at=start + timedelta(seconds=30 * round_number), seat=int(player[-1]) + 1,
                    player=names[player], dealer=f"D-{(d + t) % 7}",
                    companions=sorted(n for k, n in names.items() if k != player), currency="SEK",
                    ante=Decimal("50.00"), decision="fold", scored=True, ev_lost=Decimal(0),
                    decisions=_renamed(decisions, names), seen=seen,
                    **({"partners": {names[k]: v for k, v in partners.items()}} if keeps_partners else {}),
                ))
        SeatScore.objects.bulk_create(rows, batch_size=2000)
        if keeps_state and d < args.through:
            day_findings_raise(day=day)


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m bench.leak_nightly", description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=60, help="rounds a table deals a day")
    parser.add_argument("--players", type=int, default=80, help="the regulars the seats are drawn from")
    parser.add_argument("--history", default="30,90", type=lambda text: [int(n) for n in text.split(",")],
                        help="days of history before each timed night, e.g. 30,90")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", default="", help="another checkout, timed as A")
    parser.add_argument("--step", choices=("build", "night"), help=argparse.SUPPRESS)
    parser.add_argument("--from", dest="start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--through", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--day", type=int, default=0, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
