"""How long the tonight page (the admin's first page, ``audit.tonight``) takes over a day of 100,000 rounds.

1. Creates a throwaway database (``bench.scaffold``) and posts ``--tables``
   tables' few hundred rounds through the service, as ``bench.lists`` does
   (dealer errors often, so that every tile has rows).
2. Clones them in SQL into the gaming day before (``bench.lists.clone``), up to
   ``--rounds`` rounds: the "last gaming day" of a clock set to the posted
   day, and the current day its posted rounds.
3. Times ``tonight()`` alone and the whole page through Django's test client
   as a superuser: one call to warm the cache, then the median of ``--runs``,
   with the page's statements and its slowest one.

It asserts nothing: it prints figures (goal: the page well under a second).
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import timedelta
from unittest import mock

from bench import lists, scaffold


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--explain", action="store_true", help="the page's slowest statement's plan")
    parser.add_argument("--keep", action="store_true", help="leave the database behind")
    parser.add_argument("--url", help="an existing database filled by an earlier --keep run")
    args = parser.parse_args(argv)

    name, url = (None, args.url) if args.url else scaffold.database_create("bench_tonight")
    try:
        scaffold.django_setup(url)
        print("\n".join(scaffold.machine_lines(url)))
        if not args.url:
            started = time.perf_counter()
            posted = lists.seed(tables=args.tables)
            print(f"posted {posted} rounds through the service in {time.perf_counter() - started:.1f} s")
            started = time.perf_counter()
            counts = lists.clone(rounds=args.rounds, days=1)
            print(f"cloned in SQL into the day before in {time.perf_counter() - started:.1f} s: "
                  + ", ".join(f"{n:,} {what}" for what, n in counts.items()))
        measure(runs=args.runs, explain=args.explain)
    finally:
        from django.db import connections

        connections.close_all()
        if name and not args.keep:
            scaffold.database_drop(name)
        elif name:
            print(f"kept: {url}")


def measure(*, runs: int, explain: bool) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    from audit.tonight import tonight
    from rounds.models import Round

    setup_test_environment()
    # The clock as it read late on the posted day: the clones are its last gaming day.
    last_posted = Round.objects.order_by("-dealt_at").values_list("dealt_at", flat=True).first()
    now = last_posted + timedelta(minutes=30)
    figures = tonight(now=now)
    for day in figures.days:
        print(f"gaming day {day.day}: {sum(d.rounds for d in day.dealt):,} rounds, "
              f"{sum(f.count for f in day.findings):,} open findings, {len(day.dealers)} dealers listed, "
              f"{len(day.silent)} silent tables")

    user, _ = get_user_model().objects.get_or_create(
        username="bench-tonight", defaults={"is_staff": True, "is_superuser": True})
    client = Client()
    client.force_login(user)
    print(f"\n{'what':<24} {'median ms':>9} {'min ms':>7} {'queries':>7} {'slowest SQL ms':>14}")
    with mock.patch("audit.tonight.timezone.now", return_value=now):
        for label, call in (("tonight() alone", lambda: tonight(now=now)), ("the page, GET /admin/", lambda: client.get("/admin/"))):
            call()
            times, slowest = [], None
            for _ in range(runs):
                with CaptureQueriesContext(connection) as captured:
                    started = time.perf_counter()
                    call()
                    times.append((time.perf_counter() - started) * 1000)
                worst = max(captured.captured_queries, key=lambda q: float(q["time"]))
                if slowest is None or float(worst["time"]) > float(slowest["time"]):
                    slowest = worst
            print(f"{label:<24} {statistics.median(times):9.1f} {min(times):7.1f} "
                  f"{len(captured.captured_queries):7d} {float(slowest['time']) * 1000:14.1f}")
            if explain:
                for query in sorted(captured.captured_queries, key=lambda q: -float(q["time"]))[:6]:
                    print(f"    {float(query['time']) * 1000:8.1f} ms  {query['sql'][:160]}")
        if explain:
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {slowest['sql']}")
                print("    " + "\n    ".join(row for (row,) in cursor.fetchall()))
            print(f"    -- {slowest['sql'][:600]}")


if __name__ == "__main__":
    main()
