"""The leak test's calibration over a finding's whole life: honest players of every style, and cheats.

    .venv/bin/python -m bench.leak_test                      # the full panel, two workers
    .venv/bin/python -m bench.leak_test --tables 10 --days 30   # a quicker look

**False positives.** Each honest table seats six players drawn in turn from
a panel of styles that choose from their own cards only
(``game.protection.players``: optimal, optimal with noise of 0.05, 0.2 and
0.5 Antes, the published basic strategy, weak, tight, loose, always calls,
random), deals ``--rounds`` rounds a gaming day for ``--days`` days, a
dealer of four each day, and scores every seat as the service does. Every
test the nightly job runs (each dealer card over all hands and per dealer,
each companion's cards) is run over each player's whole history, its
figure looked at after every decision: a night's rerun looks at no more.
Printed: the share of honest player-histories ever flagged by any test,
with its exact 95 % interval, and, as a finer check of the e-values, how
often one test's figure ever reached ln(1/a) for a of 10 %, 5 % and 1 %
(Ville's bound: at most a).

**Power.** Tables of five honest players and one cheat (or four and a
colluding pair): a hole-carder who sees the dealer's first card on every
hand and on 30 % of hands, and two players who share their hole cards at
the river. Printed: the cheat's hands until first flagged (median and 90th
percentile; a seed that never flags him counts as its whole history).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from multiprocessing import Pool

from game.protection import leak
from game.protection import players as pl
from game.protection.flop_table import shipped_table as shipped_flops
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from tests.protection.styles import basic_strategy
from tests.rounds.engine_rules import SE_50KR

PAYS = PayTable.of(SE_50KR)
DEALERS = 4
STYLES = (
    "optimal", "noise_0.05", "noise_0.2", "noise_0.5", "basic", "weak", "tight", "loose", "calls", "random",
)
CHEATS = ("hole_carder_100", "hole_carder_30", "colluding_pair")
LEVELS = (0.1, 0.05, 0.01)


def _player(style: str, name: str, preflop, flops):
    if style.startswith("noise_"):
        return pl.NoisyPlayer(name, PAYS, preflop, flops, noise=float(style.split("_")[1]))
    if style.startswith("hole_carder_"):
        return pl.HoleCarder(name, PAYS, preflop, share=int(style.split("_")[-1]) / 100, flops=flops)
    kind = {
        "optimal": pl.OptimalPlayer, "basic": basic_strategy, "weak": pl.WeakPlayer,
        "tight": pl.TightPlayer, "loose": pl.LoosePlayer, "calls": pl.CallingStation, "random": pl.RandomPlayer,
    }[style]
    return kind(name, PAYS, preflop, flops)


def _seated(seed: int, cheat: str | None, preflop, flops) -> list:
    honest = [STYLES[(seed * 6 + i) % len(STYLES)] for i in range(6)]
    players = [_player(style, f"{style}#{i}", preflop, flops) for i, style in enumerate(honest)]
    if cheat == "colluding_pair":
        players[4] = pl.Colluder("pair_a", PAYS, preflop, partner="pair_b", flops=flops)
        players[5] = pl.Colluder("pair_b", PAYS, preflop, partner="pair_a", flops=flops)
    elif cheat is not None:
        players[5] = _player(cheat, cheat, preflop, flops)
    return players


def one_table(job: tuple[int, str | None, int, int]) -> dict:
    seed, cheat, days, rounds_a_day = job
    preflop, flops = shipped_table(), shipped_flops()
    players = _seated(seed, cheat, preflop, flops)
    started = time.process_time()
    dealt = pl.deal_rounds(players, days * rounds_a_day, seed=1000 + seed)
    seats = []
    for day in range(days):
        today = dealt[day * rounds_a_day:(day + 1) * rounds_a_day]
        seats += pl.scored_seats(today, PAYS, preflop, f"D-{(seed + day) % DEALERS}", flops=flops,
                                 rounds_a_day=rounds_a_day)
    traces = leak.leak_traces(seats)
    result = {"cpu": time.process_time() - started, "rounds": len(dealt), "players": {}}
    for player, found in traces.items():
        peaks = [max(t.peak, 0.0) for t in found if not t.test.dealer and not t.test.companion]
        crossed = [t for t in found if t.crossed]
        first = min((t.steps[t.crossed_at].key[0] for t in crossed), default=None)
        result["players"][player] = {
            "flagged_at": first, "codes": sorted({t.test.code for t in crossed}),
            "with": sorted({t.test.companion for t in crossed if t.test.companion}),
            "peaks": peaks,
        }
    return result


def interval_95(k: int, n: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) two-sided 95 % interval of a rate seen ``k`` times in ``n``."""
    def tail_at_most(p):
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))

    def solve(f, lo=0.0, hi=1.0):
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) else (lo, mid)
        return lo

    low = 0.0 if k == 0 else solve(lambda p: 1 - tail_at_most(p) + math.comb(n, k) * p**k * (1 - p) ** (n - k) < 0.025)
    high = 1.0 if k == n else solve(lambda p: tail_at_most(p) > 0.025)
    return low, high


def _hands_until(result: dict, player: str) -> int:
    flagged = result["players"][player]["flagged_at"]
    return (flagged if flagged is not None else result["rounds"]) + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=60, help="honest tables (six players each)")
    parser.add_argument("--cheat-tables", type=int, default=20, help="tables per kind of cheat")
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--rounds", type=int, default=20, help="rounds a gaming day")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    settings = leak.LeakSettings()
    jobs = [(seed, None, args.days, args.rounds) for seed in range(args.tables)]
    jobs += [(seed, cheat, args.days, args.rounds) for cheat in CHEATS for seed in range(args.cheat_tables)]
    started = time.time()
    with Pool(args.workers) as pool:
        results = pool.map(one_table, jobs, chunksize=1)
    honest = results[:args.tables]
    print(f"{len(jobs)} tables of {args.days} days x {args.rounds} rounds, {DEALERS} dealers; "
          f"alpha {settings.alpha} per player over his whole history, H1 shares {settings.shares}; "
          f"{time.time() - started:.0f} s wall, "
          f"{1000 * sum(r['cpu'] for r in results) / sum(r['rounds'] for r in results):.2f} ms CPU a round")
    print("\nHonest players, ever flagged by any test over the whole history (every night's rerun included):")
    print(f"  {'style':12} {'histories':>9} {'flagged':>7}  95 % interval")
    total = flagged_total = 0
    for style in STYLES:
        seen = [p for r in honest for name, p in r["players"].items() if name.split("#")[0] == style]
        flagged = sum(1 for p in seen if p["flagged_at"] is not None)
        low, high = interval_95(flagged, len(seen))
        total, flagged_total = total + len(seen), flagged_total + flagged
        print(f"  {style:12} {len(seen):9} {flagged:7}  {low:.1%} to {high:.1%}")
    low, high = interval_95(flagged_total, total)
    print(f"  {'all':12} {total:9} {flagged_total:7}  {low:.1%} to {high:.1%}")
    peaks = [peak for r in honest for p in r["players"].values() for peak in p["peaks"]]
    print(f"\nOne test's figure (each dealer card over all hands: {len(peaks)} tests) ever at ln(1/a):")
    for a in LEVELS:
        reached = sum(1 for peak in peaks if peak >= math.log(1 / a))
        low, high = interval_95(reached, len(peaks))
        print(f"  a = {a:<5} {reached:4} of {len(peaks)} = {reached / len(peaks):.2%} ({low:.2%} to {high:.2%}); "
              f"Ville's bound {a:.0%}")
    print("\nCheats, hands until first flagged (a seed never flagged counts its whole history):")
    for n, cheat in enumerate(CHEATS):
        tables = results[args.tables + n * args.cheat_tables: args.tables + (n + 1) * args.cheat_tables]
        subject = "pair_a" if cheat == "colluding_pair" else cheat
        hands = sorted(_hands_until(r, subject) for r in tables)
        caught = sum(1 for r in tables if r["players"][subject]["flagged_at"] is not None)
        named = ""
        if cheat == "colluding_pair":
            partners = {tuple(r["players"][subject]["with"]) for r in tables if r["players"][subject]["with"]}
            named = f"; named with {sorted(partners)}"
        p90 = hands[min(len(hands) - 1, math.ceil(0.9 * len(hands)) - 1)]
        print(f"  {cheat:16} caught on {caught:3}/{len(tables)}; median {statistics.median(hands):.0f} hands, "
              f"90th percentile {p90}{named}")


if __name__ == "__main__":
    main()
