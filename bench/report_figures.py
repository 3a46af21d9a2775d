"""What the typed declaration of a report's figures costs: old code and new, in turns, in one run.

    .venv/bin/python -m bench.report_figures --vs REV [--players 20000] [--tables 100] [--passes 6]

Builds one busy day's sums (``--tables`` tables, 3 dealers and 3 shifts a
table, ``--players`` players, two currencies) and times, with the
``books/figures.py`` of ``REV`` (``git show``) against
today's:

- *write*: every group derived, the report's JSON made and encoded (what the
  merge does after reading its parts);
- *read*: the stored JSON decoded and read as the API's CSV reads it (old:
  the dict as it is; new: ``read_figures``, every group parsed);
- *page*: what the report's admin page decodes and reads (old: the whole
  JSON; new: the JSON without its players, which the database leaves out,
  parsed; the database's own work is not in it).

CPU seconds of this process (``time.process_time``) per pass, each side's
median and the spread; the machine may be busy, the sides alternate.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from books import figures as new_figures  # noqa: E402
from books.report_figures import figures_json  # noqa: E402
from books.report_reader import read_figures  # noqa: E402

BETS = ("ante", "blind", "play", "trips", "progressive")


def old_module(rev: str):
    for where in ("books/figures.py", "audit/reconciliation/figures.py"):  # the second: before books/
        shown = subprocess.run(["git", "show", f"{rev}:{where}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode == 0:
            break
    shown.check_returncode()
    text = shown.stdout
    path = Path(tempfile.mkdtemp()) / "old_figures.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("old_figures", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_figures"] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def sums_of_day(module, *, tables: int, players: int, seed: int = 7) -> dict:
    rng = random.Random(seed)

    def sums(currency: str, hands: int):
        handle = {b: Decimal(rng.randrange(0, 200) * 50) * hands for b in BETS}
        return module.Sums(
            currency=currency, rounds=hands // 3 + 1, hands=hands, handle=handle,
            win={b: Decimal(rng.randrange(-100, 100) * 50) for b in BETS},
            theo_base=Decimal(rng.randrange(1, 10_000)) / 100, theo_trips=Decimal(rng.randrange(1, 5_000)) / 100,
            var_base=Decimal(rng.randrange(1, 10**7)), var_trips=Decimal(rng.randrange(1, 10**6)),
            var_cross=Decimal(rng.randrange(1, 10**5)), skill=Decimal(rng.randrange(0, 900)) / 100,
            scored_hands=hands if rng.random() < 0.9 else hands - 1, mismatches=rng.randrange(0, 3),
            overpaid=Decimal(rng.randrange(0, 4) * 50), findings={"payout_mismatch": rng.randrange(0, 3)},
        )

    def currency(i: int) -> str:
        return "SEK" if i % 5 else "USD"

    groups = {
        "tables": {f"T{t:03}": {currency(t): sums(currency(t), 900)} for t in range(tables)},
        "dealers": {f"D{d:04}": {currency(d): sums(currency(d), 300)} for d in range(tables * 3)},
        "shifts": {f"S{s}": {c: sums(c, 30_000) for c in ("SEK", "USD")} for s in range(3)},
        "players": {f"P{p:06}": {currency(p): sums(currency(p), rng.randrange(1, 60))} for p in range(players)},
    }
    casino = {c: sums(c, 90_000) for c in ("SEK", "USD")}
    return {"groups": groups, "casino": casino}


def write_old(module, day: dict) -> bytes:
    groups = {scope: module.derive_by_currency(by_key) for scope, by_key in day["groups"].items()}
    flags = [f for scope, derived in groups.items() for f in module.flags_of(module.SCOPE_OF[scope], derived)]
    figures = {"currencies": ["SEK", "USD"], "casino": {c: module.derive(s) for c, s in day["casino"].items()},
               **groups, "flags": flags, "scoring": module.scoring_of(day["casino"], groups)}
    return orjson.dumps(figures)


def write_new(module, day: dict, template: dict) -> bytes:
    groups = {scope: module.derive_by_currency(by_key) for scope, by_key in day["groups"].items()}
    flags = [f for scope, derived in groups.items() for f in module.flags_of(module.SCOPE_OF[scope], derived)]
    from books.report_figures import ReportFigures

    figures = ReportFigures(**template, currencies=["SEK", "USD"],
                            casino={c: module.derive(s) for c, s in day["casino"].items()}, **groups,
                            flags=flags, scoring=module.scoring_of(day["casino"], groups))
    return orjson.dumps(figures_json(figures))


def read_old(stored: bytes) -> int:
    figures = orjson.loads(stored)
    return sum(g["rounds"] for by in figures["tables"].values() for g in by.values())


def read_new(stored: bytes) -> int:
    figures = read_figures(orjson.loads(stored))
    return sum(g.rounds for by in figures.tables.values() for g in by.values())


def page_new(shown: bytes) -> int:
    figures = read_figures(orjson.loads(shown), without_players=True)
    return sum(g.rounds for by in figures.tables.values() for g in by.values())


TEMPLATE = {
    "day_from": "2026-11-28", "day_to": "2026-11-28", "parameters": {}, "engine_version": "bench",
    "dealer_tables": {}, "pools": {}, "reverification": {"rounds": 0, "drift": 0, "examples": []},
    "chain": {"ok": True, "checked": 0, "last_hash": "", "break_seq": None, "problem": ""},
    "config_versions": [], "pool_versions": [], "alerts": [],
}


def timed(work) -> tuple[float, object]:
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vs", required=True, metavar="REV", help="the old code's revision")
    parser.add_argument("--players", type=int, default=20_000)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--passes", type=int, default=6)
    args = parser.parse_args()

    old = old_module(args.vs)
    days = {"old": sums_of_day(old, tables=args.tables, players=args.players),
            "new": sums_of_day(new_figures, tables=args.tables, players=args.players)}
    stored = {"old": write_old(old, days["old"]), "new": write_new(new_figures, days["new"], TEMPLATE)}
    shown = orjson.dumps({k: v for k, v in orjson.loads(stored["new"]).items() if k != "players"})
    assert read_old(stored["old"]) == read_new(stored["new"]) == page_new(shown)  # the same day each way
    cpu = {(side, what): [] for side in ("old", "new") for what in ("write", "read", "page")}
    for n in range(args.passes):
        for side in (("old", "new") if n % 2 == 0 else ("new", "old")):
            if side == "old":
                cpu[side, "write"].append(timed(lambda: write_old(old, days["old"]))[0])
                cpu[side, "read"].append(timed(lambda: read_old(stored["old"]))[0])
                cpu[side, "page"].append(cpu[side, "read"][-1])  # the page decoded it all
            else:
                cpu[side, "write"].append(timed(lambda: write_new(new_figures, days["new"], TEMPLATE))[0])
                cpu[side, "read"].append(timed(lambda: read_new(stored["new"]))[0])
                cpu[side, "page"].append(timed(lambda: page_new(shown))[0])
    groups = args.tables * 4 + args.players + 5
    print(f"{args.tables} tables, {args.tables * 3} dealers, {args.players} players: {groups} groups; "
          f"stored {len(stored['old']) / 1e6:.1f} MB old, {len(stored['new']) / 1e6:.1f} MB new; "
          f"{args.passes} passes")
    for what in ("write", "read", "page"):
        for side in ("old", "new"):
            runs = cpu[side, what]
            print(f"  {what:5} {side}: median {statistics.median(runs):.3f} s CPU "
                  f"({min(runs):.3f}–{max(runs):.3f}), {statistics.median(runs) / groups * 1e6:.1f} µs a group")


if __name__ == "__main__":
    main()
