"""Reading a round record and writing its answer: the contract's reader and writer against the hand-written ones.

    cd /work/main && .venv/bin/python -m bench.wire            # 2,000 rounds a configuration, about a minute
    cd /work/main && .venv/bin/python -m bench.wire --quick    # 500, about half a minute

``rounds.wire.contract`` states every field once, and ``rounds.wire.shapes``
makes the fast reader (``record_fast``) and the answer's writer
(``round_data``) from that table. Before it, both were written by hand. This
puts the two side by side in one process, on the same rounds:

- *old* is the hand-written code exactly as it was at ``--before`` (default
  f569e0c, the last commit with it): ``rounds/api/fields.py`` and
  ``rounds/api/serializers.py`` are read from git into a package of their own,
  the engine they import read where it lives now (``game``);
- *new* is the working tree's.

The rounds are dealt by ``bench.dealing`` (4 seats, both shipped
configurations, every fourth with a wrong payout so that answers carry
findings), stored through ``rounds.services.ingest_rounds`` in a throwaway
database (``bench.scaffold``), and read back with ``selectors.round_list``
(seats, findings and meter events prefetched). Nothing is timed before both
sides agree: the same canonical record (as a dict, as its JSON text in key
order, and as its record hash) for every body, and the same answer JSON, byte
for byte, for every round.

Timed, in CPU seconds of this process, old and new taking turns pass by pass,
best of several passes:

1. the record: ``record_fast`` on each body (the JSON already parsed);
2. the answer to a post: old ``round_data(round_)`` reading the rows the
   ingest handed it through Django's prefetch cache, new ``round_data(round_,
   seats=…, findings=…, meter_events=…)`` given them;
3. the answer to a read: both reading the rows from the prefetched round.

Nothing is asserted; docs/SCALING.md keeps the figures.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from bench import scaffold
from bench.dealing import VARIANTS, deal_rounds

BEFORE = "f569e0c"  # the last commit whose reader and answer were written by hand
OLD_FILES = ("rounds/api/fields.py", "rounds/api/serializers.py")
TABLES = {"se-50kr": "W01", "us-30k": "W02"}


class Disagreement(AssertionError):
    """Old and new read a record, or wrote an answer, differently."""


def old_code(commit: str, into: Path):
    """The hand-written reader and writer as they were at ``commit``, importable as ``wire_before``."""
    package = into / "wire_before"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for path in OLD_FILES:
        text = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=scaffold.ROOT, check=True,
                              capture_output=True, text=True).stdout
        # The engine moved from rounds/engine to game/ with nothing else changed.
        (package / Path(path).name).write_text(text.replace("rounds.engine", "game"))
    sys.path.insert(0, str(into))
    return importlib.import_module("wire_before.serializers")


def bodies(count: int, seed: int) -> dict[str, list[dict]]:
    """Each configuration's dealt rounds as a table posts them, parsed from JSON."""
    dealt = {}
    for variant in VARIANTS:
        wires = deal_rounds(variant, count, seed)
        for number, wire in enumerate(wires):
            wire["table"] = TABLES[variant.name]
            if number % 4 == 0:  # a dealer's mistake: the answer carries a finding
                paid = wire["seats"][0]["paid"]
                paid["ante"] = str(Decimal(paid["ante"]) + 5)
        dealt[variant.name] = json.loads(json.dumps(wires))
    return dealt


def store(dealt: dict[str, list[dict]], read: Callable) -> list:
    """Every round stored through the service, then read back as the API reads it."""
    from trail.services import SYSTEM
    from rounds.selectors import round_list
    from rounds.services import Received, ingest_rounds, table_register

    for config, wires in dealt.items():
        table = table_register(code=TABLES[config], config_name=config, actor=SYSTEM).table
        for start in range(0, len(wires), 100):
            received = [Received(read(w), json.dumps(w).encode()) for w in wires[start:start + 100]]
            ingest_rounds(table=table, received=received, request_id="bench-wire")
    return list(round_list().order_by("id"))


def check_records(old, new, wires: list[dict]) -> None:
    from rounds.services import record_hash

    for wire in wires:
        before, after = old(copy.deepcopy(wire)), new(copy.deepcopy(wire))
        if before is None or after != before or json.dumps(after) != json.dumps(before) \
                or record_hash(after) != record_hash(before):
            raise Disagreement(f"round {wire['round']} of {wire['table']}: {before} became {after}")


def check_answers(old, new, rounds: list, rows: list[dict]) -> None:
    for round_, given in zip(rounds, rows):
        before = json.dumps(old(round_))
        for after in (new(round_), new(round_, **given)):
            if json.dumps(after) != before:
                raise Disagreement(f"the answer for round {round_.pk}: {before} became {json.dumps(after)}")


def seconds_per_round(runs: dict[str, Callable[[], None]], count: int, passes: int) -> dict[str, float]:
    """CPU seconds per round of each run (one pass over ``count`` rounds), best of ``passes``;
    the runs take turns, so a busy spell on the machine falls on all of them."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(passes):
        for name, run in runs.items():
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
    return {name: seconds / count for name, seconds in best.items()}


def timings(old, new, wires: list[dict], rounds: list, rows: list[dict], passes: int) -> dict[str, float]:
    old_read, new_read = old.record_fast, new.record_fast
    old_answer, new_answer = old.round_data, new.round_data
    work = list(zip(rounds, rows))

    # Each pass drops what it makes, as the service does.
    def read_old():
        for wire in wires:
            old_read(wire)

    def read_new():
        for wire in wires:
            new_read(wire)

    def answer_old():
        for round_ in rounds:
            old_answer(round_)

    def answer_new_given():
        for round_, given in work:
            new_answer(round_, **given)

    def answer_new_read():
        for round_ in rounds:
            new_answer(round_)

    reads = seconds_per_round({"record, old": read_old, "record, new": read_new}, len(wires), passes)
    answers = seconds_per_round(
        {"answer, old": answer_old, "answer to a post, new": answer_new_given,
         "answer to a read, new": answer_new_read},
        len(rounds), passes,
    )
    return reads | answers


def report(t: dict[str, float]) -> list[str]:
    lines = []

    def line(what: str, old: str, new: str) -> None:
        ratio = t[old] / t[new]
        lines.append(
            f"  {what:<44} old {t[old] * 1e6:6.2f} µs ({1 / t[old]:>9,.0f}/s)   "
            f"new {t[new] * 1e6:6.2f} µs ({1 / t[new]:>9,.0f}/s)   new is {ratio:.2f}x as fast"
        )

    line("reading a record (record_fast)", "record, old", "record, new")
    line("the answer to a post (rows given)", "answer, old", "answer to a post, new")
    line("the answer to a read (rows prefetched)", "answer, old", "answer to a read, new")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wire", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 rounds a configuration, 5 passes")
    parser.add_argument("--rounds", type=int, help="rounds a configuration (default 2,000)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--before", default=BEFORE, help=f"the commit of the old code (default {BEFORE})")
    args = parser.parse_args(argv)
    count = args.rounds or (500 if args.quick else 2_000)
    passes = 5 if args.quick else 9

    name, url = scaffold.database_create("bench_wire")
    try:
        scaffold.django_setup(url)
        print("\n".join(scaffold.machine_lines(url)))
        with tempfile.TemporaryDirectory() as temporary:
            old = old_code(args.before, Path(temporary))
            from rounds.wire import serializers as new

            dealt = bodies(count, args.seed)
            for config, wires in dealt.items():
                check_records(old.record_fast, new.record_fast, wires)
            stored = store(dealt, new.record_fast)
            rows = [{"seats": list(r.seats.all()), "findings": list(r.findings.all()),
                     "meter_events": list(r.meter_events.all())} for r in stored]
            check_answers(old.round_data, new.round_data, stored, rows)
            print(f"\n{count:,} rounds of each configuration, 4 seats; old is {args.before}, new the working "
                  f"tree; both read every record and wrote every answer alike. CPU time a round, best of "
                  f"{passes} passes, old and new in turns:")
            for config, wires in dealt.items():
                mine = [(r, g) for r, g in zip(stored, rows) if r.table.code == TABLES[config]]
                findings = sum(len(g["findings"]) for _, g in mine)
                print(f"\n{config} ({findings:,} findings in {len(mine):,} answers)")
                t = timings(old, new, wires, [r for r, _ in mine], [g for _, g in mine], passes)
                print("\n".join(report(t)))
        print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        scaffold.database_drop(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
