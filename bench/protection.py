"""Game protection's cost: decisions scored per second per worker, and a day of 100,000 rounds.

    .venv/bin/python -m bench.protection            # about ten minutes
    .venv/bin/python -m bench.protection --quick    # about a minute

1. **Decisions per second per worker, by street**, on seeded rounds of six
   seats: the values alone (what a player's options are worth), and a whole
   scored decision (the values and, on the flop and river, the same street
   valued knowing each dealer card; on the river also knowing the other
   seats' cards), for one seat alone and for the round's six seats together
   (as ``scoring.score_seats`` scores them: the dealer's hands valued once
   for all). The flop both ways: valued exactly, and read from the shipped
   table of flops (``game/protection/data/flop_values.npz``). Wall and CPU
   time per decision.
2. **A day of 100,000 rounds on two workers**: rounds dealt by the demo's
   table simulator (its seats, stakes and play), scored by
   ``scoring.score_round`` in two processes, in turns with every flop valued
   exactly (A) and with the shipped table of flops (B), as the nightly job
   scores; the time for the sample is scaled to 100,000 rounds. The goal is
   under 10 minutes. Only the scoring is timed, not reading rounds from the
   database or writing scores. ``--against DIR`` times another checkout of
   the project instead of A (a ``git worktree`` of an earlier commit): both
   with the shipped table, in turns, the same rounds, so that a change's
   gain is measured in one run on a shared machine.

    .venv/bin/python -m bench.protection --against /tmp/before   # git worktree add /tmp/before HEAD~1
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from game.protection import scoring
from game.protection import values as v
from game.protection.flop_table import shipped_table as shipped_flop_table
from game.protection.preflop import shipped_table
from rounds.simulation import TableSimulator
from tests.game.engine_rules import SE_50KR

PAYS = v.PayTable.of(SE_50KR)
DAY = 100_000


SEATS = 6  # a round's seats, about as many as the demo's tables seat


def _rounds(count: int, board: int, seed: int):
    """Seeded rounds: every seat's hole cards, the board seen, the dealer's cards."""
    rng = random.Random(seed)
    for _ in range(count):
        deck = rng.sample(range(52), board + 2 + 2 * SEATS)
        holes = [tuple(deck[board + 2 + 2 * i: board + 4 + 2 * i]) for i in range(SEATS)]
        yield holes, deck[:board], deck[board:board + 2]


def _timed(label: str, count: int, work, *args) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    work(*args)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"  {label:58} {count / wall:8,.0f} /s   {wall / count * 1e3:7.3f} ms wall   "
          f"{cpu / count * 1e3:7.3f} ms CPU each")


def _valued(rounds, own) -> None:
    for holes, board, _ in rounds:
        own(holes[0], board)


def _scored(rounds, street: str, own, seats: int) -> None:
    """A round's decisions on a street, as ``scoring.score_seats`` values them: each of its first
    ``seats`` seats' own values (``own``, or None: valued exactly beside the knowledge), every
    piece of knowledge (``scoring.knowledge_views``), the views all valued in one pass, and on
    the river each seat's shares (``scoring.river_shares``)."""
    for holes, board, dealer in rounds:
        views = []
        for hole in holes[:seats]:
            if own is None:
                views.append(v.View.of(hole))
            else:
                own(hole, board)
            others = {f"seat {n}": h for n, h in enumerate(holes) if h != hole}
            views += scoring.knowledge_views(street, hole, dealer, others).values()
            if street == "river":
                scoring.river_shares(hole, board, others, PAYS)
        v.values_of(views, board, PAYS)


def per_street(count: int) -> None:
    table, flops = shipped_table(), shipped_flop_table()
    print(f"Decisions per second, one worker ({count} seeded rounds of {SEATS} seats each):")
    rounds = list(_rounds(count, 0, 1))
    _timed("preflop: the table's values", count, lambda: [table.values(h[0], PAYS) for h, _, _ in rounds])
    exact = {"flop": lambda h, b: v.flop_values(h, b, PAYS), "river": lambda h, b: v.river_values(h, b, PAYS)}
    for street, board in (("flop", 3), ("river", 5)):
        rounds = list(_rounds(count, board, 2 if street == "flop" else 3))
        ways = [("exact", exact[street], None)]
        if street == "flop" and flops is not None:
            reader = lambda h, b: flops.values(h, b, PAYS)
            ways.append(("the table's", reader, reader))
        for way, own, scored_own in ways:
            v.forget_values()
            _timed(f"{street}: values ({way})", count, _valued, rounds, own)
            v.forget_values()
            _timed(f"{street}: scored alone ({way} values and knowledge)", count,
                   _scored, rounds, street, scored_own, 1)
            v.forget_values()
            _timed(f"{street}: scored, {SEATS} seats together (the same)", count * SEATS,
                   _scored, rounds, street, scored_own, SEATS)


def _dealt(rounds: int, seed: int) -> list:
    start = datetime(2026, 12, 1, 18, tzinfo=timezone.utc)
    tables = [
        TableSimulator(table=f"T-{n}", rules=SE_50KR, rng=random.Random(seed + n), start=start)
        for n in range(8)
    ]
    records = []
    while len(records) < rounds:
        for simulator in tables:
            records.append(simulator.deal().record)
    return records[:rounds]


# A worker of the day: run in a checkout of the project (this one or ``--against``'s) on
# its share of the rounds, it prints its wall and CPU seconds, seats and decisions scored.
# It reads only what every version of the scoring has had, so either checkout can run it; where
# the checkout weighs companions' pairs by their lines, it builds each table's model as the nightly does.
_WORKER = """
import pickle, sys, time
from game.protection import scoring, values
from game.protection.flop_table import shipped_table as flop_table
from game.protection.preflop import shipped_table
from game.record import round_from_wire
from tests.game.engine_rules import SE_50KR

path, part, parts, with_flops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
with open(path, "rb") as f:
    records = pickle.load(f)[part::parts]
pays = values.PayTable.of(SE_50KR)
table, flops = shipped_table(), flop_table() if with_flops else None
# The hand tables and each street's layout of the cards to come are built before the clocks.
values.river_values([0, 1], [2, 3, 4, 5, 6], pays)
values.flop_values([0, 1], [2, 3, 4], pays)
values.flop_values([0, 1], [2, 3, 4], pays, known_dealer=(5,))
try:  # the hole-carding test's table, where the checkout has one
    from game.protection import seen_table
    seen_table.shipped()
except ImportError:
    pass
try:  # the collusion test's line model, where the checkout has one: each table's day of lines
    from game.protection.lines import LineModel
except ImportError:
    LineModel = None
wall, cpu = time.perf_counter(), time.process_time()
rounds = [(record["table"], round_from_wire(record)) for record in records]
models = {}
if LineModel is not None:
    shown = {}
    for code, record in rounds:
        shown.setdefault(code, []).extend(scoring.shown_seats(record))
    models = {code: LineModel.of(seats) for code, seats in shown.items()}
seats = decisions = 0
for code, record in rounds:
    extra = (models[code],) if models else ()
    for score in scoring.score_round(record, pays, table, flops, *extra).values():
        seats += 1
        decisions += len(score.decisions)
print(time.perf_counter() - wall, time.process_time() - cpu, seats, decisions)
"""


def _day_turn(path: Path, checkout: Path, workers: int, with_flops: bool) -> tuple[float, float, int, int]:
    """One turn: ``workers`` processes in ``checkout`` score their shares at once; the turn's wall
    time is the slowest one's."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    running = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path), str(part), str(workers), "1" if with_flops else "0"],
            cwd=checkout, env=env, stdout=subprocess.PIPE, text=True,
        )
        for part in range(workers)
    ]
    done = []
    for process in running:
        out, _ = process.communicate()
        if process.returncode:
            raise SystemExit(f"a worker in {checkout} failed")
        done.append([float(x) for x in out.split()])
    return max(d[0] for d in done), sum(d[1] for d in done), int(sum(d[2] for d in done)), int(sum(d[3] for d in done))


def day(rounds: int, workers: int, turns: int, against: Path | None) -> None:
    here = Path(__file__).resolve().parent.parent
    if against is not None:
        ways = [(f"A, {against}", against, True), ("B, this checkout", here, True)]
    else:
        ways = [("A, every flop valued exactly", here, False)]
        if shipped_flop_table() is not None:
            ways.append(("B, the shipped table of flops", here, True))
        else:
            print("(no table of flops is shipped: B is not measured)")
    taken: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in ways}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rounds.pickle"
        path.write_bytes(pickle.dumps(_dealt(rounds, seed=2026)))
        for _ in range(turns):
            for label, checkout, with_flops in ways:
                wall, cpu, seats, decisions = _day_turn(path, checkout, workers, with_flops)
                taken[label].append((wall, cpu))
    scale = DAY / rounds
    print(f"A day of {DAY:,} rounds on {workers} workers, from {rounds:,} simulated rounds "
          f"({seats:,} seats, {decisions:,} decisions), {turns} turns of each, alternating:")
    for label, turns_taken in taken.items():
        wall = sorted(w for w, _ in turns_taken)[len(turns_taken) // 2]
        cpu = sorted(c for _, c in turns_taken)[len(turns_taken) // 2]
        print(f"  {label}: {rounds / wall:,.0f} rounds/s on {workers} workers, "
              f"{cpu / rounds * 1e3:.2f} ms CPU per round (medians)")
        print(f"    the day: {wall * scale / 60:.1f} minutes on {workers} workers "
              f"({cpu * scale / 60:.1f} CPU minutes; goal: under 10 minutes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--turns", type=int, default=2, help="turns of each way for the day, alternating")
    parser.add_argument("--against", type=Path, help="another checkout whose day is timed in turns with this one's")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    shipped_table(), shipped_flop_table()  # read before the clocks
    # The hand tables and each street's layout of the cards to come are built before the clocks.
    v.river_values([0, 1], [2, 3, 4, 5, 6], PAYS)
    v.flop_values([0, 1], [2, 3, 4], PAYS)
    v.flop_values([0, 1], [2, 3, 4], PAYS, known_dealer=(5,))
    per_street(50 if args.quick else 300)
    day(400 if args.quick else 3000, args.workers, 1 if args.quick else args.turns, args.against)


if __name__ == "__main__":
    main()
