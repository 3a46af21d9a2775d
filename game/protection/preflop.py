"""The preflop decision: a table of every starting hand's options, computed by the project.

Before the flop a player sees only two cards, so a starting hand's value
depends on its ranks and on whether it is suited: 169 classes (13 pairs, 78
suited, 78 offsuit). Each option's value is an average over the flop of the
flop's exact values (``values.outcomes``: every turn, river and dealer hand,
the best river decision inside):

- ``preflop_4x`` and ``preflop_3x``: the Play bet is placed, no decision is
  left, so it is the mean of ``base + m·w`` over everything;
- ``check``: on each flop the better of 2x and checking to the river.

``compute_class`` averages over the flops one of two ways:

- **exact**: every flop, counted once per suit pattern (flops that differ
  only by a renaming of suits the hole cards leave alike are worth the same;
  each canonical flop is weighted by how many flops it stands for);
- **sampled**: flops drawn uniformly from a seeded generator, with the
  standard error of each value and of ``4x − check`` beside it.

The command ``preflop_values`` (``audit/management/commands``) samples every
class and enumerates exactly the classes whose best option the sample
cannot tell apart (4x and check within a few standard errors), and writes
``data/preflop_values.csv`` with its method per class. The file also records
the Blind pay table and the dealer's qualifier it was computed for: a table
paying otherwise has no preflop values (``PreflopTable.values`` says None).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations, permutations
from pathlib import Path

import numpy as np

from game.cards import RANKS, Card
from game.vocabulary import Decision

from .streets import CHECK, Street
from .streets import OPTIONS as STREET_OPTIONS
from .values import PayTable, outcomes

DATA = Path(__file__).with_name("data") / "preflop_values.csv"

P4, P3 = Decision.PREFLOP_4X.value, Decision.PREFLOP_3X.value
OPTIONS = STREET_OPTIONS[Street.PREFLOP.value]


def starting_hand(hole: Sequence[Card]) -> str:
    """The class of two hole cards: ``"AA"``, ``"AKs"``, ``"T9o"``."""
    (high, low) = sorted(hole, reverse=True)
    hr, lr = high >> 2, low >> 2
    if hr == lr:
        return RANKS[hr] * 2
    return RANKS[hr] + RANKS[lr] + ("s" if (high & 3) == (low & 3) else "o")


def combinations_of(name: str) -> int:
    """How many of the 1,326 hole pairs a class stands for: 6 a pair, 4 suited, 12 offsuit."""
    return 6 if len(name) == 2 else 4 if name.endswith("s") else 12


def starting_hands() -> list[str]:
    """All 169 classes, pairs first, then from the highest ranks down."""
    names = [rank * 2 for rank in reversed(RANKS)]
    for hi in range(12, -1, -1):
        for lo in range(hi - 1, -1, -1):
            names += [RANKS[hi] + RANKS[lo] + "s", RANKS[hi] + RANKS[lo] + "o"]
    return names


def representative(name: str) -> tuple[Card, Card]:
    """Two hole cards of a class: clubs first, diamonds for the second card of a pair or offsuit."""
    hi, lo = RANKS.index(name[0]), RANKS.index(name[1])
    second_suit = 0 if name.endswith("s") else 1
    return hi * 4, lo * 4 + second_suit


def _suit_symmetries(hole: Sequence[Card]) -> list[tuple[int, ...]]:
    """The renamings of suits that leave the hole cards as they are (as a set)."""
    kept = []
    for perm in permutations(range(4)):
        if {(c & ~3) | perm[c & 3] for c in hole} == set(hole):
            kept.append(perm)
    return kept


def canonical_flops(hole: Sequence[Card]) -> list[tuple[tuple[Card, ...], int]]:
    """Every flop up to the hole's suit symmetries, with how many flops each stands for."""
    symmetries = _suit_symmetries(hole)
    deck = [c for c in range(52) if c not in hole]
    weights: dict[tuple[Card, ...], int] = {}
    for flop in combinations(deck, 3):
        key = min(tuple(sorted((c & ~3) | perm[c & 3] for c in flop)) for perm in symmetries)
        weights[key] = weights.get(key, 0) + 1
    return sorted(weights.items())


@dataclass(frozen=True, slots=True)
class ClassValues:
    name: str
    values: dict[str, float]  # preflop_4x, preflop_3x, check, in Antes
    errors: dict[str, float]  # each value's standard error: 0 when exact
    se_4x_minus_check: float  # 0 when exact
    flops: int  # flops valued (canonical flops when exact)
    method: str  # "exact" or "sampled"

    @property
    def best(self) -> str:
        return max(self.values, key=self.values.__getitem__)


def _flop_row(hole: Sequence[Card], flop: Sequence[Card], pays: PayTable) -> tuple[float, float, float]:
    found = outcomes(hole, flop, pays)
    return (
        float(found.play(4).mean()),
        float(found.play(3).mean()),
        max(float(found.play(2).mean()), float(found.river_best().mean())),
    )


def _sampled_flops(hole: Sequence[Card], count: int, seed: int) -> Iterator[tuple[Card, ...]]:
    deck = np.array([c for c in range(52) if c not in hole])
    rng = np.random.default_rng([seed, *sorted(hole)])
    for _ in range(count):
        yield tuple(int(c) for c in rng.choice(deck, 3, replace=False))


def compute_class(
    name: str, pays: PayTable, *, exact: bool = False, flops: int = 512, seed: int = 2185
) -> ClassValues:
    """One class's option values, exactly or from ``flops`` seeded flops (see the module)."""
    hole = representative(name)
    if exact:
        chosen = canonical_flops(hole)
    else:
        chosen = [(flop, 1) for flop in _sampled_flops(hole, flops, seed)]
    rows = np.array([_flop_row(hole, flop, pays) for flop, _ in chosen])
    weights = np.array([w for _, w in chosen], dtype=float)
    means = (rows * weights[:, None]).sum(axis=0) / weights.sum()
    if exact:
        se, errors = 0.0, np.zeros(3)
    else:
        root = np.sqrt(len(rows))
        se = float((rows[:, 0] - rows[:, 2]).std(ddof=1) / root)
        errors = rows.std(axis=0, ddof=1) / root
    values = {P4: float(means[0]), P3: float(means[1]), CHECK: float(means[2])}
    return ClassValues(
        name, values, dict(zip(values, (float(e) for e in errors))), se, len(chosen),
        "exact" if exact else "sampled",
    )


def write_table(path: Path, classes: Sequence[ClassValues], pays: PayTable, header: Sequence[str]) -> None:
    """The table as CSV: ``#`` lines say how it was made and for which pay table."""
    with path.open("w", newline="") as out:
        for line in header:
            out.write(f"# {line}\n")
        out.write(f"# blind_pays: {' '.join(f'{p:g}' for p in pays.blind)}\n")
        out.write(f"# qualifier: {pays.qualifier >> 20}\n")
        writer = csv.writer(out)
        writer.writerow([
            "hand", *OPTIONS, *(f"se_{o}" for o in OPTIONS), "se_4x_minus_check", "flops", "method",
        ])
        for c in classes:
            writer.writerow([
                c.name, *(f"{c.values[o]:.6f}" for o in OPTIONS), *(f"{c.errors[o]:.6f}" for o in OPTIONS),
                f"{c.se_4x_minus_check:.6f}", c.flops, c.method,
            ])


@dataclass(frozen=True, slots=True)
class PreflopTable:
    pays: PayTable
    classes: dict[str, ClassValues]

    def optimal_value(self) -> float:
        """A hand's worth under optimal play, in Antes, over all 1,326 hole pairs: minus the house edge."""
        total = 0.0
        for name, c in self.classes.items():
            total += combinations_of(name) * max(c.values.values())
        return total / 1326

    def values(self, hole: Sequence[Card], pays: PayTable) -> dict[str, float] | None:
        """A starting hand's options, or None for a table that pays the Blind otherwise."""
        if pays != self.pays:
            return None
        return self.classes[starting_hand(hole)].values


def read_table(path: Path) -> PreflopTable:
    blind: tuple[float, ...] = ()
    qualifier = 0
    rows = []
    with path.open() as source:
        for line in source:
            if line.startswith("# blind_pays:"):
                blind = tuple(float(p) for p in line.split(":", 1)[1].split())
            elif line.startswith("# qualifier:"):
                qualifier = int(line.split(":", 1)[1])
            elif not line.startswith("#"):
                rows.append(line)
    classes = {}
    for row in csv.DictReader(rows):
        classes[row["hand"]] = ClassValues(
            row["hand"],
            {o: float(row[o]) for o in OPTIONS},
            {o: float(row[f"se_{o}"]) for o in OPTIONS},
            float(row["se_4x_minus_check"]), int(row["flops"]), row["method"],
        )
    return PreflopTable(PayTable(blind, qualifier << 20), classes)


@cache
def shipped_table() -> PreflopTable:
    return read_table(DATA)
