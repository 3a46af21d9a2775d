"""Peak memory of a worker that re-verifies or exports every round of a day: flat, whatever the count.

    .venv/bin/python -m bench.memory                              # 100,000 and 1,000,000 rounds, ~25 min
    .venv/bin/python -m bench.memory --sizes 20000,200000         # quicker
    .venv/bin/python -m bench.memory --sizes 1000000 --reuse bench_reverify_1a2b3c4d

For each size, a throwaway database is filled as ``bench.reverify`` fills it
(COPY, one gaming day), then each task runs in a fresh worker process:

- ``reverify``: every table's rounds judged again (the nightly reconciliation's table parts);
- ``export-rounds``: the rounds CSV (one row a seat), as ``/api/v1/exports/`` streams it;
- ``export-audit``: the audit log CSV of the day.

Printed for each: the rows it went through, its time, and its resident memory
after start-up and at its peak (VmHWM). The sizes side by side show whether
memory grows with the data: it must not.
"""

from __future__ import annotations

import argparse
import os
import time

from bench import scaffold
from bench.reverify import GOAL, generate, run_worker

TASKS = ("reverify", "export-rounds", "export-audit")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="rounds, comma-separated")
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--reuse", metavar="DATABASE",
                        help="measure this database (one size) instead of generating one")
    parser.add_argument("--keep", action="store_true", help="keep the databases")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    print("bench.memory: peak resident memory of a worker going through every round of a day")
    for line in scaffold.machine_lines():
        print(line)
    rows = []
    for size in sizes:
        made = not args.reuse
        if made:
            name, url = scaffold.database_create("bench_memory")
        else:
            name, url = args.reuse, scaffold.database_url(args.reuse)
        try:
            if made:
                began = time.perf_counter()
                counts = generate(url, size, args.tables)
                print(f"\n{counts['rounds']:,} rounds ({counts['seats']:,} seats, "
                      f"{counts['audit_events']:,} audit events) generated in "
                      f"{time.perf_counter() - began:.0f} s", flush=True)
            for task in TASKS:
                result = run_worker(task, url)
                count = result.get("rounds", result.get("rows"))
                rows.append((size, task, count, result))
                print(f"  {task:14} {count:>10,} {'rounds' if task == 'reverify' else 'rows':6} "
                      f"{result['wall']:7.1f} s  {count / result['wall']:9,.0f}/s   "
                      f"RSS after start-up {result['rss_at_start_kib'] / 1024:5.0f} MiB, "
                      f"peak {result['peak_rss_kib'] / 1024:5.0f} MiB"
                      + (f", drift {result['drift']}" if task == "reverify" else ""), flush=True)
        finally:
            if made and not args.keep:
                scaffold.database_drop(name)
            elif made:
                print(f"  kept database {name}")

    print("\npeak resident memory (MiB) by size:")
    print(f"  {'task':14} " + " ".join(f"{size:>12,}" for size in sizes))
    for task in TASKS:
        peaks = [r["peak_rss_kib"] / 1024 for size, t, _, r in rows if t == task]
        print(f"  {task:14} " + " ".join(f"{p:12.0f}" for p in peaks))
    reverify = [(c, r) for _, t, c, r in rows if t == "reverify"]
    if reverify:
        best = max(c / r["wall"] for c, r in reverify)
        print(f"re-verification, best of the sizes: {best:,.0f} rounds/s per worker "
              f"(goal >= {GOAL:,}: {'met' if best >= GOAL else 'NOT met'})")


if __name__ == "__main__":
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    main()
