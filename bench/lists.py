"""How long every list takes to answer once the tables are large: the API's and the admin's.

1. Creates a throwaway database (``bench.scaffold``), registers ``--tables``
   tables (one of them ``us-30k`` feeding the shipped pool, the rest
   ``se-50kr``) and posts a few hundred dealt rounds through the service
   (``ingest_rounds``), dealer errors more often than usual so that findings
   of several codes exist.
2. Clones those rounds in SQL (``INSERT ... SELECT`` over ``generate_series``)
   until there are ``--rounds``: their seats, findings, round keys, meter
   events, and a quarter of their submissions and audit events, spread over
   ``--days`` gaming days before the posted ones, each month in its own
   partition. A clone gets its own round id, and players and dealers named
   after the posted ones with a suffix, so that a player or dealer has a
   realistic share of the rounds rather than all of them.
3. Times each list (the API with session login, the admin's changelists) as
   a superuser through Django's test client: one call to warm the cache, then
   the median of ``--runs``. ``--explain`` prints the plan of each list's
   slowest statement.

It asserts nothing: it prints figures (goal: every list under 300 ms).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone

from bench import scaffold

SEED_ROUNDS = 60  # a table's posted rounds: the clones' patterns
DEALT_FROM = datetime(2026, 11, 20, 18, tzinfo=timezone.utc)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200_000)
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--days", type=int, default=365, help="gaming days the clones spread over")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--explain", action="store_true", help="each list's slowest statement's plan")
    parser.add_argument("--keep", action="store_true", help="leave the database behind")
    parser.add_argument("--url", help="an existing database filled by an earlier --keep run")
    args = parser.parse_args(argv)

    name = None
    if args.url:
        url = args.url
    else:
        name, url = scaffold.database_create("bench_lists")
    try:
        scaffold.django_setup(url)
        print("\n".join(scaffold.machine_lines(url)))
        if not args.url:
            started = time.perf_counter()
            posted = seed(tables=args.tables)
            print(f"posted {posted} rounds through the service in {time.perf_counter() - started:.1f} s")
            started = time.perf_counter()
            counts = clone(rounds=args.rounds, days=args.days)
            print(f"cloned in SQL in {time.perf_counter() - started:.1f} s: "
                  + ", ".join(f"{n:,} {what}" for what, n in counts.items()))
        measure(runs=args.runs, explain=args.explain)
    finally:
        if name and not args.keep:
            from django.db import connections

            connections.close_all()
            scaffold.database_drop(name)
        elif name:
            print(f"kept: {url}")


# ---- the data ------------------------------------------------------------------------------


def seed(*, tables: int) -> int:
    """A few rounds of each table, posted through the one service that writes rounds."""
    import json

    from trail.services import SYSTEM
    from rounds.wire.serializers import RoundRecordSerializer
    from rounds.models import Table, TableConfigVersion
    from rounds.services import Received, ingest_rounds, table_register
    from rounds.simulation import simulate_rounds

    posted = 0
    for number in range(tables):
        code = f"T{number + 1:02d}"
        config = "us-30k" if number == 0 else "se-50kr"
        table_register(code=code, config_name=config, actor=SYSTEM)
        table = Table.objects.get(code=code)
        version = TableConfigVersion.objects.filter(config=table.config).order_by("-version").first()
        pool = version.pool.versions.order_by("-version").first().rules() if version.pool else None
        received = []
        for wire in simulate_rounds(
            table=code, rules=version.rules(), pool=pool, rng=random.Random(number),
            start=DEALT_FROM, count=SEED_ROUNDS, dealer_error_rate=0.15, rule_break_rate=0.03,
        ):
            serializer = RoundRecordSerializer(data=wire)
            assert serializer.is_valid(), serializer.errors
            received.append(Received(serializer.validated_data, json.dumps(wire).encode()))
        for result in ingest_rounds(table=table, received=received):
            if isinstance(result, Exception):
                raise result
            posted += 1
    return posted


def _columns(cursor, table: str) -> list[str]:
    cursor.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = %s ORDER BY ordinal_position", [table])
    return [column for (column,) in cursor.fetchall()]


def _clone(cursor, table: str, source: str, changed: dict[str, str]) -> int:
    """INSERT into ``table`` every row of ``source`` (aliased ``s``), ``changed`` columns computed."""
    columns = [c for c in _columns(cursor, table) if c != "id" or "id" in changed]
    values = ", ".join(changed.get(c, f"s.{c}") for c in columns)
    cursor.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {values} FROM {source}")
    return cursor.rowcount


def clone(*, rounds: int, days: int, every: int = 4, audit_events: bool = True, ledger: bool = False,
          then=None, tag: str = "", source_day=None, first_shift: int = 1) -> dict[str, int]:
    """Clone the stored rounds in SQL up to ``rounds`` over ``days`` gaming days; counts of what was made.

    ``every``: the submissions (kept bodies) and audit events of every ``every``-th copy are
    cloned (4: a quarter; 1: all of them). ``audit_events=False`` clones none, for a caller
    that writes them itself. ``ledger=True``: the cloned meter events go on from each pool's
    last event, each one's meter, overflow and reserve after it the one before's plus its
    deltas (otherwise they keep their sources' figures). ``then(cursor)`` is called inside the
    transaction once the clones are in, while the temporary table ``clone_of`` (source, k, id,
    shift) exists; the counts it answers, if any, are added to these. ``tag`` marks the copies'
    round ids, so that two clonings of the same rounds never take the same id. ``source_day``:
    only that gaming day's rounds are cloned (all of them otherwise); ``first_shift``: the
    nearest day a copy lands on, so many days before its source's.
    """
    from django.db import connection, transaction
    from django.db.models import Max, Min

    from rounds.models import Round
    from rounds.partitions import partitions_make
    from rounds.services.day_totals import day_totals_rebuild
    from rounds.services.work_tally import work_tally_rebuild

    sources = Round.objects.filter(gaming_day=source_day) if source_day else Round.objects.all()
    seeds = sources.count()
    copies = max(1, -(-(rounds - seeds) // seeds))
    spread = sources.aggregate(first=Min("gaming_day"), last=Max("gaming_day"))  # before the copies join them
    first_day = spread["first"]
    partitions_make(first_day - timedelta(days=n) for n in range(first_shift, first_shift + days))
    chosen = f"WHERE r.gaming_day = '{source_day.isoformat()}'" if source_day else ""
    counts: dict[str, int] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        # The clones copy rows that were checked when they were posted: a throwaway
        # database may skip re-checking keys and append-only triggers for them.
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("SET LOCAL work_mem = '256MB'")
        cursor.execute(f"""
            CREATE TEMP TABLE clone_of ON COMMIT DROP AS
            SELECT r.id AS source, k, nextval(pg_get_serial_sequence('rounds_round', 'id')) AS id,
                   make_interval(days => {first_shift} + k % {days}) AS shift
            FROM rounds_round r CROSS JOIN generate_series(1, {copies}) AS k {chosen}
            ORDER BY k DESC, r.id LIMIT {rounds - seeds}""")
        cursor.execute("CREATE INDEX ON clone_of (source)")
        cursor.execute("ANALYZE clone_of")
        joined = "clone_of c JOIN {} s ON s.{} = c.source"
        day = "(s.gaming_day - c.shift)::date"
        counts["rounds"] = seeds + _clone(cursor, "rounds_round", joined.format("rounds_round", "id"), {
            "id": "c.id", "round_id": f"s.round_id || '.{tag}' || c.k", "gaming_day": day,
            "dealt_at": "s.dealt_at - c.shift", "received_at": "s.received_at - c.shift",
            "dealer": "s.dealer || '.' || c.k % 20"})
        _clone(cursor, "rounds_roundkey", joined.format("rounds_roundkey", "id"), {
            "id": "c.id", "round_id": f"s.round_id || '.{tag}' || c.k", "gaming_day": day})
        counts["seats"] = _clone(cursor, "rounds_seat", joined.format("rounds_seat", "round_id"), {
            "round_id": "c.id", "gaming_day": day, "player": "s.player || CASE s.player WHEN '' THEN '' ELSE '.' || c.k % 50 END"})
        counts["findings"] = _clone(cursor, "rounds_finding", joined.format("rounds_finding", "round_id"), {
            "round_id": "c.id", "created_at": "s.created_at - c.shift",
            "state_changed_at": "s.state_changed_at - c.shift"})
        cursor.execute("SELECT coalesce(max(seq), 0) FROM progressive_meterevent")
        (last,) = cursor.fetchone()
        events = joined.format("progressive_meterevent", "round_id")
        changed = {"round_id": "c.id", "created_at": "s.created_at - c.shift",
                   "seq": f"{last} + row_number() OVER (PARTITION BY s.pool_id ORDER BY c.id, s.seq)"}
        if ledger:
            events += (" JOIN (SELECT DISTINCT ON (pool_id) pool_id, meter_after, overflow_after, reserve_after"
                       " FROM progressive_meterevent ORDER BY pool_id, seq DESC) b ON b.pool_id = s.pool_id")
            running = "sum(s.{}) OVER (PARTITION BY s.pool_id ORDER BY c.id, s.seq)"
            changed |= {"meter_after": f"b.meter_after + {running.format('delta')}",
                        "overflow_after": f"b.overflow_after + {running.format('overflow_delta')}",
                        "reserve_after": f"b.reserve_after + {running.format('reserve_delta')}"}
        counts["meter events"] = _clone(cursor, "progressive_meterevent", events, changed)
        quarter = "clone_of c JOIN {} s ON s.{} = c.source AND c.k % " + str(every) + " = 0"
        counts["submissions"] = _clone(
            cursor, "rounds_submission", quarter.format("rounds_submission", "round_id"), {
                "round_id": "c.id", "received_at": "s.received_at - c.shift",
                "claimed_round": f"s.claimed_round || '.{tag}' || c.k"})
        if audit_events:
            cursor.execute("SELECT coalesce(max(seq), 0) FROM audit_auditevent")
            (last,) = cursor.fetchone()
            counts["audit events"] = _clone(
                cursor, "audit_auditevent",
                "clone_of c JOIN audit_auditevent s ON s.object_type = 'rounds.round' "
                f"AND s.object_id = c.source::text AND c.k % {every} = 0", {
                    "seq": f"{last} + row_number() OVER (ORDER BY c.id, s.seq)",
                    "at": "s.at - c.shift", "object_id": "c.id::text",
                    "hash": "encode(sha256(convert_to(c.id::text || '/' || s.seq, 'UTF8')), 'hex')"})
        if then is not None:
            counts.update(then(cursor) or {})
    with connection.cursor() as cursor:
        # Statistics first, as autovacuum would have gathered them over the year the copies
        # stand for: planned without them, the year's recount below had not ended in 25 minutes.
        cursor.execute("ANALYZE rounds_round, rounds_seat, rounds_finding")
    # The copies' day totals, as the service keeps them for rounds it stores (``rounds.DayTotal``):
    # every day a copy landed on counted again from its seats and findings.
    counts["day totals"] = day_totals_rebuild(day_from=spread["first"] - timedelta(days=first_shift + days - 1),
                                              day_to=spread["last"] - timedelta(days=first_shift))
    # And their findings still to work (``rounds.WorkTally``), counted from the findings.
    counts["work tallied"] = work_tally_rebuild()
    with connection.cursor() as cursor:
        # As autovacuum leaves a table that has been written for a while: statistics for the
        # planner and a visibility map, without which no scan is index-only.
        cursor.execute("VACUUM ANALYZE")
    return counts


# ---- the lists -----------------------------------------------------------------------------


def _examples() -> dict[str, str]:
    """A value of each filter that matches: a common and a rare finding code, a player, a dealer."""
    from django.db.models import Count

    from rounds.models import Finding, Round, Seat

    codes = list(Finding.objects.values("code").annotate(n=Count("id")).order_by("-n").values_list("code", "n"))
    player = Seat.objects.exclude(player="").order_by("-id").values_list("player", flat=True).first()
    rounds = Round.objects.order_by("-id")[:1].values("dealer", "gaming_day", "table__code")[0]
    return {"code": codes[0][0], "rare_code": codes[-1][0], "player": player or "",
            "dealer": rounds["dealer"], "day": rounds["gaming_day"].isoformat(),
            "table": rounds["table__code"]}


def lists() -> list[tuple[str, str]]:
    e = _examples()
    return [
        ("API rounds", "/api/v1/rounds/"),
        (f"API rounds ?code= (common: {e['code']})", f"/api/v1/rounds/?code={e['code']}"),
        (f"API rounds ?code= (rare: {e['rare_code']})", f"/api/v1/rounds/?code={e['rare_code']}"),
        ("API rounds ?player=", f"/api/v1/rounds/?player={e['player']}"),
        ("API rounds ?dealer=", f"/api/v1/rounds/?dealer={e['dealer']}"),
        ("API rounds ?table=", f"/api/v1/rounds/?table={e['table']}"),
        ("API rounds ?status=flagged", "/api/v1/rounds/?status=flagged"),
        ("API rounds ?gaming_day=", f"/api/v1/rounds/?gaming_day={e['day']}"),
        ("API rounds ?player= &code=", f"/api/v1/rounds/?player={e['player']}&code={e['code']}"),
        ("API findings", "/api/v1/findings/"),
        ("API findings ?code=", f"/api/v1/findings/?code={e['code']}"),
        ("API findings ?state=open", "/api/v1/findings/?state=open"),
        ("API findings ?dealer=", f"/api/v1/findings/?dealer={e['dealer']}"),
        ("API findings ?table=", f"/api/v1/findings/?table={e['table']}"),
        ("API meter events", "/api/v1/meter-events/"),
        ("API hits", "/api/v1/hits/"),
        ("API pool versions", "/api/v1/pool-versions/"),
        ("API meter readings", "/api/v1/meter-readings/"),
        ("API reports", "/api/v1/reports/"),
        ("admin rounds", "/admin/rounds/round/"),
        (f"admin rounds ?finding= ({e['code']})", f"/admin/rounds/round/?finding={e['code']}"),
        (f"admin rounds ?finding= ({e['rare_code']})", f"/admin/rounds/round/?finding={e['rare_code']}"),
        ("admin rounds ?player=", f"/admin/rounds/round/?player={e['player']}"),
        ("admin rounds ?dealer=", f"/admin/rounds/round/?dealer={e['dealer']}"),
        ("admin rounds ?q=<player>", f"/admin/rounds/round/?q={e['player']}"),
        ("admin rounds ?status=flagged", "/admin/rounds/round/?status__exact=flagged"),
        ("admin findings", "/admin/rounds/finding/"),
        ("admin findings ?code=", f"/admin/rounds/finding/?code__exact={e['code']}"),
        ("admin findings ?state=acknowledged", "/admin/rounds/finding/?state=acknowledged"),
        ("admin submissions", "/admin/rounds/submission/"),
        ("admin meter events", "/admin/progressive/meterevent/"),
        ("admin audit events", "/admin/trail/auditevent/"),
    ]


def measure(*, runs: int, explain: bool) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    setup_test_environment()
    user, _ = get_user_model().objects.get_or_create(
        username="bench-lists", defaults={"is_staff": True, "is_superuser": True})
    client = Client()
    client.force_login(user)
    print(f"\n{'list':<48} {'median ms':>9} {'min ms':>7} {'queries':>7} {'slowest SQL ms':>14}")
    for label, url in lists():
        response = client.get(url)
        if response.status_code != 200:
            print(f"{label:<48} HTTP {response.status_code}: {response.content[:200]!r}")
            continue
        times, slowest = [], None
        for _ in range(runs):
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                client.get(url)
                times.append((time.perf_counter() - started) * 1000)
            worst = max(captured.captured_queries, key=lambda q: float(q["time"]))
            if slowest is None or float(worst["time"]) > float(slowest["time"]):
                slowest = worst
        print(f"{label:<48} {statistics.median(times):9.1f} {min(times):7.1f} "
              f"{len(captured.captured_queries):7d} {float(slowest['time']) * 1000:14.1f}")
        if explain:
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {slowest['sql']}")
                print("    " + "\n    ".join(row for (row,) in cursor.fetchall()))
            print(f"    -- {slowest['sql'][:600]}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

