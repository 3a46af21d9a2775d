"""Game protection's cost: decisions scored per second per worker, and a day of 100,000 rounds.

    .venv/bin/python -m bench.protection            # about ten minutes
    .venv/bin/python -m bench.protection --quick    # about a minute

1. **Decisions per second per worker, by street**, on seeded spots: the
   values alone (what a player's options are worth), and a whole scored
   decision (the values and, on the flop and river, the same street valued
   knowing each dealer card; on the river also knowing the other seats'
   cards). The flop both ways: valued exactly, and read from the shipped
   table of flops (``rounds/protection/data/flop_values.npz``). Wall and CPU
   time per decision.
2. **A day of 100,000 rounds on two workers**: rounds dealt by the demo's
   table simulator (its seats, stakes and play), scored by
   ``scoring.score_round`` in two processes, in turns with every flop valued
   exactly (A) and with the shipped table of flops (B), as the nightly job
   scores; the time for the sample is scaled to 100,000 rounds. The goal is
   under 10 minutes. Only the scoring is timed, not reading rounds from the
   database or writing scores.
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
from rounds.protection.flop_table import shipped_table as shipped_flop_table
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


def _timed(label: str, count: int, work, *args) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    work(*args)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"  {label:44} {count / wall:10,.0f} /s   {wall / count * 1e3:8.3f} ms wall   "
          f"{cpu / count * 1e3:8.3f} ms CPU each")


def _valued(spots, own) -> None:
    for hole, board, _, _ in spots:
        own(hole, board)


def _scored(spots, street: str, own) -> None:
    """A scored decision's values: the player's own (``own``), then each dealer card known
    and, on the river, the other seats' cards, as ``scoring.score_seat`` values them."""
    valued = v.flop_values if street == "flop" else v.river_values
    for hole, board, dealer, others in spots:
        for position in (0, 1):
            valued(hole, board, PAYS, known_dealer=(dealer[position],))
        own(hole, board)
        if street == "river":
            valued(hole, board, PAYS, dead=others)


def per_street(count: int) -> None:
    table, flops = shipped_table(), shipped_flop_table()
    print(f"Decisions per second, one worker ({count} seeded spots each):")
    spots = list(_spots(count, 0, 1))
    _timed("preflop: the table's values", count, lambda: [table.values(h, PAYS) for h, _, _, _ in spots])
    exact = {"flop": lambda h, b: v.flop_values(h, b, PAYS), "river": lambda h, b: v.river_values(h, b, PAYS)}
    for street, board in (("flop", 3), ("river", 5)):
        spots = list(_spots(count, board, 2 if street == "flop" else 3))
        ways = [("exact", exact[street])]
        if street == "flop" and flops is not None:
            ways.append(("the table's", lambda h, b: flops.values(h, b, PAYS)))
        for way, own in ways:
            v._flop.cache_clear(), v._river.cache_clear()
            _timed(f"{street}: values ({way})", count, _valued, spots, own)
            v._flop.cache_clear(), v._river.cache_clear()
            _timed(f"{street}: scored ({way} values and knowledge)", count, _scored, spots, street, own)


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


def _score_chunk(job: tuple[list, bool]) -> tuple[int, int, float]:
    records, with_flops = job
    table, flops = shipped_table(), shipped_flop_table() if with_flops else None
    started = time.process_time()
    seats = decisions = 0
    for record in records:
        for score in scoring.score_round(round_from_wire(record), PAYS, table, flops).values():
            seats += 1
            decisions += len(score.decisions)
    return seats, decisions, time.process_time() - started


def _day_turn(records: list, workers: int, with_flops: bool) -> tuple[float, float, int, int]:
    chunks = [(records[i::workers * 4], with_flops) for i in range(workers * 4)]
    wall = time.perf_counter()
    with Pool(workers) as pool:  # new processes each turn: no values cached from the other way
        done = pool.map(_score_chunk, chunks)
    wall = time.perf_counter() - wall
    return wall, sum(d[2] for d in done), sum(d[0] for d in done), sum(d[1] for d in done)


def day(rounds: int, workers: int, turns: int) -> None:
    records = _dealt(rounds, seed=2026)
    ways = [("A, every flop valued exactly", False)]
    if shipped_flop_table() is not None:
        ways.append(("B, the shipped table of flops", True))
    else:
        print("(no table of flops is shipped: B is not measured)")
    taken: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in ways}
    for _ in range(turns):
        for label, with_flops in ways:
            wall, cpu, seats, decisions = _day_turn(records, workers, with_flops)
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
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    shipped_table(), shipped_flop_table()  # read before the clocks
    v.river_values([0, 1], [2, 3, 4, 5, 6], PAYS)
    per_street(50 if args.quick else 300)
    day(400 if args.quick else 3000, args.workers, 1 if args.quick else args.turns)


if __name__ == "__main__":
    main()
