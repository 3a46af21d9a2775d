"""Game protection's cost: decisions scored per second per worker, and a day of 100,000 rounds.

    .venv/bin/python -m bench.protection            # about two minutes
    .venv/bin/python -m bench.protection --quick    # about thirty seconds

1. **Decisions per second per worker, by street**, on seeded spots: the
   values alone (what a player's options are worth), and a whole scored
   decision (the values and, on the flop and river, the same street valued
   knowing each dealer card; on the river also knowing the other seats'
   cards). Wall and CPU time per decision.
2. **A day of 100,000 rounds on two workers**: rounds dealt by the demo's
   table simulator (its seats, stakes and play), scored by
   ``scoring.score_round`` in two processes; the time for the sample is
   scaled to 100,000 rounds. The goal is under 10 minutes. Only the
   scoring is timed, not reading rounds from the database or writing scores.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from datetime import datetime, timezone
from multiprocessing import Pool

from rounds.engine.record import round_from_wire
from rounds.protection import scoring
from rounds.protection import values as v
from rounds.protection.preflop import shipped_table
from rounds.simulation import TableSimulator
from tests.rounds.engine_rules import SE_50KR

PAYS = v.PayTable.of(SE_50KR)
DAY = 100_000


def _spots(count: int, board: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        deck = rng.sample(range(52), 2 + board + 2 + 4)
        yield deck[:2], deck[2:2 + board], deck[2 + board:4 + board], deck[4 + board:]


def _timed(label: str, count: int, work) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"  {label:44} {count / wall:10,.0f} /s   {wall / count * 1e3:8.3f} ms wall   "
          f"{cpu / count * 1e3:8.3f} ms CPU each")


def per_street(count: int) -> None:
    table = shipped_table()
    print(f"Decisions per second, one worker ({count} seeded spots each):")
    spots = list(_spots(count, 0, 1))
    _timed("preflop: the table's values", count, lambda: [table.values(h, PAYS) for h, _, _, _ in spots])
    for street, board, valued in (("flop", 3, v.flop_values), ("river", 5, v.river_values)):
        spots = list(_spots(count, board, 2 if street == "flop" else 3))
        v._flop.cache_clear(), v._river.cache_clear()
        _timed(f"{street}: values", count, lambda: [valued(h, b, PAYS) for h, b, _, _ in spots])
        v._flop.cache_clear(), v._river.cache_clear()

        def whole() -> None:
            for hole, board_cards, dealer, others in spots:
                for position in (0, 1):
                    valued(hole, board_cards, PAYS, known_dealer=(dealer[position],))
                valued(hole, board_cards, PAYS)
                if street == "river":
                    valued(hole, board_cards, PAYS, dead=others)

        _timed(f"{street}: scored (values and knowledge)", count, whole)


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


def _score_chunk(records: list) -> tuple[int, int, float]:
    table = shipped_table()
    started = time.process_time()
    seats = decisions = 0
    for record in records:
        for score in scoring.score_round(round_from_wire(record), PAYS, table).values():
            seats += 1
            decisions += len(score.decisions)
    return seats, decisions, time.process_time() - started


def day(rounds: int, workers: int) -> None:
    records = _dealt(rounds, seed=2026)
    chunks = [records[i::workers * 4] for i in range(workers * 4)]
    wall = time.perf_counter()
    with Pool(workers) as pool:
        done = pool.map(_score_chunk, chunks)
    wall = time.perf_counter() - wall
    seats = sum(d[0] for d in done)
    decisions = sum(d[1] for d in done)
    cpu = sum(d[2] for d in done)
    scale = DAY / rounds
    print(f"A day of {DAY:,} rounds on {workers} workers, from {rounds:,} simulated rounds "
          f"({seats:,} seats, {decisions:,} decisions):")
    print(f"  {rounds / wall:,.0f} rounds/s on {workers} workers, {cpu / rounds * 1e3:.2f} ms CPU per round")
    print(f"  the day: {wall * scale / 60:.1f} minutes on {workers} workers "
          f"({cpu * scale / 60:.1f} CPU minutes; goal: under 10 minutes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    shipped_table(), v.river_values([0, 1], [2, 3, 4, 5, 6], PAYS)  # tables built before the clocks
    per_street(50 if args.quick else 300)
    day(400 if args.quick else 3000, args.workers)


if __name__ == "__main__":
    main()
