"""The service at the size of a year of a 40-table casino, each figure beside an empty database's.

1. Creates two throwaway databases (``bench.scaffold``). In each it registers
   ``--tables`` tables and posts their few dozen rounds each through the
   service (``bench.lists.seed``): that is all the *empty* database holds.
2. The *year* database is then filled in SQL up to ``--rounds`` rounds over
   ``--days`` gaming days before the posted one, a partition per month
   (``bench.lists.clone``): seats, findings, round keys, meter events, and for
   every round its kept body (submission) and its audit event. The cloned
   meter events go on from the pool's ledger (each one's meter after it the
   one before's plus its delta) and the pool's row is moved to the last one;
   the cloned audit events are chained in this process (each one's hash over
   its own content and the one before, ``trail.chain.event_hash``) and
   written with COPY, and the chain's head is moved to the last one. So the
   chain and the ledger verify, and the service goes on writing after them.
   Then ``VACUUM ANALYZE``.
3. On each database in turn, in a child process on the production settings
   (``DJANGO_ENV=production``, ``DB_POOL=1``; autovacuum as the server has it),
   it times, one call to warm up then the median of ``--runs``:
   - the night before's anchor written first (timed on its own: the
     first anchor walks the whole chain; the report's chain parts and the
     next anchor then walk only what came since);
   - the posted gaming day's game protection (``day_protect``, rolled back
     but for the last run) and its nightly reconciliation (``audit.reconcile_day``
     in eager Celery mode, a new version of the report each run);
   - every list of ``bench.lists`` (the API's and the admin's) and the admin's
     other lists, the tonight page (``GET /admin/``, the clock set late on
     the posted day) and the report's admin page, through Django's test
     client as a superuser;
   - the CSV exports (rounds, findings, the audit log) of the posted day and
     of its month, and the report's CSV;
   - the next anchor written (``manage.py audit_anchor``), then single posts and
     batch posts of a ``us-30k`` table through gunicorn (``gunicorn.conf.py``)
     on one keep-alive connection: wall time, the web workers' CPU and the
     database backends' CPU per round;
   - ``manage.py verify_audit`` after those posts (and ``--full`` when the
     command has it), each in a process of its own.
   A figure whose warm-up took longer than ``--long`` seconds is timed once more
   only, and one whose warm-up took four times that is the warm-up alone (its
   runs say which).
4. Prints each figure for both databases, their ratio and the goal, and the
   disk each month takes: ``pg_total_relation_size`` of every monthly
   partition, summed per month. Drops both databases unless ``--keep``.

It asserts nothing: it prints figures (goals: storing a round at the year's
size within 1.2x of empty; every admin page and list under 300 ms; a day's
reconciliation and scoring independent of the history, a ratio near 1;
``verify_audit`` following what was written since the last anchor, ``--full``
walking everything).

    .venv/bin/python -m bench.year --quick       # 200,000 rounds, 8 tables
    .venv/bin/python -m bench.year               # 5,000,000 rounds, 40 tables
    .venv/bin/python -m bench.year --keep        # then, after a change:
    .venv/bin/python -m bench.year --url postgres://…/bench_year_… --empty-url postgres://…/bench_year_empty_…
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from bench import scaffold

ROOT = scaffold.ROOT
POST_TABLE = "Y{}"  # the table whose rounds are posted (new each run), us-30k: every round feeds the pool
WARM_POSTS = 10  # single posts before any clock starts (connections, caches, prepared statements)
SEGMENTED = re.compile(r"^(?P<table>.+)_p(?P<month>[0-9]{6})$")
ADMIN_MS = 300.0


# ---- the run ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5_000_000)
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--days", type=int, default=365, help="gaming days the clones spread over")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--long", type=float, default=30.0,
                        help="a figure whose warm-up takes longer is timed once more only")
    parser.add_argument("--singles", type=int, default=100, help="single posts a run")
    parser.add_argument("--batch", type=int, default=200, help="rounds of the one batch post a run")
    parser.add_argument("--quick", action="store_true", help="200,000 rounds, 8 tables, fewer posts")
    parser.add_argument("--keep", action="store_true", help="leave both databases behind")
    parser.add_argument("--url", help="the year's database, filled by an earlier --keep run")
    parser.add_argument("--empty-url", help="the empty database of that run (default: a new one)")
    parser.add_argument("--child", choices=("build", "measure"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.tables = min(args.rounds, 200_000), min(args.tables, 8)
        args.singles, args.batch = min(args.singles, 40), min(args.batch, 80)
    if args.child:
        return _child(args)

    made: list[str] = []
    urls: dict[str, str] = {}
    began = time.perf_counter()
    print("bench.year: the service at a year's size beside an empty database")
    print("\n".join(scaffold.machine_lines(scaffold.SERVER)))
    print(f"autovacuum: {_setting('autovacuum')} (as the server has it)")
    sys.stdout.flush()
    try:
        builds: dict[str, dict] = {}
        for side, given, rounds in (("empty", args.empty_url, 0), ("year", args.url, args.rounds)):
            if given:
                urls[side] = given
                print(f"{side}: the kept database {given}")
                continue
            name, urls[side] = scaffold.database_create("bench_year_empty" if side == "empty" else "bench_year")
            made.append(name)
            print(f"\n{side}: building {name}" + (f", {rounds:,} rounds over {args.days} days" if rounds else ""))
            sys.stdout.flush()
            builds[side] = _run_child(args, "build", urls[side], rounds=rounds)
        figures: dict[str, dict] = {}
        disks: dict[str, dict] = {}
        for side in ("empty", "year"):
            print(f"\n{side}: measuring")
            sys.stdout.flush()
            figures[side] = _run_child(args, "measure", urls[side])
            disks[side] = disk(urls[side])
        _report(args, builds, figures, disks)
        print(f"\nthe whole run took {(time.perf_counter() - began) / 60:.1f} min")
    finally:
        if args.keep:
            for side, url in urls.items():
                print(f"kept {side}: {url}")
        else:
            for name in made:
                scaffold.database_drop(name)


def _setting(name: str) -> str:
    import psycopg

    with psycopg.connect(scaffold.SERVER) as conn:
        return conn.execute(f"SHOW {name}").fetchone()[0]


def _run_child(args, what: str, url: str, *, rounds: int = 0) -> dict:
    """This module in a process of its own on ``url``: its figures (its prints pass through)."""
    with tempfile.NamedTemporaryFile(prefix=f"bench-year-{what}-", suffix=".json", delete=False) as out:
        path = out.name
    command = [sys.executable, "-m", "bench.year", "--child", what, "--out", path, "--url", url,
               "--rounds", str(rounds), "--tables", str(args.tables), "--days", str(args.days),
               "--runs", str(args.runs), "--long", str(args.long), "--singles", str(args.singles),
               "--batch", str(args.batch)]
    env = (scaffold.production_env(url) if what == "measure" else os.environ | {"DATABASE_URL": url})
    env.pop("CELERY_BROKER_URL", None)
    try:
        subprocess.run(command, cwd=ROOT, env=env, check=True)
        return json.loads(Path(path).read_text())
    finally:
        Path(path).unlink(missing_ok=True)


def _child(args) -> None:
    os.environ["DATABASE_URL"] = args.url
    scaffold.django_setup(args.url)
    answer = build(args) if args.child == "build" else measure(args)
    Path(args.out).write_text(json.dumps(answer, default=str))


# ---- the data ------------------------------------------------------------------------------


def build(args) -> dict:
    from bench import lists

    started = time.perf_counter()
    posted = lists.seed(tables=args.tables)
    seeded = time.perf_counter() - started
    print(f"  posted {posted:,} rounds through the service in {seeded:.1f} s")
    answer = {"posted": posted, "seed_s": seeded, "clone_s": 0.0, "counts": {}}
    if args.rounds > posted:
        started = time.perf_counter()
        counts = lists.clone(rounds=args.rounds, days=args.days, every=1, audit_events=False, ledger=True,
                             then=chain_clones)
        answer["clone_s"] = time.perf_counter() - started
        answer["counts"] = counts
        print(f"  cloned in SQL in {answer['clone_s']:.1f} s ({answer['clone_s'] / 60:.1f} min): "
              + ", ".join(f"{n:,} {what}" for what, n in counts.items()))
    else:
        from django.db import connection

        from rounds.models import Round
        from rounds.partitions import partitions_make

        # The posted day's month in its own partition, as the schedule makes it and as the
        # clones' months are made, then as the clones end: statistics and a visibility map.
        partitions_make(set(Round.objects.values_list("gaming_day", flat=True).distinct()))
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    sys.stdout.flush()
    return answer


CHAIN_CHUNK = 50_000


def chain_clones(cursor) -> dict[str, int]:
    """Each clone's copy of its source's audit events, chained after the last event: hashed here
    (as ``audit_record`` hashes) and written with COPY; the chain's head moved to the last one,
    and each pool's row to its ledger's last event.

    Runs inside ``bench.lists.clone``'s transaction, with ``clone_of`` there and the
    append-only triggers standing aside (``session_replication_role = replica``)."""
    from trail.chain import HASHED_FIELDS, event_hash
    from trail.models import AuditEvent, ChainHead
    from progressive.models import MeterEvent, Pool
    from psycopg.types.json import Jsonb

    table, head = AuditEvent._meta.db_table, ChainHead._meta.db_table
    cursor.execute(f"SELECT seq, hash FROM {table} ORDER BY seq DESC LIMIT 1")
    seq, prev = cursor.fetchone()
    from django.db import connection

    pg = connection.connection  # the psycopg connection under Django's, in the same transaction
    columns = [c for c in HASHED_FIELDS if c != "prev_hash"] + ["prev_hash", "hash"]
    written = 0
    with pg.cursor(name="bench_year_events") as source:
        source.itersize = CHAIN_CHUNK
        source.execute(f"""
            SELECT s.at - c.shift, s.actor_kind, s.actor_id, s.actor_name, s.action, s.object_type,
                   c.id::text, s.object_repr, s.before, s.after, s.request_id
            FROM clone_of c JOIN {table} s ON s.object_type = 'rounds.round' AND s.object_id = c.source::text
            ORDER BY c.id, s.seq""")
        while True:
            rows = source.fetchmany(CHAIN_CHUNK)
            if not rows:
                break
            out = []
            for at, kind, actor_id, actor_name, action, object_type, object_id, repr_, before, after, request in rows:
                # Django has psycopg hand JSON over as text; the chain hashes it parsed.
                before = json.loads(before) if isinstance(before, str) else before
                after = json.loads(after) if isinstance(after, str) else after
                seq += 1
                fields = {"seq": seq, "at": at, "actor_kind": kind, "actor_id": actor_id,
                          "actor_name": actor_name, "action": action, "object_type": object_type,
                          "object_id": object_id, "object_repr": repr_, "before": before, "after": after,
                          "request_id": request, "prev_hash": prev}
                digest = event_hash(fields)
                out.append([fields[c] if c not in ("before", "after") or fields[c] is None else Jsonb(fields[c])
                            for c in columns[:-1]] + [digest])
                prev = digest
            with pg.cursor() as writer, writer.copy(
                    f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in out:
                    copy.write_row(row)
            written += len(out)
    cursor.execute(f"UPDATE {head} SET seq = %s, hash = %s WHERE id = 1", [seq, prev])
    # Each pool's row as its ledger's last event says: the service's next event follows it.
    cursor.execute(f"""
        UPDATE {Pool._meta.db_table} p SET last_event_seq = e.seq, meter = e.meter_after,
            overflow = e.overflow_after, reserve = e.reserve_after
        FROM (SELECT DISTINCT ON (pool_id) pool_id, seq, meter_after, overflow_after, reserve_after
              FROM {MeterEvent._meta.db_table} ORDER BY pool_id, seq DESC) e
        WHERE p.id = e.pool_id""")
    return {"audit events": written}


def disk(url: str) -> dict:
    """Bytes each month's partitions take (tables, indexes, TOAST), by month; the rest by table."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("""
            SELECT c.relname, p.relname, pg_total_relation_size(c.oid)
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
            WHERE c.relkind IN ('r', 'p') AND p.relkind = 'p'""").fetchall()
        total = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        big = conn.execute("""
            SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind = 'r' AND NOT c.relispartition AND n.nspname = 'public'
            ORDER BY 2 DESC LIMIT 8""").fetchall()
    months: dict[str, int] = defaultdict(int)
    parents: set[str] = set()
    other = 0
    for name, parent, size in rows:
        match = SEGMENTED.match(name)
        if match:
            months[match["month"]] += size
            parents.add(parent)
        else:
            other += size
    return {"months": dict(sorted(months.items())), "partitioned": sorted(parents), "defaults": other,
            "total": total, "unpartitioned": big}


# ---- the figures ---------------------------------------------------------------------------


class Timer:
    """One call to warm up, then the median of ``runs`` (one more only, after a long warm-up)."""

    def __init__(self, runs: int, long: float):
        self.runs, self.long = runs, long
        self.figures: dict[str, dict] = {}

    def time(self, key: str, call, *, note=None, last_matters: bool = False) -> None:
        """Time ``call(n)``: n is 0 for the warm-up, then 1, 2, ... and -1 for the last run."""
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        try:
            started = time.perf_counter()
            answer = call(0)
            warm = time.perf_counter() - started
            runs = self.runs if warm <= self.long else 0 if warm > 4 * self.long else 1
            times, queries, slowest = ([warm * 1000], 0, 0.0) if not runs else ([], 0, 0.0)
            if not runs and last_matters:
                answer = call(-1)  # the last run's side (a commit) without its time
            for n in range(1, runs + 1):
                with CaptureQueriesContext(connection) as captured:
                    started = time.perf_counter()
                    answer = call(n if n < runs else -1)  # -1: the last run
                    times.append((time.perf_counter() - started) * 1000)
                queries = len(captured.captured_queries)
                slowest = max([slowest] + [float(q["time"]) * 1000 for q in captured.captured_queries])
        except Exception as error:  # a figure that fails is printed as such; the rest go on
            self.figures[key] = {"error": f"{type(error).__name__}: {str(error)[:200]}"}
            print(f"  {key}: FAILED {type(error).__name__}: {str(error)[:300]}")
            sys.stdout.flush()
            return
        figure = {"ms": statistics.median(times), "min": min(times), "runs": runs or "the warm-up only, 1",
                  "queries": queries, "slowest_sql": slowest}
        if note is not None:
            figure["note"] = note(answer) if callable(note) else note
        self.figures[key] = figure
        print(f"  {key:<52} {figure['ms']:10.1f} ms (min {figure['min']:.1f}, {figure['runs']} run(s), "
              f"{queries} statements, slowest {slowest:.1f} ms){'  ' + str(figure.get('note', '')) if note else ''}")
        sys.stdout.flush()

    def put(self, key: str, value: float, unit: str, note: str = "") -> None:
        self.figures[key] = {"value": value, "unit": unit, "note": note}
        print(f"  {key:<52} {value:10.3f} {unit}  {note}")
        sys.stdout.flush()


class Undo(Exception):
    """Raised to roll back a run's writes."""


def measure(args) -> dict:
    from django.db.models import Count

    from trail.models import AuditEvent
    from progressive.models import MeterEvent
    from rounds.models import Finding, Round, Seat, Submission

    import logging

    # The bench's dealers err far more often than real ones: every report raises its alerts.
    logging.getLogger("audit.reconciliation").setLevel(logging.CRITICAL)
    logging.getLogger("kombu").setLevel(logging.ERROR)
    timer = Timer(args.runs, args.long)
    seed = Round.objects.order_by("id").values("gaming_day", "dealt_at")[0]
    day = seed["gaming_day"]
    counts = {"rounds": Round.objects.count(), "seats": Seat.objects.count(),
              "findings": Finding.objects.count(), "meter events": MeterEvent.objects.count(),
              "kept bodies": Submission.objects.count(), "audit events": AuditEvent.objects.count(),
              "rounds of the day": Round.objects.filter(gaming_day=day).count()}
    statuses = dict(Round.objects.filter(gaming_day=day).values_list("status").annotate(n=Count("id")))
    print("  " + ", ".join(f"{n:,} {what}" for what, n in counts.items()) + f"; the day {day}: {statuses}")
    sys.stdout.flush()
    _night_before_anchored(timer)
    report_pk = _nightly(timer, day)
    _pages(timer, day, report_pk)
    _exports(timer, day, report_pk)
    _posts(args, timer)
    _verify(timer)
    return {"counts": counts, "day": day.isoformat(), "figures": timer.figures}


def _nightly(timer: Timer, day) -> int | None:
    """The day's game protection (rolled back but for the last run, which the report reads), then
    its reconciliation as the nightly task runs it (eager Celery: the parts in this process)."""
    from django.db import transaction

    from audit.models import ReconciliationReport
    from audit.protection.services import day_protect
    from audit.tasks import reconcile_day

    from audit.models import SeatScore

    if SeatScore.objects.filter(gaming_day=day).exists():
        print(f"  the day {day} was scored by an earlier run: its game protection finds little left to do")

    def protect(n):
        try:
            with transaction.atomic():
                done = day_protect(day=day)
                if n != -1:
                    raise Undo
        except Undo:
            pass
        return done

    timer.time("protection: one day scored (day_protect)", protect, last_matters=True,
               note=lambda d: f"{d.tables} tables, {d.rounds:,} rounds, {d.seats_scored:,} seats")

    def reconcile(n):
        pk = reconcile_day.delay(day.isoformat(), requested_by="bench.year").get()
        report = ReconciliationReport.objects.get(pk=pk)
        if report.status != ReconciliationReport.Status.COMPLETE:
            raise RuntimeError(f"{report}: {report.status}")
        return report

    def parts(report) -> str:
        spent: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        for kind, started, finished in report.parts.values_list("kind", "started_at", "finished_at"):
            count[kind] += 1
            if started and finished:
                spent[kind] += (finished - started).total_seconds()
        return "parts: " + ", ".join(f"{kind} x{count[kind]} {spent[kind]:.1f} s" for kind in sorted(count))

    timer.time("reconciliation: one day (audit.reconcile_day)", reconcile, note=parts)
    return (ReconciliationReport.objects.filter(day_from=day, day_to=day, status=ReconciliationReport.Status.COMPLETE)
            .order_by("-version").values_list("pk", flat=True).first())


def admin_lists(report_pk) -> list[tuple[str, str]]:
    from rounds.models import Finding, Round

    last_round = Round.objects.order_by("-id").values_list("pk", flat=True).first()
    finding = Finding.objects.order_by("-id").values_list("pk", flat=True).first()
    pages = [
        ("admin reports", "/admin/audit/reconciliationreport/"),
        ("admin protection findings", "/admin/audit/protectionfinding/"),
        ("admin protection players", "/admin/audit/protectionfinding/players/"),
        ("admin variance findings", "/admin/audit/variancefinding/"),
        ("admin tables", "/admin/rounds/table/"),
        ("admin pools", "/admin/progressive/pool/"),
        ("admin pool versions", "/admin/progressive/poolversion/"),
        ("admin meter readings", "/admin/progressive/meterreading/"),
        ("admin a round's page", f"/admin/rounds/round/{last_round}/change/"),
    ]
    if finding:
        pages.append(("admin a finding's page", f"/admin/rounds/finding/{finding}/change/"))
    if report_pk:
        pages.append(("admin the report's page", f"/admin/audit/reconciliationreport/{report_pk}/change/"))
    pages += _floor_pages(last_round)
    return pages


def _floor_pages(last_round) -> list[tuple[str, str]]:
    """The workspace pages of one table, one dealer, one pool and one suspicion (issue 46): the
    last round's table and dealer, the first pool, the latest protection finding."""
    from audit.models import ProtectionFinding
    from progressive.models import Pool
    from rounds.models import Round

    pages = []
    table, dealer = Round.objects.filter(pk=last_round).values_list("table__code", "dealer").first() or ("", "")
    if table:
        pages.append(("admin a table's page", f"/admin/audit/reconciliationreport/tables/{table}/"))
    if dealer:
        pages.append(("admin a dealer's page", f"/admin/audit/reconciliationreport/dealers/{dealer}/"))
    pool = Pool.objects.order_by("pk").values_list("pk", flat=True).first()
    if pool:
        pages.append(("admin a pool's page", f"/admin/progressive/pool/{pool}/change/"))
    suspicion = ProtectionFinding.objects.order_by("-id").values_list("pk", flat=True).first()
    if suspicion:
        pages.append(("admin a protection finding's page", f"/admin/audit/protectionfinding/{suspicion}/change/"))
    return pages


def _client():
    from django.test import Client
    from django.test.utils import setup_test_environment

    try:
        setup_test_environment()
    except RuntimeError:
        pass  # set up already
    from bench.workspace import signed_in

    return signed_in(Client(), "bench-year")


PLAIN_STATIC = {"default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
                "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}


def _pages(timer: Timer, day, report_pk) -> None:
    """Every list and page, as a superuser; the static files' names without a manifest (none is
    collected in a working tree), the one production setting changed."""
    from django.test.utils import override_settings

    from bench import lists
    from rounds.models import Round

    client = _client()

    def get(url):
        def call(n):
            response = client.get(url)
            if response.status_code != 200:
                raise RuntimeError(f"HTTP {response.status_code}: {response.content[:200]!r}")
            return response
        return call

    with override_settings(STORAGES=PLAIN_STATIC):
        last = Round.objects.filter(gaming_day=day).order_by("-dealt_at").values_list("dealt_at", flat=True).first()
        now = last + timedelta(minutes=30)
        with mock.patch("audit.tonight.timezone.now", return_value=now):
            timer.time("page: tonight (GET /admin/)", get("/admin/"))
        examples = lists._examples()
        for label, url in lists.lists() + admin_lists(report_pk):
            # The same key on both databases, whichever finding code is common or rare in each.
            stable = (label.replace(f"common: {examples['code']}", "common")
                      .replace(f"rare: {examples['rare_code']}", "rare")
                      .replace(f"({examples['code']})", "(common)")
                      .replace(f"({examples['rare_code']})", "(rare)"))
            timer.time(("page: " if "'s page" in stable else "list: ") + stable, get(url),
                       note=label if stable != label else None)


def _exports(timer: Timer, day, report_pk) -> None:
    client = _client()
    month_first = day.replace(day=1)
    month_last = (month_first + timedelta(days=32)).replace(day=1) - timedelta(days=1)

    def export(url):
        def call(n):
            response = client.get(url)
            if response.status_code != 200:
                raise RuntimeError(f"HTTP {response.status_code}: {response.content[:200]!r}")
            size = lines = 0
            for chunk in response.streaming_content if response.streaming else [response.content]:
                size += len(chunk)
                lines += chunk.count(b"\n")
            return lines - 1, size
        return call

    from trail.models import AuditEvent
    from infra.gaming_day import gaming_day_of

    # The seed's events were written when it was posted, not on the gaming day its rounds
    # were dealt: the audit log's day is that of the first round's event, and its month.
    written = AuditEvent.objects.filter(object_type="rounds.round").order_by("seq").values_list("at", flat=True)[0]
    log_day = gaming_day_of(written)
    log_first = log_day.replace(day=1)
    log_last = (log_first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    for what in ("rounds", "findings", "audit-log"):
        periods = ((("a day", day, day), ("a month", month_first, month_last)) if what != "audit-log" else
                   (("a day", log_day, log_day), ("a month", log_first, log_last)))
        for label, first, last in periods:
            timer.time(f"CSV: {what}, {label}", export(
                f"/api/v1/exports/{what}.csv?first_day={first.isoformat()}&last_day={last.isoformat()}"),
                note=lambda a: f"{a[0]:,} rows, {a[1] / 1e6:.1f} MB")
    if report_pk:
        timer.time("CSV: the report", export(f"/api/v1/reports/{report_pk}.csv"),
                   note=lambda a: f"{a[0]:,} rows")


# ---- posting and verifying -----------------------------------------------------------------


def _manage(*argv: str) -> tuple[float, float, int, str]:
    """``manage.py`` in a process of its own: (wall s, its CPU s, exit status, its output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "manage.py", *argv], cwd=ROOT, env=os.environ.copy(),
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode, done.stdout + done.stderr


def cpu_ns(pid: int) -> int:
    """Nanoseconds ``pid``'s threads have run on a CPU (``/proc/<pid>/task/*/schedstat``): finer
    than the clock ticks of ``/proc/<pid>/stat``, which a few dozen posts would round away."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def _night_before_anchored(timer: Timer) -> None:
    """The anchor production writes after each night's report, written once before anything is
    timed: the first one walks the whole chain; the report and the anchor timed after it walk
    only what came since (``audit.reconciliation.chain``)."""
    from django.conf import settings

    directory = str(Path(tempfile.mkdtemp(prefix="bench-year-anchors-")))
    os.environ["AUDIT_ANCHOR_PATH"] = settings.AUDIT_ANCHOR_PATH = directory
    wall, cpu, status, output = _manage("audit_anchor")
    timer.put("the first anchor, the whole chain walked (manage.py audit_anchor)", wall * 1000, "ms",
              f"CPU {cpu:.1f} s" + ("" if status == 0 else f"; FAILED: {output.strip()[-300:]}"))


def _posts(args, timer: Timer) -> None:
    """The next night's anchor written, then single posts and one batch post a run of a ``us-30k``
    table through gunicorn on the production settings, one keep-alive connection."""
    from django.db import connections

    from bench import http_ingest

    wall, cpu, status, output = _manage("audit_anchor")
    timer.put("the next anchor, since the last (manage.py audit_anchor)", wall * 1000, "ms",
              f"CPU {cpu:.1f} s" + ("" if status == 0 else f"; FAILED: {output.strip()[-300:]}"))

    code = POST_TABLE.format(os.urandom(3).hex())  # a kept database measured again: another table
    keys = http_ingest.tables_register([code], "us-30k")
    passes = 1 + args.runs
    count = WARM_POSTS + passes * (args.singles + args.batch)
    _, bodies = http_ingest._deal_job((code, count, 2026, "us-30k"))
    connections.close_all()
    url, dbname = os.environ["DATABASE_URL"], os.environ["DATABASE_URL"].rsplit("/", 1)[1]
    port = http_ingest.free_port()
    env = http_ingest.server_env(url, port, SimpleNamespace(workers=None, threads=None, db_pool=8, conn_max_age=0))
    env |= {k: v for k, v in os.environ.items() if k.startswith("AUDIT_ANCHOR")}
    log = Path(f"/tmp/{dbname}-gunicorn.log")
    server = http_ingest.server_start(env, log, port)
    try:
        headers = {"Authorization": f"Bearer {keys[code]}", "Content-Type": "application/json"}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

        def post(path: str, body: bytes, want: int) -> None:
            conn.request("POST", path, body, headers)
            response = conn.getresponse()
            answer = response.read()
            if response.status != want:
                raise RuntimeError(f"POST {path}: HTTP {response.status}: {answer[:300]!r}")
            if path == http_ingest.BATCH:
                refused = [item for item in json.loads(answer)["results"] if item["status"] != 201]
                if refused:
                    raise RuntimeError(f"batch: {len(refused)} rounds not stored: {refused[0]!r:.300}")

        for body in bodies[:WARM_POSTS]:
            post(http_ingest.ROUNDS, body, 201)
        rest = bodies[WARM_POSTS:]
        measured: dict[str, list[dict]] = {"single": [], "batch": []}
        for n in range(passes):
            chunk = rest[n * (args.singles + args.batch):(n + 1) * (args.singles + args.batch)]
            singles, batch = chunk[:args.singles], chunk[args.singles:]
            for kind, send, rounds in (
                    ("single", lambda: [post(http_ingest.ROUNDS, b, 201) for b in singles], len(singles)),
                    ("batch", lambda: post(http_ingest.BATCH, b'{"rounds":[' + b",".join(batch) + b"]}", 200),
                     len(batch))):
                backends_before, _ = http_ingest.postgres_pids(url, dbname)
                before = {pid: cpu_ns(pid) for pid in backends_before}
                web_pids = scaffold.descendants(server.pid)
                web_before = sum(cpu_ns(pid) for pid in web_pids)
                started = time.perf_counter()
                send()
                wall = time.perf_counter() - started
                web = (sum(cpu_ns(pid) for pid in web_pids) - web_before) / 1e9
                backends_after, _ = http_ingest.postgres_pids(url, dbname)
                database = sum(cpu_ns(pid) - before.get(pid, 0) for pid in backends_after) / 1e9
                if n:  # the first pass warms up
                    measured[kind].append({"wall": wall / rounds, "web": web / rounds, "db": database / rounds})
        conn.close()
    finally:
        http_ingest.server_stop(server)
    for kind, label in (("single", f"single posts ({args.singles} a run)"),
                        ("batch", f"batch posts (a batch of {args.batch})")):
        for key, what in (("wall", "wall"), ("web", "web worker CPU"), ("db", "database backends' CPU")):
            value = statistics.median(m[key] for m in measured[kind]) * 1000
            timer.put(f"post: {label}, {what} a round", value, "ms", f"{len(measured[kind])} run(s)")


def _verify(timer: Timer) -> None:
    """``verify_audit`` as it runs by default (after the posts, with the anchor written before
    them), ``--full`` if the command has it, and ``--chain-only``."""
    _, _, _, usage = _manage("verify_audit", "--help")
    ways = [("verify_audit", ())]
    if "--full" in usage:
        ways.append(("verify_audit --full", ("--full",)))
    else:
        print("  verify_audit has no --full here: not timed")
    ways.append(("verify_audit --chain-only", ("--chain-only",)))
    for label, extra in ways:
        answers = []

        def call(n, extra=extra):
            wall, cpu, status, output = _manage("verify_audit", *extra)
            answers.append((cpu, status, output))
            return cpu, status, output

        def note(answer):
            cpu, status, output = answer
            lines = output.strip().splitlines()
            said = f"CPU {cpu:.1f} s, exit {status}, {len(lines):,} lines"
            return said + (f"; last: {lines[-1][:160]}" if lines else "")

        timer.time(label, call, note=note)
        if answers and answers[-1][1] != 0:
            print("    " + "\n    ".join(answers[-1][2].strip().splitlines()[:12]))


# ---- the report ----------------------------------------------------------------------------


def _goal(key: str) -> tuple[str, callable]:
    """What a figure should be, and a test of (empty, year, ratio)."""
    if key.startswith("post:") and ("wall" in key or "web worker" in key or "backends" in key):
        return "year <= 1.2x empty", lambda e, y, r: r <= 1.2
    if key.startswith(("list: admin", "page:")):
        return f"< {ADMIN_MS:.0f} ms", lambda e, y, r: y < ADMIN_MS
    if key.startswith("list: API"):
        return f"< {ADMIN_MS:.0f} ms", lambda e, y, r: y < ADMIN_MS
    if key.startswith(("protection:", "reconciliation:")):
        return "ratio ~1 (no history)", lambda e, y, r: r <= 1.5
    if key == "verify_audit":
        return "since the last anchor: ~1", lambda e, y, r: r <= 1.5
    if key == "verify_audit --full":
        return "walks everything", None
    return "", None


def _report(args, builds: dict, figures: dict, disks: dict) -> None:
    empty, year = figures["empty"], figures["year"]
    print(f"\nbuilt: " + "; ".join(
        f"{side}: seed {b['seed_s']:.0f} s" + (f", clone {b['clone_s'] / 60:.1f} min" if b["clone_s"] else "")
        for side, b in builds.items()))
    for side, f in figures.items():
        print(f"{side}: " + ", ".join(f"{n:,} {what}" for what, n in f["counts"].items()) + f" (the day {f['day']})")
    print(f"\n{'figure':<62} {'empty':>10} {'year':>10} {'ratio':>7}  {'goal':<26} {'':<8} year's note")
    for key, y in year["figures"].items():
        e = empty["figures"].get(key, {})
        if "error" in y or "error" in e:
            print(f"{key:<62} {'FAILED' if 'error' in e else '':>10} {'FAILED' if 'error' in y else '':>10}"
                  f"  {(y.get('error') or e.get('error'))[:100]}")
            continue
        ev, yv = e.get("ms", e.get("value")), y.get("ms", y.get("value"))
        unit = "ms" if "ms" in y else y["unit"]
        ratio = yv / ev if ev else float("nan")
        goal, test = _goal(key)
        verdict = "" if test is None or ev is None else ("met" if test(ev, yv, ratio) else "NOT met")
        extra = f"{y['runs']} run(s), {y['queries']} stmts, slowest {y['slowest_sql']:.0f} ms" if "ms" in y else ""
        note = "; ".join(x for x in (extra, str(y.get("note", ""))) if x)
        print(f"{key + ' (' + unit + ')':<62} {_num(ev):>10} {_num(yv):>10} {ratio:>6.2f}x  {goal:<26} "
              f"{verdict:<8} {note[:200]}")
    print("\ndisk each month takes (pg_total_relation_size of its partitions, summed): "
          + ", ".join(disks["year"]["partitioned"]))
    months = sorted(set(disks["empty"]["months"]) | set(disks["year"]["months"]))
    print(f"{'month':<8} {'empty':>10} {'year':>10}")
    for month in months:
        print(f"{month[:4]}-{month[4:]:<3} {_mb(disks['empty']['months'].get(month, 0)):>10} "
              f"{_mb(disks['year']['months'].get(month, 0)):>10}")
    for label, key in (("all months", None), ("default partitions", "defaults"), ("whole database", "total")):
        values = [sum(d["months"].values()) if key is None else d[key] for d in (disks["empty"], disks["year"])]
        print(f"{label:<20} {_mb(values[0]):>10} {_mb(values[1]):>10}")
    print("largest tables outside the partitions (year): "
          + ", ".join(f"{name} {_mb(size)}" for name, size in disks["year"]["unpartitioned"]))


def _num(value) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f}" if value >= 10 else f"{value:.3f}"


def _mb(size: int) -> str:
    return f"{size / 2**20:,.1f} MB" if size < 2**30 else f"{size / 2**30:,.2f} GB"


if __name__ == "__main__":
    main()
