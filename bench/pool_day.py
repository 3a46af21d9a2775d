"""The pool part of one night's report over a year of ledger: read from the mark of the night before,
against read from the ledger's first event, A/B in one run.

1. Creates a throwaway database (``bench.scaffold``) and registers one
   ``us-30k`` table, which opens the ``us-progressive`` pool; its opening
   reseed is moved to before the history, as a pool opened a year ago.
2. Writes ``--days`` gaming days of ledger in SQL, in the order a casino
   stores them: ``--events`` contributions a day, each of a round of its day
   (a round key), every event's meter the one before's plus its delta, and
   the pool's row moved to the last one. Then ``VACUUM ANALYZE``.
3. Reports the day before the last (``report_run``: no mark before it, so it
   reads every event), which leaves the mark the last day starts from.
4. Times the last day's pool part (``pool_ledger_figures``) both ways, in
   turns, ``--runs`` each: wall time, this process's CPU and the database
   backend's CPU, and the events each read.
5. Times ``verify_audit``'s pool check from the position an anchor kept at
   the start of that day (``pool_ledger_check_since``) and from the first
   event (``pool_ledger_check``, as ``--full``), in turns.

It asserts nothing: it prints figures (goal: the night's pool part follows
the events of the day and since, plus one segment of the walk in turn, not
the history).

    .venv/bin/python -m bench.pool_day                  # 365 days of 15,000 events
    .venv/bin/python -m bench.pool_day --days 30 --events 2000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import timedelta

from bench import scaffold


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--events", type=int, default=15_000, help="ledger events a day")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="leave the database behind")
    args = parser.parse_args(argv)

    name, url = scaffold.database_create("bench_pool_day")
    try:
        scaffold.django_setup(url)
        print("\n".join(scaffold.machine_lines(url)))
        started = time.perf_counter()
        last_day = _history(days=args.days, per_day=args.events)
        print(f"wrote {args.days} days of {args.events:,} events in SQL in {time.perf_counter() - started:.1f} s")
        measure(day=last_day, runs=args.runs)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            scaffold.database_drop(name)
        else:
            print(f"kept: {url}")


def _history(*, days: int, per_day: int):
    """The ledger of ``days`` gaming days ending yesterday; the last of them."""
    from django.db import connection, transaction
    from django.utils import timezone

    from audit.reconciliation.config import reconciliation_settings
    from trail.services import SYSTEM
    from infra.gaming_day import gaming_day_of
    from progressive.models import Pool
    from rounds.models import Table
    from rounds.partitions import partitions_make
    from rounds.services import table_register

    table_register(code="T01", config_name="us-30k", actor=SYSTEM)
    table = Table.objects.get(code="T01")
    pool = Pool.objects.get(code="us-progressive")
    clock = reconciliation_settings()
    today = gaming_day_of(timezone.now(), time_zone=clock.time_zone, cutoff_hour=clock.cutoff_hour)
    last_day = today - timedelta(days=1)
    first_day = last_day - timedelta(days=days - 1)
    partitions_make(first_day + timedelta(days=n) for n in range(days))
    with transaction.atomic(), connection.cursor() as cursor:
        # Rows written straight in SQL, as the service would have: a throwaway database may
        # skip the append-only and ledger triggers for them.
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("UPDATE progressive_meterevent SET created_at = %s WHERE pool_id = %s",
                       [timezone.now() - timedelta(days=days + 2), pool.pk])
        cursor.execute("""
            CREATE TEMP TABLE history ON COMMIT DROP AS
            SELECT nextval(pg_get_serial_sequence('rounds_round', 'id')) AS id, d, n,
                   (%(first)s::date + d) AS gaming_day,
                   (%(first)s::date + d)::timestamp AT TIME ZONE 'UTC' + interval '12 hours'
                       + n * interval '2 seconds' AS at
            FROM generate_series(0, %(days)s - 1) AS d CROSS JOIN generate_series(1, %(per_day)s) AS n
            ORDER BY d, n""", {"first": first_day, "days": days, "per_day": per_day})
        cursor.execute(
            "INSERT INTO rounds_roundkey (id, table_id, round_id, gaming_day) "
            "SELECT id, %s, 'h-' || id, gaming_day FROM history", [table.pk])
        cursor.execute("""
            INSERT INTO progressive_meterevent (pool_id, seq, kind, amount, delta, overflow_delta,
                reserve_delta, meter_after, overflow_after, reserve_after, round_id, seat, actor_id,
                actor_name, reason, created_at)
            SELECT %(pool)s, 1 + row_number() OVER (ORDER BY id), 'contribution', 1.00, 1.00, 0, 0,
                   %(meter)s + row_number() OVER (ORDER BY id), 0, 0, id, 1, NULL, '', '', at
            FROM history""", {"pool": pool.pk, "meter": pool.meter})
        cursor.execute(
            "UPDATE progressive_pool SET meter = meter + %s, last_event_seq = last_event_seq + %s WHERE id = %s",
            [days * per_day, days * per_day, pool.pk])
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return last_day


def _backend_cpu() -> float:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    return scaffold.cpu_seconds([pid])


def measure(*, day, runs: int) -> None:
    from audit.reconciliation.config import reconciliation_settings
    from audit.reconciliation.pool_ledger import pool_ledger_figures, pool_mark_reported
    from audit.reconciliation.selectors import window_of
    from audit.reconciliation.services import report_run
    from progressive.models import MeterEvent, Pool

    pool = Pool.objects.get(code="us-progressive")
    print(f"the ledger: {MeterEvent.objects.filter(pool=pool).count():,} events; the night: {day}")
    started = time.perf_counter()
    report_run(day_from=day - timedelta(days=1))
    print(f"the report of the day before, every event read: {time.perf_counter() - started:.2f} s")
    reported_closing, mark = pool_mark_reported(pool_code=pool.code, day=day - timedelta(days=1))
    start, end = window_of(day_from=day, day_to=day, clock=reconciliation_settings())
    span = {"pool": pool, "day_from": day, "day_to": day, "start": start, "end": end,
            "reported_closing": reported_closing}
    ways = {"from the first event": None, "from the mark": mark}
    figures: dict[str, list[tuple[float, float, float]]] = {way: [] for way in ways}
    results = {}
    pool_ledger_figures(**span, mark=mark)  # warm the cache as a nightly run finds it
    for _ in range(runs):
        for way, kept in ways.items():
            backend, cpu, wall = _backend_cpu(), time.process_time(), time.perf_counter()
            results[way] = pool_ledger_figures(**span, mark=kept)
            figures[way].append((time.perf_counter() - wall, time.process_time() - cpu, _backend_cpu() - backend))
    whole, marked = results["from the first event"], results["from the mark"]
    same = {k: v for k, v in whole.items() if k not in ("checks", "read")} == \
        {k: v for k, v in marked.items() if k not in ("checks", "read")}
    print(f"the same figures both ways: {same}; balanced: {whole['balanced']} and {marked['balanced']}")
    print(f"{'the pool part of the night (median of ' + str(runs) + ')':<52} {'wall ms':>9} {'CPU ms':>8} "
          f"{'db CPU ms':>10}  events read")
    for way in ways:
        wall, cpu, db = (statistics.median(f[i] for f in figures[way]) * 1000 for i in range(3))
        read = results[way]["read"]
        top = results[way]["mark"]["top"]
        turn = read["turn"]
        walked = f" + the turn {turn[0]:,}..{turn[1]:,}" if turn else ""
        print(f"  {way:<50} {wall:>9.1f} {cpu:>8.1f} {db:>10.1f}  "
              f"{top - read['events_from'] + 1:,} from {read['events_from']:,}{walked}")
    _verify_pools(pool=pool, day=day, runs=runs)
    sys.stdout.flush()


def _verify_pools(*, pool, day, runs: int) -> None:
    """``verify_audit``'s pool check from the position an anchor kept the night before, against
    from the first event (``--full``), in turns."""
    from progressive.models import MeterEvent
    from progressive.selectors import pool_ledger_check, pool_ledger_check_since

    kept = (MeterEvent.objects.filter(pool=pool, created_at__lt=_day_start(day))
            .order_by("-seq").values("seq", "meter_after", "overflow_after", "reserve_after")[0])
    position = {name: value if name == "seq" else str(value) for name, value in kept.items()}
    ways = {"from the anchor's kept position": lambda: pool_ledger_check_since(pool=pool, position=position),
            "from the first event (--full)": lambda: pool_ledger_check(pool=pool)}
    spent: dict[str, list[float]] = {way: [] for way in ways}
    walked = {}
    for _ in range(max(1, runs // 2)):
        for way, check in ways.items():
            started = time.perf_counter()
            result = check()
            spent[way].append(time.perf_counter() - started)
            assert result.ok, result
            walked[way] = result.events
    print(f"{'verify_audit: the pool check (median)':<52} {'wall ms':>9}  events walked")
    for way in ways:
        print(f"  {way:<50} {statistics.median(spent[way]) * 1000:>9.1f}  {walked[way]:,}")


def _day_start(day):
    from audit.reconciliation.config import reconciliation_settings
    from audit.reconciliation.selectors import window_of

    return window_of(day_from=day, day_to=day, clock=reconciliation_settings())[0]


if __name__ == "__main__":
    main()
