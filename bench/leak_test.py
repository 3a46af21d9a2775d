"""The leak test's calibration over a finding's whole life: honest players of every style, and cheats.

    .venv/bin/python -m bench.leak_test                                  # the full panel, two workers
    .venv/bin/python -m bench.leak_test --tables 10 --days 30 --cheat-days 30   # a quicker look

**False positives.** Each honest table seats six players drawn in turn from
a panel of styles that choose from their own cards and what the rules let
them see (``game.protection.players``: optimal, optimal with noise of 0.05,
0.2 and 0.5 Antes, the published basic strategy, weak, tight, loose, always
calls, random, and two "table-watchers" on the basic strategy who read the
other seats' chips: by a rule of thumb, and by card removal from their
lines), deals ``--rounds`` rounds a gaming day for ``--days`` days, a dealer
of four each day, and scores every seat as the service does. Every test the
nightly job runs (hole-carding over all hands and per dealer, each
companion's cards) is run over each player's whole history, its figure
looked at after every step: a night's rerun looks at no more. Printed: the
share of honest player-histories ever flagged by any test, with its exact
95 % interval, and, as a finer check of the e-values, how often one test's
figure ever reached ln(1/a) for a of 10 %, 5 % and 1 % (Ville's bound: at
most a), and each honest style's informed choices against the number
expected (the null's own check, street by street).

**Power.** Tables of five basic-strategy players and one cheat (or four and
a pair), ``--cheat-tables`` seeds each over ``--cheat-days`` days: a
hole-carder who uses either dealer card before the flop only; before the
flop and on the flop; on every street (the card either at random, or always
the one the record lists second); a dealer who flashes his first card to
one player on 30 % of his hands (he deals every other day); a pair sharing
hole cards at the river, and one sharing them on the flop. Printed: the
cheat's hands until first flagged (median and 90th percentile; a seed that
never flags him counts as its whole history), and for the flashing dealer
that dealer's hands.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections import defaultdict
from multiprocessing import Pool

from game.protection import leak
from game.protection import players as pl
from game.protection.flop_table import shipped_table as shipped_flops
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from tests.game.engine_rules import SE_50KR
from tests.game.protection.styles import basic_strategy

PAYS = PayTable.of(SE_50KR)
DEALERS = 4
STYLES = (
    "optimal", "noise_0.05", "noise_0.2", "noise_0.5", "basic", "weak", "tight", "loose", "calls", "random",
    "chip_watcher", "removal_watcher",
)
CHEATS = (
    "preflop_either", "preflop_flop_either", "every_street_either", "every_street_second",
    "flashing_dealer", "river_pair", "flop_pair",
)
PAIRS = ("river_pair", "flop_pair")
FLASHER = "D-flash"
LEVELS = (0.1, 0.05, 0.01)
COMPANIONS = "companions"  # the collusion tests' steps, every companion's, in the style's tally


def _player(style: str, name: str, preflop, flops):
    if style.startswith("noise_"):
        return pl.NoisyPlayer(name, PAYS, preflop, flops, noise=float(style.split("_")[1]))
    kind = {
        "optimal": pl.OptimalPlayer, "basic": basic_strategy, "weak": pl.WeakPlayer,
        "tight": pl.TightPlayer, "loose": pl.LoosePlayer, "calls": pl.CallingStation, "random": pl.RandomPlayer,
        "chip_watcher": pl.ChipWatcher, "removal_watcher": pl.CardRemovalWatcher,
    }[style]
    return kind(name, PAYS, preflop, flops)


def _cheat(cheat: str, preflop, flops):
    reader = {
        "preflop_either": dict(streets=("preflop",)),
        "preflop_flop_either": dict(streets=("preflop", "flop")),
        "every_street_either": dict(),
        "every_street_second": dict(position=1),
        "flashing_dealer": dict(position=0, share=0.0),  # sees only what the flashing dealer shows
    }[cheat]
    return pl.CardReader(cheat, PAYS, preflop, flops, **reader)


def _seated(seed: int, cheat: str | None, preflop, flops) -> list:
    if cheat is None:
        honest = [STYLES[(seed * 6 + i) % len(STYLES)] for i in range(6)]
        return [_player(style, f"{style}#{i}", preflop, flops) for i, style in enumerate(honest)]
    players = [basic_strategy(f"basic#{i}", PAYS, preflop, flops) for i in range(6)]
    if cheat == "river_pair":
        players[4] = pl.Colluder("pair_a", PAYS, preflop, partner="pair_b", flops=flops)
        players[5] = pl.Colluder("pair_b", PAYS, preflop, partner="pair_a", flops=flops)
    elif cheat == "flop_pair":
        players[4] = pl.FlopColluder("pair_a", PAYS, preflop, partner="pair_b", flops=flops)
        players[5] = pl.FlopColluder("pair_b", PAYS, preflop, partner="pair_a", flops=flops)
    else:
        players[5] = _cheat(cheat, preflop, flops)
    return players


def _dealer(seed: int, day: int, cheat: str | None) -> str:
    if cheat == "flashing_dealer" and day % 2 == 0:
        return FLASHER
    return f"D-{(seed + day) % DEALERS}"


def one_table(job: tuple[int, str | None, int, int, int]) -> dict:
    seed, cheat, days, rounds_a_day, line_days = job
    preflop, flops = shipped_table(), shipped_flops()
    players = _seated(seed, cheat, preflop, flops)
    started = time.process_time()
    seats, dealers, lines = [], [], []
    for day in range(days):
        dealer = _dealer(seed, day, cheat)
        if cheat == "flashing_dealer":
            players[5].share = 0.3 if dealer == FLASHER else 0.0
        today = pl.deal_rounds(players, rounds_a_day, seed=1000 * seed + day)
        today = [pl.DealtRound(day * rounds_a_day + r.number, r.board, r.dealer, r.seats) for r in today]
        seats += pl.scored_seats(today, PAYS, preflop, dealer, flops=flops, rounds_a_day=rounds_a_day,
                                 line_days=line_days, earlier=lines)
        lines.append(pl.day_lines(today))
        dealers += [dealer] * rounds_a_day
    traces = leak.leak_traces(seats)
    result = {"cpu": time.process_time() - started, "rounds": days * rounds_a_day, "players": {}}
    for player, found in traces.items():
        overall = next(t for t in found if t.test.code == leak.HOLE_CARDING and t.test.dealer is None)
        crossed = [t for t in found if t.crossed]
        first = min((t.crossing.key[0] for t in crossed), default=None)
        by_street: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        for step in overall.steps:
            tally = by_street[step.part]
            tally[0] += step.agreed
            tally[1] += step.share
            tally[2] += step.share * (1 - step.share) / 2  # at most: the two cards' average
        for trace in found:
            if trace.test.code == leak.COLLUSION:
                for step in trace.steps:
                    tally = by_street[f"{COMPANIONS} {step.part}"]
                    tally[0] += step.agreed
                    tally[1] += step.share
                    tally[2] += step.share * (1 - step.share)
        result["players"][player] = {
            "flagged_at": first, "codes": sorted({t.test.code for t in crossed}),
            "with": sorted({t.test.companion for t in crossed if t.test.companion}),
            "peaks": [max(t.peak, 0.0) for t in found if not t.test.dealer and not t.test.companion],
            "companion_peak": max((t.peak - t.threshold for t in found if t.test.companion), default=-math.inf),
            "companion_peaks": [max(t.peak, 0.0) for t in found
                                if t.test.companion and (t.parts[leak.PAIR][0] or t.parts[leak.PAIR_FLOP][0])],
            "by_street": dict(by_street),
        }
    if cheat == "flashing_dealer":
        result["dealers"] = dealers
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
    return (flagged if flagged is not None else result["rounds"] - 1) + 1


def _flasher_hands_until(result: dict, player: str) -> int:
    hands = _hands_until(result, player)
    return sum(1 for d in result["dealers"][:hands] if d == FLASHER)


def _percentile_90(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def _honest_report(honest: list[dict]) -> None:
    print("\nHonest players, ever flagged by any test over the whole history (every night's rerun included):")
    print(f"  {'style':16} {'histories':>9} {'flagged':>7}  95 % interval   informed − expected (z) "
          "preflop / flop / river / hand / companions on the flop / on the river")
    total = flagged_total = 0
    for style in STYLES:
        seen = [p for r in honest for name, p in r["players"].items() if name.split("#")[0] == style]
        flagged = sum(1 for p in seen if p["flagged_at"] is not None)
        low, high = interval_95(flagged, len(seen))
        total, flagged_total = total + len(seen), flagged_total + flagged
        z = []
        for part in (*leak.PARTS, f"{COMPANIONS} flop", f"{COMPANIONS} river"):
            agreed = sum(p["by_street"].get(part, [0, 0, 0])[0] for p in seen)
            expected = sum(p["by_street"].get(part, [0, 0, 0])[1] for p in seen)
            spread = math.sqrt(sum(p["by_street"].get(part, [0, 0, 0])[2] for p in seen)) or 1.0
            z.append(f"{agreed - expected:+.0f} ({(agreed - expected) / spread:+.1f})")
        print(f"  {style:16} {len(seen):9} {flagged:7}  {low:.1%} to {high:.1%}   {' / '.join(z)}")
    low, high = interval_95(flagged_total, total)
    print(f"  {'all':16} {total:9} {flagged_total:7}  {low:.1%} to {high:.1%}")
    peaks = [peak for r in honest for p in r["players"].values() for peak in p["peaks"]]
    print(f"\nOne test's figure (hole-carding over all hands: {len(peaks)} tests) ever at ln(1/a):")
    for a in LEVELS:
        reached = sum(1 for peak in peaks if peak >= math.log(1 / a))
        low, high = interval_95(reached, len(peaks))
        print(f"  a = {a:<5} {reached:4} of {len(peaks)} = {reached / len(peaks):.2%} ({low:.2%} to {high:.2%}); "
              f"Ville's bound {a:.0%}")
    peaks = [peak for r in honest for p in r["players"].values() for peak in p["companion_peaks"]]
    print(f"\nOne test's figure (a companion's, his own and the pair's parts on both streets: {len(peaks)} tests) "
          "ever at ln(1/a):")
    for a in LEVELS:
        reached = sum(1 for peak in peaks if peak >= math.log(1 / a))
        low, high = interval_95(reached, len(peaks))
        print(f"  a = {a:<5} {reached:4} of {len(peaks)} = {reached / len(peaks):.2%} ({low:.2%} to {high:.2%}); "
              f"Ville's bound {a:.0%}")
    margins = sorted(p["companion_peak"] for r in honest for p in r["players"].values())
    print(f"\nCompanion tests: the highest figure less its threshold, over every honest player: "
          f"{margins[-1]:+.2f} (median {statistics.median(margins):+.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=60, help="honest tables (six players each)")
    parser.add_argument("--cheat-tables", type=int, default=20, help="tables (seeds) per kind of cheat")
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--cheat-days", type=int, default=60, help="days of a cheat's table")
    parser.add_argument("--rounds", type=int, default=20, help="rounds a gaming day")
    parser.add_argument("--cheats", nargs="*", default=list(CHEATS), choices=CHEATS)
    parser.add_argument("--line-days", type=int, default=14,
                        help="the table's days whose lines make the companion test's model (PROTECTION_LINE_DAYS)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    settings = leak.LeakSettings()
    jobs = [(seed, None, args.days, args.rounds, args.line_days) for seed in range(args.tables)]
    jobs += [(seed, cheat, args.cheat_days, args.rounds, args.line_days)
             for cheat in args.cheats for seed in range(args.cheat_tables)]
    started = time.time()
    with Pool(args.workers) as pool:
        results = pool.map(one_table, jobs, chunksize=1)
    honest = results[:args.tables]
    print(f"{args.tables} honest tables of {args.days} days, {args.cheat_tables} per cheat of {args.cheat_days} "
          f"days, x {args.rounds} rounds, {DEALERS} dealers; alpha {settings.alpha} per player over his whole "
          f"history, H1 shares {settings.shares}; lines of {args.line_days} day(s); {time.time() - started:.0f} s wall, "
          f"{1000 * sum(r['cpu'] for r in results) / sum(r['rounds'] for r in results):.2f} ms CPU a round")
    if honest:
        _honest_report(honest)
    print("\nCheats, hands until first flagged (a seed never flagged counts its whole history):")
    for n, cheat in enumerate(args.cheats):
        start = args.tables + n * args.cheat_tables
        tables = results[start:start + args.cheat_tables]
        subject = "pair_a" if cheat in PAIRS else cheat
        count = _flasher_hands_until if cheat == "flashing_dealer" else _hands_until
        hands = [count(r, subject) for r in tables]
        caught = sum(1 for r in tables if r["players"][subject]["flagged_at"] is not None)
        named = ""
        if cheat in PAIRS:
            partners = {tuple(r["players"][subject]["with"]) for r in tables if r["players"][subject]["with"]}
            margin = statistics.median(r["players"][subject]["companion_peak"] for r in tables)
            named = f"; named with {sorted(partners)}; its highest figure less the threshold, median {margin:+.2f}"
            for street in ("flop", "river"):
                agreed, expected, spread = (sum(r["players"][subject]["by_street"].get(f"{COMPANIONS} {street}",
                                                                                      [0, 0, 0])[i] for r in tables)
                                            for i in range(3))
                named += (f"; {street}: informed {agreed:.0f} against {expected:.1f} "
                          f"(z {(agreed - expected) / (math.sqrt(spread) or 1.0):+.1f})")
        accused = sum(1 for r in tables for name, p in r["players"].items()
                      if name.startswith("basic") and p["flagged_at"] is not None)
        unit = " of the flashing dealer's" if cheat == "flashing_dealer" else ""
        print(f"  {cheat:20} caught on {caught:3}/{len(tables)}; median {statistics.median(hands):.0f}{unit} hands, "
              f"90th percentile {_percentile_90(hands)}{named}; honest players flagged at these tables: {accused}")


if __name__ == "__main__":
    main()
