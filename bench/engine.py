"""How fast the engine judges hands and rounds, beside public evaluators.

    cd /work/main && .venv/bin/python -m bench.engine [--quick] [--seed N]

Everything is dealt up front (``bench.dealing``, seeded by ``--seed``), so every
contender works through the very same hands and rounds, and each library's
card conversion happens before the clock starts. A figure is the best of
several passes, each timed in CPU seconds of this process
(``time.process_time``), the contenders taking turns pass by pass: on a shared
machine the other work then disturbs the figures far less.

Before anything is timed, the four evaluators must agree on every hand, and
the engine must settle every dealt round exactly as ``bench.treys_settlement``
does: a fast wrong answer is not a result.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import phevaluator
import treys

with warnings.catch_warnings():
    # eval7 builds its hand-range grammar with pyparsing names pyparsing now deprecates.
    warnings.simplefilter("ignore", DeprecationWarning)
    import eval7

from bench import treys_settlement
from bench.dealing import (
    OPENING_METER,
    SEATS_PER_ROUND,
    VARIANTS,
    Hand,
    Variant,
    deal_hands,
    deal_rounds,
)
from game.cards import card_text
from game.evaluator import category_name, cards_key, evaluate, evaluate_keyed
from game.progressive import Meters, settle_progressive
from game.record import round_from_wire
from game.rules import BETS
from game.settlement import settle_game
from game.validation import duplicate_cards, rule_breaks
from game.verdict import VERIFIED, judge_round

GOAL = 3.0  # rounds per second: judge_round over the treys settlement, on every variant
ROOT = Path(__file__).resolve().parents[1]
# eval7's names for the categories (it has no royal flush of its own).
EVAL7_CATEGORIES = {
    "High Card": "high_card", "Pair": "pair", "Two Pair": "two_pair", "Trips": "three_of_a_kind",
    "Straight": "straight", "Flush": "flush", "Full House": "full_house",
    "Quads": "four_of_a_kind", "Straight Flush": "straight_flush",
}


class Disagreement(AssertionError):
    """Two implementations judged the same cards differently."""


# -- agreement ------------------------------------------------------------------------------------

def check_agreement(variant: Variant, wires: Iterable[dict]) -> int:
    """Judge every round with the engine and with treys; raise on any difference.

    Compared: the dealer's and every seat's hand category, whether the dealer
    qualifies, every bet's result, the pool's meter after the round, and the
    verdict's status (the dealt rounds break no rule and ``paid`` is right).
    Returns how many rounds were checked.
    """
    table = treys_settlement.TABLES[variant.name]
    meters = Meters(OPENING_METER)
    checked = 0
    for wire in wires:
        verdict = judge_round(round_from_wire(wire), variant.rules, variant.pool, meters)
        plain = treys_settlement.settle(
            treys_settlement.round_from_wire(wire), table, OPENING_METER
        )
        where = f"{variant.name} round {wire['round']}"
        _same(where, "dealer hand", category_name(verdict.dealer_hand), plain.dealer_category)
        _same(where, "dealer qualifies", verdict.dealer_qualifies, plain.dealer_qualifies)
        for seat in verdict.seats:
            _same(where, f"seat {seat.seat} hand", category_name(seat.hand),
                  plain.categories[seat.seat])
            for bet in BETS:
                _same(where, f"seat {seat.seat} {bet}", seat.settled[bet],
                      plain.results[seat.seat][bet])
        if variant.pool is not None:
            _same(where, "meter after", verdict.meters_after.meter, plain.meter)
        _same(where, "status", verdict.status, VERIFIED)
        checked += 1
    return checked


def check_evaluators(hands: Sequence[Hand]) -> None:
    """Every evaluator puts every hand in the same category (treys and phevaluator: same rank)."""
    judge = treys.Evaluator()
    to_treys = [treys.Card.new(card_text(c)) for c in range(52)]
    for board, hole in hands:
        seven = board + hole
        ours = category_name(evaluate(seven))
        rank = judge.evaluate([to_treys[c] for c in board], [to_treys[c] for c in hole])
        theirs = treys_settlement.category(rank)
        ph_rank = phevaluator.evaluate_cards(*seven)
        e7_value = eval7.evaluate([eval7.Card(card_text(c)) for c in seven])
        e7 = EVAL7_CATEGORIES[eval7.handtype(e7_value)]
        if ours != theirs or ph_rank != rank or e7 != ours.replace("royal_flush", "straight_flush"):
            raise Disagreement(
                f"{[card_text(c) for c in seven]}: engine {ours}, treys {theirs} ({rank}), "
                f"phevaluator {ph_rank}, eval7 {e7}"
            )


def _same(where: str, what: str, ours: object, theirs: object) -> None:
    if ours != theirs:
        raise Disagreement(f"{where}: {what} is {ours} by the engine, {theirs} by treys")


# -- timing ---------------------------------------------------------------------------------------

def seconds_per_item(
    runs: dict[str, Callable[[], None]], items: int, repeats: int
) -> dict[str, float]:
    """CPU seconds per item of each run (one pass over ``items`` things), best of ``repeats``.

    The runs take turns, pass by pass, so a busy spell on the machine falls on
    all of them rather than on whichever happened to be timed then.
    """
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
    return {name: seconds / items for name, seconds in best.items()}


def evaluator_rates(hands: Sequence[Hand], repeats: int) -> dict[str, float]:
    """Seven-card evaluations per second of each evaluator, on ``hands``."""
    sevens = [board + hole for board, hole in hands]
    keyed = [(cards_key(board), hole, board + hole) for board, hole in hands]
    judge = treys.Evaluator()
    to_treys = [treys.Card.new(card_text(c)) for c in range(52)]
    treys_hands = [([to_treys[c] for c in b], [to_treys[c] for c in h]) for b, h in hands]
    eval7_hands = [[eval7.Card(card_text(c)) for c in seven] for seven in sevens]

    def ours() -> None:
        for seven in sevens:
            evaluate(seven)

    def ours_keyed() -> None:
        # As settle_game does: the board's key summed once a round, each hand adds its hole.
        for board_key, hole, seven in keyed:
            evaluate_keyed(board_key + cards_key(hole), seven)

    def with_treys() -> None:
        evaluate7 = judge.evaluate
        for board, hole in treys_hands:
            evaluate7(board, hole)

    def with_phevaluator() -> None:
        evaluate_cards = phevaluator.evaluate_cards
        for seven in sevens:
            evaluate_cards(*seven)

    def with_eval7() -> None:
        evaluate7 = eval7.evaluate
        for cards in eval7_hands:
            evaluate7(cards)

    runs = {
        "game evaluate": ours,
        "game evaluate_keyed (board key reused)": ours_keyed,
        "treys Evaluator().evaluate": with_treys,
        "phevaluator evaluate_cards (C)": with_phevaluator,
        "eval7 evaluate (Cython)": with_eval7,
    }
    return {name: 1 / t for name, t in seconds_per_item(runs, len(hands), repeats).items()}


def round_timings(variant: Variant, wires: list[dict], repeats: int) -> dict[str, float]:
    """Seconds per round for each way of settling ``wires``, and for each part of judge_round."""
    records = [round_from_wire(w) for w in wires]
    plain_rounds = [treys_settlement.round_from_wire(w) for w in wires]
    table = treys_settlement.TABLES[variant.name]
    rules, pool, meters = variant.rules, variant.pool, Meters(OPENING_METER)
    settle_plain = treys_settlement.settle

    # Every pass drops each result as it goes, as a service does: keeping thousands
    # of them alive would time the allocator as much as the settlement.
    def judged() -> None:
        for record in records:
            judge_round(record, rules, pool, meters)

    def plain() -> None:
        for rnd in plain_rounds:
            settle_plain(rnd, table, OPENING_METER)

    def settlement_only() -> None:
        for record in records:
            settle_game(record, rules)
            settle_progressive(record, pool, meters)

    def judged_from_wire() -> None:
        for wire in wires:
            judge_round(round_from_wire(wire), rules, pool, meters)

    def plain_from_wire() -> None:
        for wire in wires:
            settle_plain(treys_settlement.round_from_wire(wire), table, OPENING_METER)

    def part(work: Callable) -> Callable[[], None]:
        def run() -> None:
            for record in records:
                work(record)
        return run

    def plain_with(ranker: treys_settlement.Ranker) -> Callable[[], None]:
        rounds = [treys_settlement.round_from_wire(w, ranker) for w in wires]

        def run() -> None:
            for rnd in rounds:
                settle_plain(rnd, table, OPENING_METER, ranker)
        return run

    runs = {
        "judge_round": judged,
        "treys": plain,
        "settlement only": settlement_only,
        "judge_round from wire": judged_from_wire,
        "treys from wire": plain_from_wire,
        # The parts of judge_round, one by one (a lambda's call is a rounding error here).
        "duplicate_cards": part(duplicate_cards),
        "rule_breaks": part(lambda r: rule_breaks(r, rules)),
        "settle_game": part(lambda r: settle_game(r, rules)),
        "hand evaluation": part(_evaluate_hands),
        "settle_progressive": part(lambda r: settle_progressive(r, pool, meters)),
        # The same plain settlement with the other public evaluators ranking the hands.
        **{f"plain {name}": plain_with(ranker)
           for name, ranker in treys_settlement.RANKERS.items() if name != "treys"},
    }
    return seconds_per_item(runs, len(records), repeats)


def _evaluate_hands(record) -> None:
    """The evaluator calls settle_game makes: the dealer and every seat, on one board key."""
    board_key = cards_key(record.board)
    evaluate_keyed(board_key + cards_key(record.dealer_cards), record.board + record.dealer_cards)
    for seat in record.seats:
        evaluate_keyed(board_key + cards_key(seat.hole), record.board + seat.hole)


# -- report ---------------------------------------------------------------------------------------

def machine() -> list[str]:
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            names = (line.split(":", 1)[1] for line in cpuinfo if line.startswith("model name"))
            model = next(names, model).strip()
    except OSError:
        pass
    return [
        f"CPU      {model}",
        f"cores    {os.cpu_count()}, load average {_load_average()} at start",
        f"Python   {platform.python_implementation()} {platform.python_version()}",
        f"versions treys {_version('treys')}, phevaluator {_version('phevaluator')}, "
        f"eval7 {_version('eval7')}",
    ]


def evaluator_import_seconds() -> float:
    """CPU seconds a fresh interpreter takes to import the evaluator (best of three)."""
    code = ("import time; t = time.process_time(); import game.evaluator; "
            "print(time.process_time() - t)")
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True, cwd=ROOT)
        for _ in range(3)
    ]
    return min(float(run.stdout) for run in runs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.engine", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="fewer hands and rounds (seconds)")
    parser.add_argument("--seed", type=int, default=2026, help="the dealing seed (default 2026)")
    args = parser.parse_args(argv)
    hand_count, round_count, repeats = (20_000, 1_000, 3) if args.quick else (100_000, 3_000, 7)

    print("\n".join(machine()))
    print(f"seed {args.seed}{' (quick)' if args.quick else ''}; every figure is the best of "
          f"{repeats} passes, in CPU time of this process")
    print(f"importing game.evaluator: {evaluator_import_seconds() * 1000:.0f} ms")

    hands = deal_hands(hand_count, args.seed)
    check_evaluators(hands)
    print(f"\nSeven-card evaluations per second ({hand_count:,} hands; all four evaluators "
          "agree on every hand)")
    for name, rate in evaluator_rates(hands, repeats).items():
        print(f"  {name:<52} {rate:>11,.0f}")

    worst = float("inf")
    for variant in VARIANTS:
        wires = deal_rounds(variant, round_count, args.seed)
        checked = check_agreement(variant, wires)
        t = round_timings(variant, wires, repeats)
        worst = min(worst, t["treys"] / t["judge_round"])
        print(f"\nRounds per second, {variant.label}, {SEATS_PER_ROUND} seats ({round_count:,} "
              f"rounds; the engine settles all {checked:,} exactly as the treys settlement does)")
        print_round_report(t)

    met = "met" if worst >= GOAL else "NOT met"
    print(f"\nload average {_load_average()} at the end")
    print(f"Goal judge_round >= {GOAL:.0f}x the treys settlement on every variant: {met} "
          f"(worst {worst:.2f}x)")
    return 0


def print_round_report(t: dict[str, float]) -> None:
    """The rates and ratios of ``round_timings`` and where judge_round's time goes."""
    _line("engine judge_round (parsed record)", 1 / t["judge_round"])
    _line("treys settlement (parsed round)", 1 / t["treys"])
    _line(f"  ratio (goal >= {GOAL:.0f}x)", t["treys"] / t["judge_round"], "x")
    _line("engine settlement only: settle_game + settle_progressive", 1 / t["settlement only"])
    _line("  ratio to the treys settlement (the same work)",
          t["treys"] / t["settlement only"], "x")
    for name in ("phevaluator", "eval7"):
        if f"plain {name}" in t:
            _line(f"the same plain settlement, {name} ranking the hands", 1 / t[f"plain {name}"])
            _line("  judge_round's ratio to it", t[f"plain {name}"] / t["judge_round"], "x")
            _line("  engine settlement only, ratio to it", t[f"plain {name}"] / t["settlement only"], "x")
    _line("engine judge_round, parsing the wire dict too", 1 / t["judge_round from wire"])
    _line("treys settlement, parsing the wire dict too", 1 / t["treys from wire"])
    _line("  ratio", t["treys from wire"] / t["judge_round from wire"], "x")
    parts = ("duplicate_cards", "rule_breaks", "settle_game", "settle_progressive")
    rest = t["judge_round"] - sum(t[p] for p in parts)
    print(f"  where judge_round's {t['judge_round'] * 1e6:.1f} µs a round go:")
    for part in parts:
        print(f"    {part:<50} {t[part] * 1e6:>8.1f} µs")
        if part == "settle_game":
            print(f"      {'of which hand evaluation (5 hands)':<48} "
                  f"{t['hand evaluation'] * 1e6:>8.1f} µs")
    print(f"    {'the verdict itself (paid checks, findings, status)':<50} {rest * 1e6:>8.1f} µs")


def _line(label: str, value: float, unit: str = "") -> None:
    figure = f"{value:>11.2f}{unit}" if unit else f"{value:>11,.0f}"
    print(f"  {label:<56} {figure:>12}")


def _load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
