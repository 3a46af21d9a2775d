"""How much two seats of one round move together, derived by simulation and shipped as data.

The nightly bands add up each seat's variance as if seats were independent.
They are not: every seat of a round plays the same board against the same
dealer cards. This module measures the covariance between two seats of one
round, for the base game (Ante + Blind + Play) and for Trips, so that a
round's variance is ``Σ seat variances + 2 Σ_{i<j} covariances``
(docs/VARIANCE.md). Plain Python and numpy: no Django.

What is simulated
-----------------
Rounds of two seats dealt from one shuffled 52-card deck: 2 + 2 hole cards,
5 board cards, 2 dealer cards (a partial Fisher-Yates shuffle, exactly
uniform). Each seat bets Ante = Blind = 1 and Trips = 1, plays the strategy
below, and is settled as RULES.md says under the pay table and dealer
qualifier of a ``Game``: folded, -Ante -Blind; otherwise the higher hand wins
Ante (only when the dealer qualifies, else the Ante pushes), Blind (by the
Blind table, a push below every listed category) and Play; the lower hand
loses Blind and Play, and the Ante when the dealer qualifies; a tie pushes
all three. Trips pays by its table whatever happened, or loses. The
per-unit figures ignore rounding to the minor unit and the aggregate limit.

The strategy: "basic strategy" of the Wizard of Odds
-----------------------------------------------------
``game.strategy`` states it rule by rule; ``play_rounds`` plays it through
that module's bulk functions, tested equal to its plain ones, and values
hands with ``game.hand_arrays`` (the engine's values). It gives up a little
to optimal play (the shipped run measures the house's edge under it at
2.53 ± 0.11 % of the Ante, against 2.185 % for optimal play), which moves
the covariances far less than their own uncertainty matters to a band.

Estimates and their uncertainty
-------------------------------
A run is cut into fixed chunks of ``CHUNK_ROUNDS`` rounds; chunk ``i`` draws
from numpy's PCG64 seeded by ``SeedSequence(seed, spawn_key=(i,))``, so the
same seed and round count give the same integer sums however many processes
share the work. Every result is kept as an exact integer sum (base results in
units of ``1/scale`` Ante, where ``scale`` clears the Blind table's
fractions): Σx₁, Σx₂, Σx₁², Σx₂², Σx₁x₂, the 10 × 10 joint count of the two
seats' hand categories, and for each category ``c`` the sums Σxₛ·[catₛ = c]
and Σxₛ·[cat of the other seat = c]. From these, the Trips covariance and the
base–Trips covariances follow exactly for any Trips pay table.

Covariances are sample covariances, E[ab] − E[a]·E[b]; the single-seat
figures average the two seats. Standard errors are batch means: chunk ``i``
goes to batch ``i mod BATCHES``, each figure is worked out on every batch
alone, and its standard error is the standard deviation of those batch
figures over √(number of batches).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np

from game import hand_arrays as ha
from game import strategy
from game.evaluator import CATEGORIES, CATEGORY_INDEX, PAIR

from .trips_joint import shipped_joint, trips_covariance_exact

VERSION = 1
STRATEGY = "wizard-of-odds-basic"
METHOD = (
    "Monte Carlo: two seats of one round, one 52-card deck, the basic strategy; "
    "exact integer sums per fixed chunk of rounds (PCG64, chunk i seeded by "
    "SeedSequence(seed, spawn_key=(i,))); standard errors by batch means "
    "(chunk i in batch i mod batches)"
)
CHUNK_ROUNDS = 10_000
BATCHES = 50
DATA_PATH = Path(__file__).resolve().parent / "data" / "seat_covariance.json"

CATEGORY_COUNT = len(CATEGORIES)
_CATEGORY_SHIFT = 20  # evaluator values are category << 20 followed by ranks


# ---- the game the figures are for ------------------------------------------


def _fraction(pay: object) -> Fraction:
    return Fraction(str(pay))


@dataclass(frozen=True, slots=True)
class Game:
    """What the base game's figures depend on: the Blind pay table and the dealer's qualifier."""

    blind_pays: tuple[tuple[int, Fraction], ...]  # (category index, pays x to 1), by category
    dealer_qualifier: int = PAIR

    @classmethod
    def of(cls, blind_pays: Mapping[object, object], dealer_qualifier: int | str = PAIR) -> Game:
        """From ``{category index or name: pay}`` and a qualifier index or name."""
        pays = []
        for category, pay in blind_pays.items():
            index = CATEGORY_INDEX[category] if isinstance(category, str) else int(category)
            pays.append((index, _fraction(pay)))
        if isinstance(dealer_qualifier, str):
            dealer_qualifier = CATEGORY_INDEX[dealer_qualifier]
        qualifier = int(dealer_qualifier)
        return cls(tuple(sorted(pays)), qualifier)

    @property
    def scale(self) -> int:
        """Base results are kept in units of 1/scale Ante: the Blind table's common denominator."""
        return math.lcm(1, *(pay.denominator for _, pay in self.blind_pays))

    def describe(self) -> dict:
        return {
            "blind_pays": {CATEGORIES[c]: _fraction_text(p) for c, p in self.blind_pays},
            "dealer_qualifier": CATEGORIES[self.dealer_qualifier],
        }

    @property
    def fingerprint(self) -> str:
        text = json.dumps(self.describe(), sort_keys=True, separators=(",", ":"))
        return "game-sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _fraction_text(value: Fraction) -> str:
    """A pay as the shortest exact decimal when there is one (3/2 -> "1.5"), else "p/q"."""
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    text = format(Decimal(value.numerator) / Decimal(value.denominator), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# ---- rounds in bulk: deal, decide, settle ------------------------------------

SEATS = 2
HOLE = ((0, 1), (2, 3))  # columns of each seat's hole cards
BOARD = slice(4, 9)
FLOP = slice(4, 7)
DEALER = slice(9, 11)
DEALT = 11


def deal(rng: np.random.Generator, rounds: int) -> np.ndarray:
    """(rounds, 11) cards: seat 1's hole, seat 2's hole, the board, the dealer's; uniform."""
    deck = np.tile(np.arange(52, dtype=np.int64), (rounds, 1))
    rows = np.arange(rounds)
    for k in range(DEALT):
        pick = k + rng.integers(0, 52 - k, size=rounds)
        taken = deck[rows, pick]
        deck[rows, pick] = deck[rows, k]
        deck[rows, k] = taken
    return deck[:, :DEALT].copy()


def play_rounds(cards: np.ndarray, game: Game) -> dict[str, np.ndarray]:
    """Every seat's strategy, hand and base result (in 1/scale Antes) for dealt rounds.

    Returns ``multiple``, ``hand``, ``category`` and ``result``, each (rounds, 2),
    and the dealer's ``dealer_hand``.
    """
    n = len(cards)
    board = cards[:, BOARD]
    dealer = ha.values_of(np.concatenate([board, cards[:, DEALER]], axis=1))
    board_value = ha.values_of(board)
    multiple = np.zeros((n, SEATS), dtype=np.int64)
    hand = np.zeros((n, SEATS), dtype=np.int64)
    undecided = np.zeros((n, SEATS), dtype=bool)
    for seat, columns in enumerate(HOLE):
        hole = cards[:, list(columns)]
        hand[:, seat] = value = ha.values_of(np.concatenate([hole, board], axis=1))
        pre = strategy.preflop_4x_bulk(hole)
        flop = ~pre & strategy.flop_2x_bulk(hole, cards[:, FLOP])
        hidden = strategy.hidden_pair_or_better_bulk(hole, board, value, board_value)
        river = ~pre & ~flop
        multiple[:, seat] = np.where(pre, 4, np.where(flop, 2, np.where(river & hidden, 1, 0)))
        undecided[:, seat] = river & ~hidden
    counting = np.flatnonzero(undecided.any(axis=1))
    if counting.size:
        # Both seats share a board: its hands with each card added are valued once per round.
        dealer_with = ha.values_with_each_card(board[counting])
        counted = cards[counting]
        for seat, columns in enumerate(HOLE):
            outs = strategy.dealer_outs_bulk(dealer_with, counted[:, list(columns)], hand[counting, seat])
            ask = undecided[counting, seat]
            multiple[counting[ask], seat] = np.where(outs[ask] < strategy.OUTS_TO_FOLD, 1, 0)
    category = hand >> _CATEGORY_SHIFT
    result = settle_base(game, multiple, hand, dealer[:, None], category)
    return {"multiple": multiple, "hand": hand, "category": category, "result": result,
            "dealer_hand": dealer}


def settle_base(
    game: Game, multiple: np.ndarray, hand: np.ndarray, dealer: np.ndarray, category: np.ndarray
) -> np.ndarray:
    """Ante + Blind + Play per seat in 1/scale Antes (Ante = Blind = 1), as RULES.md settles them."""
    scale = game.scale
    blind_table = np.zeros(CATEGORY_COUNT, dtype=np.int64)
    for c, pay in game.blind_pays:
        blind_table[c] = int(pay * scale)
    qualifies = (dealer >> _CATEGORY_SHIFT) >= game.dealer_qualifier
    ante = np.where(qualifies, scale, 0)
    play = multiple * scale
    won = ante + blind_table[category] + play
    lost = -ante - scale - play
    result = np.where(hand > dealer, won, np.where(hand < dealer, lost, 0))
    return np.where(multiple == 0, -2 * scale, result)


# ---- sums that merge exactly -------------------------------------------------


def _zeros(*shape: int) -> list:
    if len(shape) == 1:
        return [0] * shape[0]
    return [_zeros(*shape[1:]) for _ in range(shape[0])]


@dataclass(slots=True)
class PairSums:
    """Exact integer sums over rounds of two seats; base results x in 1/scale Antes."""

    rounds: int = 0
    x: list[int] = field(default_factory=lambda: [0, 0])  # Σ x_s
    xx: list[int] = field(default_factory=lambda: [0, 0])  # Σ x_s²
    x1x2: int = 0
    joint: list[list[int]] = field(default_factory=lambda: _zeros(CATEGORY_COUNT, CATEGORY_COUNT))
    # Per seat s and category c: Σ x_s·[cat_s = c], and Σ x_s·[the other seat's cat = c].
    same: list[list[int]] = field(default_factory=lambda: _zeros(SEATS, CATEGORY_COUNT))
    other: list[list[int]] = field(default_factory=lambda: _zeros(SEATS, CATEGORY_COUNT))
    decisions: list[int] = field(default_factory=lambda: [0] * 5)  # seats by Play multiple 0..4

    def add(self, other: PairSums) -> PairSums:
        self.rounds += other.rounds
        self.x1x2 += other.x1x2
        for s in range(SEATS):
            self.x[s] += other.x[s]
            self.xx[s] += other.xx[s]
            for c in range(CATEGORY_COUNT):
                self.same[s][c] += other.same[s][c]
                self.other[s][c] += other.other[s][c]
        for i in range(CATEGORY_COUNT):
            for j in range(CATEGORY_COUNT):
                self.joint[i][j] += other.joint[i][j]
        for m in range(5):
            self.decisions[m] += other.decisions[m]
        return self

    @classmethod
    def of_rounds(cls, played: Mapping[str, np.ndarray]) -> PairSums:
        x, category, multiple = played["result"], played["category"], played["multiple"]
        sums = cls(rounds=len(x))
        sums.x = [int(v) for v in x.sum(axis=0)]
        sums.xx = [int(v) for v in (x * x).sum(axis=0)]
        sums.x1x2 = int((x[:, 0] * x[:, 1]).sum())
        joint = np.bincount(category[:, 0] * CATEGORY_COUNT + category[:, 1],
                            minlength=CATEGORY_COUNT**2)
        sums.joint = joint.reshape(CATEGORY_COUNT, CATEGORY_COUNT).tolist()
        for s in range(SEATS):
            for c in range(CATEGORY_COUNT):
                sums.same[s][c] = int(x[category[:, s] == c, s].sum())
                sums.other[s][c] = int(x[category[:, 1 - s] == c, s].sum())
        sums.decisions = np.bincount(multiple.ravel(), minlength=5).tolist()
        return sums

    def to_json(self) -> dict:
        return {"rounds": self.rounds, "x": self.x, "xx": self.xx, "x1x2": self.x1x2,
                "joint": self.joint, "same": self.same, "other": self.other,
                "decisions": self.decisions}

    @classmethod
    def from_json(cls, data: Mapping) -> PairSums:
        return cls(
            rounds=int(data["rounds"]), x=[int(v) for v in data["x"]], xx=[int(v) for v in data["xx"]],
            x1x2=int(data["x1x2"]), joint=[[int(v) for v in row] for row in data["joint"]],
            same=[[int(v) for v in row] for row in data["same"]],
            other=[[int(v) for v in row] for row in data["other"]],
            decisions=[int(v) for v in data["decisions"]],
        )


def chunk_seed(seed: int, chunk: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(seed, spawn_key=(chunk,))


def chunk_sums(game: Game, seed: int, chunk: int, rounds: int) -> PairSums:
    """The sums of one chunk: ``rounds`` rounds drawn from the chunk's own seed."""
    rng = np.random.default_rng(chunk_seed(seed, chunk))
    return PairSums.of_rounds(play_rounds(deal(rng, rounds), game))


def _chunk_job(job: tuple[Game, int, int, int]) -> tuple[int, PairSums]:
    game, seed, chunk, rounds = job
    return chunk, chunk_sums(game, seed, chunk, rounds)


def chunk_sizes(rounds: int, chunk_rounds: int = CHUNK_ROUNDS) -> list[int]:
    full, rest = divmod(rounds, chunk_rounds)
    return [chunk_rounds] * full + ([rest] if rest else [])


@dataclass(frozen=True, slots=True)
class Derivation:
    game: Game
    seed: int
    rounds: int
    chunk_rounds: int
    batches: tuple[PairSums, ...]  # chunk i added into batch i mod len(batches)

    @property
    def total(self) -> PairSums:
        total = PairSums()
        for batch in self.batches:
            total.add(batch)
        return total


def derive(
    game: Game,
    *,
    rounds: int,
    seed: int,
    processes: int = 1,
    chunks: Iterable[int] | None = None,
    chunk_rounds: int = CHUNK_ROUNDS,
    batches: int = BATCHES,
    progress: Callable[[int, int], None] | None = None,
) -> Derivation:
    """Simulate ``rounds`` rounds (or only the chunks listed, to split a run) into batch sums."""
    sizes = chunk_sizes(rounds, chunk_rounds)
    batch_count = max(1, min(batches, len(sizes)))
    chosen = range(len(sizes)) if chunks is None else sorted(set(chunks))
    jobs = [(game, seed, chunk, sizes[chunk]) for chunk in chosen]
    sums = [PairSums() for _ in range(batch_count)]
    done = 0

    def collect(results: Iterable[tuple[int, PairSums]]) -> None:
        nonlocal done
        for chunk, part in results:
            sums[chunk % batch_count].add(part)
            done += 1
            if progress:
                progress(done, len(jobs))

    if processes <= 1 or len(jobs) <= 1:
        collect(map(_chunk_job, jobs))
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("spawn")  # a clean child: no inherited connections
        with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
            collect(pool.map(_chunk_job, jobs, chunksize=4))
    return Derivation(game, seed, rounds, chunk_rounds, tuple(sums))


def merge(*parts: Derivation) -> Derivation:
    """Derivations of disjoint chunks of one run (same game, seed, rounds, batches) as one."""
    first = parts[0]
    sums = [PairSums() for _ in first.batches]
    for part in parts:
        if (part.game, part.seed, part.rounds, part.chunk_rounds, len(part.batches)) != (
            first.game, first.seed, first.rounds, first.chunk_rounds, len(first.batches)
        ):
            raise ValueError("only parts of one run merge")
        for mine, theirs in zip(sums, part.batches):
            mine.add(theirs)
    return Derivation(first.game, first.seed, first.rounds, first.chunk_rounds, tuple(sums))


# ---- figures from the sums (exact Fractions) ---------------------------------

Pays = Mapping[int, object]


def _trips_results(pays: Pays) -> list[Fraction]:
    """Per category: what a Trips unit returns (pays x to 1, or -1 for a category not listed)."""
    table = {int(c): _fraction(p) for c, p in pays.items()}
    return [table.get(c, Fraction(-1)) for c in range(CATEGORY_COUNT)]


def _seat_means(s: PairSums, scale: int) -> list[Fraction]:
    return [Fraction(s.x[i], s.rounds * scale) for i in range(SEATS)]


def base_mean(s: PairSums, scale: int) -> Fraction:
    return sum(_seat_means(s, scale), Fraction(0)) / SEATS


def base_variance(s: PairSums, scale: int) -> Fraction:
    means = _seat_means(s, scale)
    return sum(
        (Fraction(s.xx[i], s.rounds * scale * scale) - means[i] ** 2 for i in range(SEATS)), Fraction(0)
    ) / SEATS


def base_covariance(s: PairSums, scale: int) -> Fraction:
    means = _seat_means(s, scale)
    return Fraction(s.x1x2, s.rounds * scale * scale) - means[0] * means[1]


def base_correlation(s: PairSums, scale: int) -> Fraction:
    return base_covariance(s, scale) / base_variance(s, scale)


def _category_marginals(s: PairSums) -> list[list[int]]:
    rows = [sum(row) for row in s.joint]
    cols = [sum(s.joint[i][j] for i in range(CATEGORY_COUNT)) for j in range(CATEGORY_COUNT)]
    return [rows, cols]


def trips_covariance_of(s: PairSums, pays: Pays) -> Fraction:
    """Cov(Trips of seat 1, Trips of seat 2) per unit², from the joint category counts."""
    t = _trips_results(pays)
    n = s.rounds
    both = sum(s.joint[i][j] * t[i] * t[j] for i in range(CATEGORY_COUNT) for j in range(CATEGORY_COUNT))
    rows, cols = _category_marginals(s)
    mean_1 = sum(rows[i] * t[i] for i in range(CATEGORY_COUNT)) / n
    mean_2 = sum(cols[j] * t[j] for j in range(CATEGORY_COUNT)) / n
    return Fraction(both) / n - mean_1 * mean_2


def trips_variance_of(s: PairSums, pays: Pays) -> Fraction:
    """The single-seat Trips variance the simulation saw (the exact one: books.statistics)."""
    t = _trips_results(pays)
    n = s.rounds
    total = Fraction(0)
    for marginal in _category_marginals(s):
        mean = sum(marginal[c] * t[c] for c in range(CATEGORY_COUNT)) / n
        total += sum(marginal[c] * t[c] * t[c] for c in range(CATEGORY_COUNT)) / n - mean * mean
    return total / SEATS


def base_trips_covariance_of(s: PairSums, scale: int, pays: Pays, *, same_seat: bool) -> Fraction:
    """Cov(base result of a seat, Trips of that seat or of the other seat), per Ante × Trips unit."""
    t = _trips_results(pays)
    n = s.rounds
    means = _seat_means(s, scale)
    marginals = _category_marginals(s)
    total = Fraction(0)
    for seat in range(SEATS):
        trips_seat = seat if same_seat else 1 - seat
        by_category = s.same[seat] if same_seat else s.other[seat]
        cross = sum(by_category[c] * t[c] for c in range(CATEGORY_COUNT)) / (n * scale)
        trips_mean = sum(marginals[trips_seat][c] * t[c] for c in range(CATEGORY_COUNT)) / n
        total += cross - means[seat] * trips_mean
    return total / SEATS


# ---- estimates with batch-means errors --------------------------------------


def to_decimal(value: Fraction, places: int = 12) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 40
        exact = Decimal(value.numerator) / Decimal(value.denominator)
        return exact.quantize(Decimal(1).scaleb(-places))


@dataclass(frozen=True, slots=True)
class Estimate:
    value: Decimal
    se: Decimal

    def as_json(self) -> dict:
        return {"value": str(self.value), "se": str(self.se)}

    def __str__(self) -> str:
        return f"{self.value} ± {self.se}"


Figure = Callable[[PairSums], Fraction]


def batch_variance(figure: Figure, batches: Sequence[PairSums]) -> Fraction | None:
    """The batch-means variance of a figure's estimate: its batch values' variance / batches."""
    values = [figure(b) for b in batches if b.rounds]
    if len(values) < 2:
        return None
    mean = sum(values, Fraction(0)) / len(values)
    return sum(((v - mean) ** 2 for v in values), Fraction(0)) / (len(values) * (len(values) - 1))


def estimate(figure: Figure, total: PairSums, batches: Sequence[PairSums]) -> Estimate:
    variance = batch_variance(figure, batches)
    se = Decimal(0) if variance is None else _sqrt(variance)
    return Estimate(to_decimal(figure(total)), se)


def _sqrt(value: Fraction) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 40
        root = (Decimal(value.numerator) / Decimal(value.denominator)).sqrt()
    return root.quantize(Decimal("1e-12"))


def base_figures(derivation: Derivation) -> dict[str, Estimate]:
    scale = derivation.game.scale
    total, batches = derivation.total, derivation.batches
    return {
        "base_mean": estimate(lambda s: base_mean(s, scale), total, batches),
        "base_variance": estimate(lambda s: base_variance(s, scale), total, batches),
        "base_covariance": estimate(lambda s: base_covariance(s, scale), total, batches),
        "base_correlation": estimate(lambda s: base_correlation(s, scale), total, batches),
    }


def trips_figures(derivation: Derivation, pays: Pays) -> dict[str, Estimate]:
    scale = derivation.game.scale
    total, batches = derivation.total, derivation.batches
    return {
        "trips_variance_simulated": estimate(lambda s: trips_variance_of(s, pays), total, batches),
        "trips_covariance": estimate(lambda s: trips_covariance_of(s, pays), total, batches),
        "base_trips_covariance_same_seat": estimate(
            lambda s: base_trips_covariance_of(s, scale, pays, same_seat=True), total, batches),
        "base_trips_covariance_other_seat": estimate(
            lambda s: base_trips_covariance_of(s, scale, pays, same_seat=False), total, batches),
    }


# ---- the shipped data --------------------------------------------------------


def pays_json(pays: Pays) -> dict[str, str]:
    return {CATEGORIES[int(c)]: _fraction_text(_fraction(p)) for c, p in sorted(pays.items())}


def data_document(
    derivations: Sequence[tuple[Derivation, Sequence[str], Mapping[str, Pays]]], *, default: str
) -> dict:
    """The JSON file's content: per game (Blind table and qualifier), its sums and figures.

    ``derivations``: (derivation, names of the configurations it serves, Trips
    pay tables by configuration name).
    """
    first = derivations[0][0]
    games = {}
    for derivation, configs, trips_tables in derivations:
        figures: dict = {name: e.as_json() for name, e in base_figures(derivation).items()}
        figures["trips"] = {
            name: {"pays": pays_json(pays)}
            | {k: e.as_json() for k, e in trips_figures(derivation, pays).items()}
            for name, pays in trips_tables.items()
        }
        games[derivation.game.fingerprint] = derivation.game.describe() | {
            "configs": list(configs),
            "scale": derivation.game.scale,
            "figures": figures,
            "sums": derivation.total.to_json(),
            "batch_sums": [b.to_json() for b in derivation.batches],
        }
    return {
        "version": VERSION,
        "method": METHOD,
        "strategy": STRATEGY,
        "seed": first.seed,
        "rounds": first.rounds,
        "chunk_rounds": first.chunk_rounds,
        "batches": len(first.batches),
        "numpy": np.__version__,
        "units": "base results x in 1/scale Antes (Ante = Blind = 1); Trips per unit; "
                 "same[s][c] = Σ x_s·[cat_s = c], other[s][c] = Σ x_s·[cat of the other seat = c], "
                 "joint[i][j] = rounds with seat 1 in category i and seat 2 in j, "
                 "decisions[m] = seats that played m Antes (0: fold)",
        "default": default,
        "games": games,
    }


def dumps(document: Mapping) -> str:
    """JSON with objects indented, a list of plain values on one line, a list of lists a line each."""

    def render(value: object, depth: int) -> str:
        pad, inner = "  " * depth, "  " * (depth + 1)
        if isinstance(value, dict) and value:
            items = [f"{inner}{json.dumps(k)}: {render(v, depth + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + f"\n{pad}}}"
        if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            return "[\n" + ",\n".join(inner + render(v, depth + 1) for v in value) + f"\n{pad}]"
        return json.dumps(value, separators=(", ", ": "))

    return render(document, 0) + "\n"


def write_data(document: Mapping, path: Path = DATA_PATH) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(dumps(document))
    os.replace(temporary, path)
    _clear_cache()
    return path


class SeatCovarianceMissing(LookupError):
    """No derivation in the shipped data for this Blind table and dealer qualifier."""


@dataclass(frozen=True, slots=True, eq=False)
class SeatCovariance:
    """The shipped seat-seat figures for one game (Blind table and qualifier), as Decimals.

    ``base_*`` are per Ante² of Ante + Blind + Play results; Trips figures per
    unit² of Trips; base-Trips per Ante × Trips unit. Each ``*_se`` is the
    figure's batch-means standard error.
    """

    version: int
    fingerprint: str  # of the data file's bytes
    game: str  # the game's fingerprint (Blind table and qualifier)
    strategy: str
    rounds: int
    base_mean: Decimal
    base_variance: Decimal
    base_variance_se: Decimal
    base_covariance: Decimal
    base_covariance_se: Decimal
    scale: int = field(repr=False)
    sums: PairSums = field(repr=False)
    batch_sums: tuple[PairSums, ...] = field(repr=False)

    @property
    def base_correlation(self) -> Decimal:
        return to_decimal(Fraction(self.base_covariance) / Fraction(self.base_variance))

    def trips_covariance(self, pays: Pays) -> Decimal:
        """Cov(Trips of one seat, Trips of another seat of the round), for a pay table
        ``{category index: pays x to 1}`` (a category not listed loses), as ``trips_math`` takes:
        exact, from every board's counts (``books.trips_joint``), not from the simulation."""
        return to_decimal(trips_covariance_exact(shipped_joint(), pays))

    def trips_covariance_se(self, pays: Pays) -> Decimal:
        """0: the figure is exact."""
        return Decimal(0)

    def trips_covariance_simulated(self, pays: Pays) -> tuple[Decimal, Decimal]:
        """The simulation's own estimate of the Trips covariance and its standard error (a check)."""
        return to_decimal(trips_covariance_of(self.sums, pays)), _se(
            lambda s: trips_covariance_of(s, pays), self.batch_sums)

    def base_trips_covariance(self, pays: Pays, same_seat: bool) -> Decimal:
        """Cov(a seat's Ante + Blind + Play, Trips of the same seat or of another seat)."""
        return to_decimal(base_trips_covariance_of(self.sums, self.scale, pays, same_seat=same_seat))


def _se(figure: Figure, batches: Sequence[PairSums]) -> Decimal:
    variance = batch_variance(figure, batches)
    return Decimal(0) if variance is None else _sqrt(variance)


@cache
def _read(path: str) -> tuple[str, dict]:
    raw = Path(path).read_bytes()
    return "sha256:" + hashlib.sha256(raw).hexdigest()[:16], json.loads(raw)


def load_seat_covariance(
    blind_pays: Mapping[object, object] | None = None,
    dealer_qualifier: int | str = PAIR,
    *,
    path: Path | str = DATA_PATH,
) -> SeatCovariance:
    """The shipped figures for a Blind table and dealer qualifier (default: the file's default game).

    The file is read once per process (``load_seat_covariance.cache_clear()`` reads it again).
    """
    return _load(None if blind_pays is None else Game.of(blind_pays, dealer_qualifier), str(path))


@cache
def _load(game: Game | None, path: str) -> SeatCovariance:
    fingerprint, document = _read(path)
    key = document["default"] if game is None else game.fingerprint
    entry = document["games"].get(key)
    if entry is None:
        raise SeatCovarianceMissing(
            f"{path} holds no derivation for {game.describe() if game else key}; "
            "derive it: manage.py derive_seat_covariance --write"
        )
    scale = int(entry["scale"])
    sums = PairSums.from_json(entry["sums"])
    batch_sums = tuple(PairSums.from_json(b) for b in entry["batch_sums"])
    return SeatCovariance(
        version=int(document["version"]),
        fingerprint=fingerprint,
        game=key,
        strategy=str(document["strategy"]),
        rounds=sums.rounds,
        base_mean=to_decimal(base_mean(sums, scale)),
        base_variance=to_decimal(base_variance(sums, scale)),
        base_variance_se=_se(lambda s: base_variance(s, scale), batch_sums),
        base_covariance=to_decimal(base_covariance(sums, scale)),
        base_covariance_se=_se(lambda s: base_covariance(s, scale), batch_sums),
        scale=scale,
        sums=sums,
        batch_sums=batch_sums,
    )


def _clear_cache() -> None:
    _read.cache_clear()
    _load.cache_clear()


load_seat_covariance.cache_clear = _clear_cache  # type: ignore[attr-defined]
