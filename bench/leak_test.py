"""The information-leak test's error rates, measured over many seeded tables.

    .venv/bin/python -m bench.leak_test                 # 40 tables of 300 rounds, two workers
    .venv/bin/python -m bench.leak_test --tables 8      # a quicker look

Each table seats an optimal-strategy player, a weak player, a hole-carder
who sees the dealer's first card on ``--share`` of his hands, and a player
who knows the other seats' cards on the river. Every seat is scored as the
service scores a posted round and ``leak.leak_suspicions`` runs over the
table's rounds. Printed, per kind of player: how many tables flagged him
(for the honest ones that is the false-positive rate, with its 95 % upper
bound), and for the cheats in how many rounds (median and worst).
"""

from __future__ import annotations

import argparse
import statistics
from multiprocessing import Pool

from rounds.protection import leak
from rounds.protection import players as pl
from rounds.protection.codes import ProtectionCode
from rounds.protection.preflop import shipped_table
from rounds.protection.values import PayTable
from tests.rounds.engine_rules import SE_50KR

PAYS = PayTable.of(SE_50KR)
KINDS = ("optimal", "weak", "hole_carder", "colluder")
CODES = {"hole_carder": ProtectionCode.SUSPECTED_HOLE_CARDING.value,
         "colluder": ProtectionCode.SUSPECTED_COLLUSION.value}


def one_table(job: tuple[int, int, float]) -> dict[str, int | None]:
    """For each kind: the round at which the player was first flagged (any code), or None."""
    seed, rounds, share = job
    table = shipped_table()
    players = [
        pl.OptimalPlayer("optimal", PAYS, table),
        pl.WeakPlayer("weak", PAYS, table),
        pl.HoleCarder("hole_carder", PAYS, table, share=share),
        pl.Colluder("colluder", PAYS, table),
    ]
    seats = pl.scored_seats(pl.deal_rounds(players, rounds, seed), PAYS, table)
    first: dict[str, int | None] = dict.fromkeys(KINDS)
    for suspicion in leak.leak_suspicions(seats):
        if suspicion.dealer:
            continue  # the same decisions as the player's own test, on one table with one dealer
        if suspicion.player in CODES and suspicion.code != CODES[suspicion.player]:
            continue
        round_number, _ = suspicion.trace.steps[suspicion.trace.crossed_at].key
        known = first[suspicion.player]
        first[suspicion.player] = round_number if known is None else min(known, round_number)
    return first


def upper_95(flagged: int, tables: int) -> float:
    """The exact (Clopper-Pearson) one-sided 95 % upper bound of a rate seen ``flagged`` times."""
    low, high = 0.0, 1.0
    for _ in range(60):
        p = (low + high) / 2
        tail = sum(_binomial(tables, k, p) for k in range(flagged + 1))
        low, high = (p, high) if tail > 0.05 else (low, p)
    return high


def _binomial(n: int, k: int, p: float) -> float:
    from math import comb
    return comb(n, k) * p**k * (1 - p) ** (n - k)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--share", type=float, default=0.5)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with Pool(args.workers) as pool:
        results = pool.map(one_table, [(seed, args.rounds, args.share) for seed in range(args.tables)])
    settings = leak.LeakSettings()
    print(f"{args.tables} tables of {args.rounds} rounds; threshold {settings.threshold:.2f}, "
          f"H1 share {settings.share}; the hole-carder sees a card on {args.share:.0%} of hands")
    for kind in KINDS:
        rounds = [r[kind] for r in results if r[kind] is not None]
        line = f"  {kind:12} flagged on {len(rounds):3}/{args.tables} tables"
        if kind in CODES:
            if rounds:
                line += f"; within {statistics.median(rounds):.0f} rounds (median), {max(rounds)} (worst)"
        else:
            line += f"; false-positive rate {len(rounds) / args.tables:.1%} (95 % upper bound " \
                    f"{upper_95(len(rounds), args.tables):.1%})"
        print(line)


if __name__ == "__main__":
    main()
