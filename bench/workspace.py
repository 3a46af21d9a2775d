"""Every workspace page on a 40-table casino's busiest day with a year of history: two commits in turns.

1. Builds a throwaway database (``bench.scaffold``) unless ``--url`` names one an
   earlier ``--keep`` run left: ``--tables`` tables post a few dozen rounds each
   through the service (``bench.lists.seed``), a hole-carder and two honest
   players an evening at one more table (so that game protection has a case),
   then clones in SQL (``bench.lists.clone``) make the gaming day before the
   posted one the busiest (``--day-rounds``) and spread ``--rounds`` more over
   ``--days`` days before it: a year of history. The busiest day is reconciled
   (``report_run``) and the posted day protected (``day_protect``).
2. Times every workspace page through Django's test client as a superuser, on
   the production settings (``DJANGO_ENV=production``, ``DB_POOL=1``), the clock
   set late on the posted day: one call to warm up, then the median of
   ``--runs``: the server's wall time and the process's CPU, its statements
   and its size. With ``--vs COMMIT`` the same pages are timed on that commit's
   code (a worktree of it) in turns with this one's, ``--passes`` passes each,
   each pass a process of its own, the order swapped every pass.
3. Paints each page in the system's Chromium at 1,366 × 768 (the service served
   in the measuring process, the same clock): the time to the first contentful
   paint and to the load event, median of three.

It asserts nothing: it prints figures (goals, issue 46: every page at most 300 ms
of server time, its first paint within a second).

    .venv/bin/python -m bench.workspace --vs 0333d0a --keep
    .venv/bin/python -m bench.workspace --url postgres://…/bench_workspace_… --vs 0333d0a
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import scaffold  # noqa: E402

ROOT = scaffold.ROOT
HOLE_CARDING_TABLE = "S01"  # the evening's table, not one of bench.lists' T01…
_FIRST_HOLE_CARDING_ROUND = "sim-00000"  # its first round, on the posted day (the clones' ids have a suffix)
GOAL_MS = 300
PAINT_GOAL_MS = 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--day-rounds", type=int, default=100_000, help="rounds of the busiest day")
    parser.add_argument("--rounds", type=int, default=2_000_000, help="rounds of the history before it")
    parser.add_argument("--days", type=int, default=365, help="gaming days the history spreads over")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--vs", help="a commit whose pages are timed in turns with this tree's")
    parser.add_argument("--no-paint", action="store_true", help="leave out the browser's paint")
    parser.add_argument("--keep", action="store_true", help="leave the database behind")
    parser.add_argument("--url", help="a database an earlier --keep run of this bench left")
    parser.add_argument("--child", choices=("measure",), help=argparse.SUPPRESS)
    parser.add_argument("--plan", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)

    name, url = (None, args.url) if args.url else scaffold.database_create("bench_workspace")
    worktree = None
    try:
        print("bench.workspace: every workspace page on the busiest day of a year")
        print("\n".join(scaffold.machine_lines(url)))
        sys.stdout.flush()
        if not args.url:
            _built(url, args)
        plan = _plan(url)
        print(f"the clock: {plan['now']}; {len(plan['pages'])} pages")
        sides = [("this tree", ROOT)]
        if args.vs:
            worktree = Path(tempfile.mkdtemp(prefix="bench-workspace-")) / "tree"
            subprocess.run(["git", "worktree", "add", "--detach", "-q", str(worktree), args.vs], cwd=ROOT, check=True)
            sides.insert(0, (f"{args.vs}", worktree))
        # Each side's code reads the report its own code writes (a report's figures change shape
        # between versions): the other commit's first, this tree's last, the day's current one.
        plans = {side: _with_report(plan, _reported(tree, url, plan["busiest"])) for side, tree in sides}
        figures: dict[str, list[dict]] = {side: [] for side, _ in sides}
        for n in range(args.passes):
            for side, tree in sides if n % 2 == 0 else sides[::-1]:
                print(f"pass {n + 1}: {side}")
                sys.stdout.flush()
                figures[side].append(_measured(tree, url, plans[side], runs=args.runs, paint=False))
        paints = {}
        if not args.no_paint:
            for side, tree in sides:
                print(f"painting: {side}")
                sys.stdout.flush()
                paints[side] = _measured(tree, url, plans[side], runs=3, paint=True)
        _report(plan, sides, figures, paints)
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
        if name and not args.keep:
            scaffold.database_drop(name)
        elif name:
            print(f"kept: {url}")


# ---- the data ------------------------------------------------------------------------------


def _built(url: str, args) -> None:
    """The database filled, in a process of its own (this one stays free of Django)."""
    code = ("import sys; sys.path.insert(0, '.'); from bench import workspace; "
            f"workspace._build({url!r}, {args.tables}, {args.day_rounds}, {args.rounds}, {args.days})")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                   env=os.environ | {"DATABASE_URL": url})


def _build(url: str, tables: int, day_rounds: int, rounds: int, days: int) -> None:
    scaffold.django_setup(url)
    from bench import lists
    from bench.report_page import _chain_head_moved_to_the_clones
    from rounds.models import Round

    started = time.perf_counter()
    posted = lists.seed(tables=tables)
    posted += _hole_carding_evening()
    print(f"posted {posted:,} rounds through the service in {time.perf_counter() - started:.0f} s")
    posted_day = Round.objects.get(round_id=_FIRST_HOLE_CARDING_ROUND).gaming_day
    busiest = posted_day - timedelta(days=1)
    started = time.perf_counter()
    counts = lists.clone(rounds=posted + rounds, days=days, source_day=posted_day, first_shift=2)
    print(f"the history cloned in {time.perf_counter() - started:.0f} s: "
          + ", ".join(f"{n:,} {what}" for what, n in counts.items()))
    started = time.perf_counter()
    counts = lists.clone(rounds=posted + day_rounds, days=1, source_day=posted_day, tag="b")
    print(f"the busiest day cloned in {time.perf_counter() - started:.0f} s: "
          + ", ".join(f"{n:,} {what}" for what, n in counts.items()))
    _chain_head_moved_to_the_clones()
    from audit.protection.services import day_protect
    from audit.reconciliation.services import report_run

    started = time.perf_counter()
    report = report_run(day_from=busiest, requested_by="bench.workspace")
    print(f"reconciled {busiest} ({report.rounds:,} rounds) in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    done = day_protect(day=posted_day)
    print(f"protected {posted_day} ({done.rounds:,} rounds) in {time.perf_counter() - started:.0f} s")


def _hole_carding_evening(rounds: int = 120) -> int:
    """A hole-carder beside an optimal and a weak player at one more table, the posted day's evening."""
    from game.protection import players as pl
    from game.protection.preflop import shipped_table
    from game.protection.values import PayTable
    from rounds.models import Table
    from rounds.services import Received, ingest_rounds, table_register
    from rounds.wire.serializers import RoundRecordSerializer
    from tests.protection.wire import body_of
    from tests.game.engine_rules import SE_50KR
    from trail.services import SYSTEM
    from bench.lists import DEALT_FROM

    pays, preflop = PayTable.of(SE_50KR), shipped_table()
    players = [pl.OptimalPlayer("P-optimal", pays, preflop), pl.WeakPlayer("P-weak", pays, preflop),
               pl.HoleCarder("P-peeks", pays, preflop, share=1.0)]
    table_register(code=HOLE_CARDING_TABLE, config_name="se-50kr", actor=SYSTEM)
    received = []
    for dealt in pl.deal_rounds(players, rounds, seed=16):
        wire = body_of(dealt, table=HOLE_CARDING_TABLE, start=DEALT_FROM, rules=SE_50KR)
        serializer = RoundRecordSerializer(data=wire)
        assert serializer.is_valid(), serializer.errors
        received.append(Received(serializer.validated_data, json.dumps(wire).encode()))
    results = ingest_rounds(table=Table.objects.get(code=HOLE_CARDING_TABLE), received=received)
    for result in results:
        if isinstance(result, Exception):
            raise result
    return len(results)


def _plan(url: str) -> dict:
    """The clock and every workspace page's address, read once (both sides time the same ones)."""
    code = ("import sys, json; sys.path.insert(0, '.'); from bench import workspace; "
            f"print(json.dumps(workspace._pages({url!r})))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True,
                          env=os.environ | {"DATABASE_URL": url})
    return json.loads(done.stdout.strip().splitlines()[-1])


def _pages(url: str) -> dict:
    scaffold.django_setup(url)
    from audit.models import ProtectionFinding, ReconciliationReport
    from progressive.models import Pool
    from rounds.models import Finding, Round

    last = Round.objects.order_by("-dealt_at").values_list("dealt_at", flat=True).first()
    busiest = Round.objects.get(round_id=_FIRST_HOLE_CARDING_ROUND).gaming_day - timedelta(days=1)
    report = (ReconciliationReport.objects.filter(day_from=busiest, day_to=busiest)
              .order_by("-pk").values_list("pk", flat=True).first())
    round_ = Round.objects.filter(gaming_day=busiest).order_by("-pk").values("pk", "table__code", "dealer").first()
    finding = (Finding.objects.filter(informational=False, round__gaming_day=busiest)
               .order_by("-pk").values_list("pk", flat=True).first())
    suspicion = ProtectionFinding.objects.order_by("-pk").values_list("pk", "key").first()
    pool = Pool.objects.order_by("pk").values_list("pk", flat=True).first()
    pages = [
        ("tonight", "/admin/"),
        ("rounds list", "/admin/rounds/round/"),
        ("a round", f"/admin/rounds/round/{round_['pk']}/change/"),
        ("findings queue", "/admin/rounds/finding/"),
        ("findings queue, the busiest day", f"/admin/rounds/finding/?gaming_day={busiest}"),
        ("a finding", f"/admin/rounds/finding/{finding}/change/"),
        ("reports", "/admin/audit/reconciliationreport/"),
        (REPORT_PAGE, f"/admin/audit/reconciliationreport/{report}/change/"),
        ("a table", f"/admin/audit/reconciliationreport/tables/{round_['table__code']}/"),
        ("a dealer", f"/admin/audit/reconciliationreport/dealers/{round_['dealer']}/"),
        ("protection findings", "/admin/audit/protectionfinding/"),
        ("protection's players", "/admin/audit/protectionfinding/players/"),
        ("a pool", f"/admin/progressive/pool/{pool}/change/"),
        ("the audit log", "/admin/trail/auditevent/"),
        ("counts", "/admin/audit/tablecount/"),
        ("a count entered", "/admin/audit/tablecount/enter/"),
    ]
    if suspicion:
        pages += [("a protection finding", f"/admin/audit/protectionfinding/{suspicion[0]}/change/"),
                  ("a player", "/admin/audit/protectionfinding/players/P-peeks/")]
    return {"now": (last + timedelta(minutes=30)).isoformat(), "busiest": busiest.isoformat(), "pages": pages}


REPORT_PAGE = "the busiest day's report"


def _with_report(plan: dict, pk: int) -> dict:
    pages = [(label, f"/admin/audit/reconciliationreport/{pk}/change/" if label == REPORT_PAGE else url)
             for label, url in plan["pages"]]
    return plan | {"pages": pages}


def _reported(tree: Path, url: str, day: str) -> int:
    """The busiest day reconciled again by ``tree``'s code (a new version of its report): its pk."""
    code = ("import sys, django; django.setup(); from datetime import date; "
            "from audit.reconciliation.services import report_run; "
            f"print(report_run(day_from=date.fromisoformat({day!r}), requested_by='bench.workspace').pk)")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, check=True, capture_output=True, text=True,
                          env=os.environ | {"DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "casino.settings",
                                            "PYTHONPATH": str(tree), "LOG_LEVEL": "CRITICAL"})
    pk = int(done.stdout.strip().splitlines()[-1])
    print(f"{tree.name}: the busiest day reconciled again in {time.perf_counter() - started:.0f} s (report {pk})")
    return pk


# ---- the measuring process -----------------------------------------------------------------


def _measured(tree: Path, url: str, plan: dict, *, runs: int, paint: bool) -> dict:
    """This module's ``--child measure`` run on ``tree``'s code (its own folder first on the path)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as out:
        json.dump({"plan": plan, "runs": runs, "paint": paint}, out)
        path = out.name
    try:
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "measure", "--plan", path,
                        "--out", path], cwd=tree, check=True,
                       env=scaffold.production_env(url) | {"PYTHONPATH": str(tree), "DJANGO_ALLOW_ASYNC_UNSAFE": "true"})
        return json.loads(Path(path).read_text())
    finally:
        Path(path).unlink(missing_ok=True)


def _child(args) -> None:
    # The code measured is the working directory's (A or B), not this file's tree.
    sys.path[:] = [os.getcwd()] + [p for p in sys.path if p not in (str(ROOT), str(Path(__file__).parent))]
    for module in [m for m in sys.modules if m == "bench" or m.startswith("bench.")]:
        del sys.modules[module]
    job = json.loads(Path(args.plan).read_text())
    import django

    django.setup()
    from unittest import mock

    from django.test.utils import override_settings

    now = datetime.fromisoformat(job["plan"]["now"])
    plain = {"default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
             "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
    with override_settings(STORAGES=plain), mock.patch("django.utils.timezone.now", return_value=now):
        answer = _painted(job) if job["paint"] else _timed(job)
    Path(args.out).write_text(json.dumps(answer))


def signed_in(client, username: str = "bench-workspace"):
    """``client`` signed in as a superuser whose session has proven his second factor (an
    authenticator of his own), as production asks of an admin; ``client`` back."""
    from django.contrib.auth import get_user_model
    from django_otp import DEVICE_ID_SESSION_KEY
    from django_otp.plugins.otp_totp.models import TOTPDevice

    user, _ = get_user_model().objects.get_or_create(
        username=username, defaults={"is_staff": True, "is_superuser": True})
    device, _ = TOTPDevice.objects.get_or_create(user=user, name="bench", defaults={"confirmed": True})
    client.force_login(user)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session.save()
    return client


def _timed(job: dict) -> dict:
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    setup_test_environment()
    client = signed_in(Client())
    figures = {}
    for label, url in job["plan"]["pages"]:
        statements = []

        def counted(execute, sql, params, many, context):
            statements.append(sql)
            return execute(sql, params, many, context)

        # The first view stands apart: what a process draws once and keeps (the charts) it draws here.
        first = time.perf_counter()
        with connection.execute_wrapper(counted):
            response = client.get(url)
        first = (time.perf_counter() - first) * 1000
        if response.status_code != 200:
            figures[label] = {"status": response.status_code, "to": response.get("Location", "")}
            continue
        walls, cpus = [], []
        for _ in range(job["runs"]):
            wall, cpu = time.perf_counter(), time.process_time()
            client.get(url)
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
        figures[label] = {"ms": statistics.median(walls), "cpu": statistics.median(cpus), "first": first,
                          "statements": len(statements), "kb": len(response.content) / 1024}
    return figures


# The first contentful paint once Chromium has recorded it (a buffered observer: the entry may
# come after the load event), and the load event's end, both from the navigation's start.
PAINTED = """() => new Promise(resolve => {
    const nav = performance.getEntriesByType('navigation')[0];
    const done = paint => resolve({paint: paint, load: nav.loadEventEnd});
    new PerformanceObserver(list => {
        const entry = list.getEntriesByName('first-contentful-paint')[0];
        if (entry) done(entry.startTime);
    }).observe({type: 'paint', buffered: true});
    setTimeout(() => done(null), 3000);
})"""


def _painted(job: dict) -> dict:
    """Each page in Chromium against the service served from a thread of this process."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application
    from django.test import Client
    from playwright.sync_api import sync_playwright
    import threading

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadedWSGIServer(("127.0.0.1", 0), Quiet, allow_reuse_address=False)
    server.set_app(StaticFilesHandler(get_wsgi_application()))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    client = signed_in(Client())
    session = client.cookies["sessionid"].value
    figures = {}
    # The system's Chromium, as the browser tests launch it (tests/browser.py), whichever tree runs.
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
        page = context.new_page()
        for label, url in job["plan"]["pages"]:
            paints, loads = [], []
            for _ in range(job["runs"] + 1):
                page.goto(base + url, wait_until="load")
                timing = page.evaluate(PAINTED)
                paints.append(timing["paint"])
                loads.append(timing["load"])
            paints, loads = paints[1:], loads[1:]
            figures[label] = {"paint": statistics.median(p for p in paints if p is not None) if any(paints) else None,
                              "load": statistics.median(loads)}
        browser.close()
    server.shutdown()
    return figures


# ---- the report ----------------------------------------------------------------------------


def _report(plan: dict, sides: list, figures: dict, paints: dict) -> None:
    names = [side for side, _ in sides]
    if not all(figures[side] for side in names):
        return
    print(f"\nserver ms (median of each pass's runs), process CPU ms, a process's first view of the page "
          f"(ms, the last side's median; the first page's holds the process's warming up), statements, kB; "
          f"goal {GOAL_MS} ms; first contentful paint and load in Chromium, goal {PAINT_GOAL_MS} ms")
    head = (f"{'page':<34}" + "".join(f"{n[:18]:>24}" for n in names)
            + f"{'CPU':>7}{'first':>7}{'stmts':>6}{'kB':>10}")
    head += "".join(f"{'paint ' + n[:8]:>16}" for n in paints)
    print(head)
    for label, _ in plan["pages"]:
        line = f"{label[:33]:<34}"
        last = {}
        for side in names:
            passes = [f[label] for f in figures[side]]
            if "ms" not in passes[0]:
                line += f"{'HTTP ' + str(passes[0].get('status')):>24} {passes[0].get('to', '')}"
                continue
            shown = " / ".join(f"{p['ms']:.0f}" for p in passes)
            line += f"{shown:>24}"
            last = passes[-1]
        if last:
            mine = [f[label] for f in figures[names[-1]]]
            line += f"{statistics.median(p['cpu'] for p in mine):7.0f}"
            line += f"{statistics.median(p.get('first', 0) for p in mine):7.0f}"
            sizes = " / ".join(f"{figures[side][-1][label].get('kb', 0):.0f}" for side in names)
            line += f"{last['statements']:6d}{sizes:>10}"
        for side in paints:
            shown = paints[side].get(label, {})
            line += f"{(_ms(shown.get('paint')) + ' / ' + _ms(shown.get('load'))):>16}"
        print(line)


def _ms(value) -> str:
    return "—" if value is None else f"{value:.0f}"


if __name__ == "__main__":
    main()
