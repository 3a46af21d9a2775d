"""How long the report's admin page takes, and how heavy it is, for a busy day's report.

1. Creates a throwaway database and fills it as ``bench.tonight`` does (a day
   of ``--rounds`` rounds cloned in SQL), or takes ``--url`` (a database an
   earlier ``--keep`` run of this or of ``bench.tonight`` left).
2. Reports the busiest gaming day once (``report_run``), unless a complete
   report of it is there already.
3. Times ``GET`` of the report's page through Django's test client as a
   superuser: one call to warm the cache, then the median of ``--runs``, with
   the page's size, its statements and the size of each field of the page.

It asserts nothing: it prints figures (goal: under 300 ms and a page that
fits 1,366 pixels).
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

from bench import lists, scaffold


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="leave the database behind")
    parser.add_argument("--url", help="an existing database filled by an earlier --keep run")
    args = parser.parse_args(argv)

    name, url = (None, args.url) if args.url else scaffold.database_create("bench_report_page")
    try:
        scaffold.django_setup(url)
        print("\n".join(scaffold.machine_lines(url)))
        if not args.url:
            posted = lists.seed(tables=args.tables)
            counts = lists.clone(rounds=args.rounds, days=1)
            print(f"posted {posted} rounds, cloned: " + ", ".join(f"{n:,} {what}" for what, n in counts.items()))
        measure(runs=args.runs)
    finally:
        from django.db import connections

        connections.close_all()
        if name and not args.keep:
            scaffold.database_drop(name)
        elif name:
            print(f"kept: {url}")


def _chain_head_moved_to_the_clones() -> None:
    """``bench.lists.clone`` copies audit events without moving the chain's head past them; the report
    writes events of its own, so the head is moved to the last one (this database is the bench's)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("UPDATE audit_chainhead SET (seq, hash) = "
                       "(SELECT seq, hash FROM audit_auditevent ORDER BY seq DESC LIMIT 1)")


def measure(*, runs: int) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.db.models import Count
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    from audit.models import ReconciliationReport
    from audit.reconciliation.services import report_run
    from rounds.models import Round

    setup_test_environment()
    day = Round.objects.values("gaming_day").annotate(n=Count("id")).order_by("-n")[0]["gaming_day"]
    report = (ReconciliationReport.objects.filter(day_from=day, day_to=day, status="complete")
              .order_by("-pk").first())
    if report is None:
        _chain_head_moved_to_the_clones()
        started = time.perf_counter()
        report = report_run(day_from=day)
        print(f"reported {day} in {time.perf_counter() - started:.1f} s")
    user, _ = get_user_model().objects.get_or_create(
        username="bench-report", defaults={"is_staff": True, "is_superuser": True})
    client = Client()
    client.force_login(user)
    url = f"/admin/audit/reconciliationreport/{report.pk}/change/"
    page = client.get(url)
    times = []
    for _ in range(runs):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            page = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
    html = page.content.decode()
    print(f"{report}: {report.rounds:,} rounds")
    print(f"the report's page: median {statistics.median(times):.0f} ms, min {min(times):.0f} ms, "
          f"{len(page.content) / 1024:.0f} kB, {len(captured.captured_queries)} statements")
    parts = re.split(r'<div class="form-row field-([^" ]+)', html)
    sizes = sorted(((len(parts[i + 1]), parts[i]) for i in range(1, len(parts), 2)), reverse=True)
    print("heaviest fields: " + ", ".join(f"{field} {size / 1024:.0f} kB" for size, field in sizes[:6]))


if __name__ == "__main__":
    main()
