"""What reading a companion's chips moves in the collusion test's null, with and without the line model.

    .venv/bin/python -m bench.companion_lines --rounds-a-day 100 --days 3     # about four minutes
    .venv/bin/python -m bench.companion_lines --rounds-a-day 20 --days 15 --line-days 14

Each table seats four honest players who read no one (the published basic
strategy, tight, loose and optimal, in turn) and two who read the table:
the rule of thumb on companions' chips and the card-removal watcher
(``players.ChipWatcher``, ``players.CardRemovalWatcher``: written apart from
the scoring code), or, on every fourth table, a pair sharing hole cards at
the river. Every seat is scored as the service scores it, once with every
companion's possible pair counted alike and once weighed by how likely his
shown line is with it (``game.protection.lines``, its model the table's day
of ``--rounds-a-day`` rounds, and with ``--line-days`` a third time, its
model pooled over that many of the table's days, as the service's
``PROTECTION_LINE_DAYS``). Printed for each kind of player, over every
companion test step: the informed choices, the number the null expects,
their relative excess with its 95 % interval (a normal bound from the
steps' binomial spread), and z. An honest player's excess is the null's
error; the pair's is the test's power.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from multiprocessing import Pool

from game.protection import players as pl
from game.protection.flop_table import shipped_table as shipped_flops
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from tests.game.engine_rules import SE_50KR
from tests.game.protection.styles import basic_strategy

PAYS = PayTable.of(SE_50KR)
NULLS = ("every pair alike", "lines of the day", "lines of the last days")
KINDS = {"chip": "table-watcher, chips", "removal": "table-watcher, card removal",
         "other": "reads no one (basic, tight, loose, optimal)", "pair": "pair sharing at the river"}


def _kind(player: str) -> str:
    return "pair" if player.startswith("pair") else player if player in ("chip", "removal") else "other"


def one_table(job: tuple[int, int, int, int]) -> dict:
    seed, rounds_a_day, days, line_days = job
    preflop, flops = shipped_table(), shipped_flops()
    honest = [lambda n: basic_strategy(n, PAYS, preflop, flops), lambda n: pl.TightPlayer(n, PAYS, preflop, flops),
              lambda n: pl.LoosePlayer(n, PAYS, preflop, flops), lambda n: pl.OptimalPlayer(n, PAYS, preflop, flops)]
    players = [honest[(seed + i) % 4](f"c{i}") for i in range(4)]
    if seed % 4 == 3:
        players += [pl.Colluder("pair_a", PAYS, preflop, partner="pair_b", flops=flops),
                    pl.Colluder("pair_b", PAYS, preflop, partner="pair_a", flops=flops)]
    else:
        players += [pl.ChipWatcher("chip", PAYS, preflop, flops), pl.CardRemovalWatcher("removal", PAYS, preflop, flops)]
    random.Random(seed).shuffle(players)
    tally: dict[tuple[str, str], list[float]] = {}
    history = []  # each day's own line model, oldest first
    for day in range(days):
        dealt = pl.deal_rounds(players, rounds_a_day, seed=seed * 1000 + day)
        nulls = {NULLS[0]: {"watching": False}, NULLS[1]: {"watching": True}}
        if line_days > 1:
            nulls[NULLS[2]] = {"watching": True, "earlier": history, "line_days": line_days}
        for null, how in nulls.items():
            for seat in pl.scored_seats(dealt, PAYS, preflop, flops=flops, rounds_a_day=rounds_a_day, **how):
                kind = _kind(seat.player)
                for decision in seat.score.decisions:
                    for knowledge, informed in decision.informed.items():
                        if informed.shares is None or (kind == "pair" and "pair_" not in knowledge):
                            continue
                        q = informed.shares[decision.chosen]
                        if 0 < q < 1:
                            t = tally.setdefault((null, kind), [0.0, 0.0, 0.0, 0.0])
                            t[3] += 1
                            t[0] += decision.chosen == informed.best
                            t[1] += q
                            t[2] += q * (1 - q)
        history.append(pl.day_lines(dealt))
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.companion_lines", description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=64)
    parser.add_argument("--rounds-a-day", type=int, default=100)
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--line-days", type=int, default=1,
                        help="also weigh by lines pooled over this many of the table's days (the service's "
                             "PROTECTION_LINE_DAYS); 1: the day's only")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    started = time.time()
    total: dict[tuple[str, str], list[float]] = {}
    jobs = [(s, args.rounds_a_day, args.days, args.line_days) for s in range(args.tables)]
    with Pool(args.workers) as pool:
        for tally in pool.imap_unordered(one_table, jobs):
            for key, values in tally.items():
                into = total.setdefault(key, [0.0, 0.0, 0.0, 0.0])
                for i, x in enumerate(values):
                    into[i] += x
    print(f"{args.tables} tables, {args.days} days of {args.rounds_a_day} rounds, "
          f"{time.time() - started:.0f} s on {args.workers} workers")
    print(f"  {'null':26} {'player':44} {'steps':>6} {'informed':>8} {'expected':>8}  excess (95 %)         z")
    for null in NULLS:
        for kind, words in KINDS.items():
            if (null, kind) not in total:
                continue
            informed, expected, spread, steps = total[null, kind]
            half = 1.96 * math.sqrt(spread) / expected
            excess = informed / expected - 1
            print(f"  {null if null != NULLS[2] else f'lines of the last {args.line_days} days':26} {words:44} "
                  f"{steps:6.0f} {informed:8.0f} {expected:8.1f}  {excess:+7.2%} ({excess - half:+.2%} to {excess + half:+.2%})"
                  f"  {(informed - expected) / math.sqrt(spread):+5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
