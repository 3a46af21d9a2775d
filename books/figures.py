"""A report's numbers: sums that add across tables and days, and what is derived from them.

Every stored figure is a sum (rounds, handle, win, theoretical win, its
variance, mismatches…), so a report for many tables is the sum of its parts
and a month is the sum of its days. Ratios, bands and flags are derived from
the sums when shown, never added. Plain Python: no Django.

Money always knows its currency: a ``Sums`` holds the figures of one currency
and refuses to add another's (``CurrencyMismatch``), and every group of a
report (casino, table, dealer, shift, player) is a ``ByCurrency``: one
``Sums`` per currency it dealt in, never one figure over two.

Amounts are the house's view: ``win`` is what the house won by the rules (the
negative of the players' settled results), ``win_paid`` what it won by what the
dealers paid (the table's reported payouts; where a table reported none, the
settled ones), their difference the dealers' error; ``handle`` is what was
wagered on rounds that were not void (a void round's bets are returned), the
Progressive only when its sensor was lit.

Two theoretical wins: at optimal play (``theo_base`` + ``theo_trips``, the
game's house edge) and at actual play, which adds ``skill``, what the
players' scored decisions gave up (Σ Ante × ``SeatScore.ev_lost``). A group's
bands judge by the second only when all its live hands were scored
(``fully_scored``); docs/VARIANCE.md, "Two theoretical wins".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal

from books.statistics import Z_95, Z_997, Band, decimal_sqrt
from game.bets import BAND_BETS, POOL_BETS, WinBand
from game.findings import LIMIT_BREAK_CODES
from game.vocabulary import BETS

from .report_figures import (
    BandFigures,
    Bands,
    Flag,
    GroupFigures,
    Groups,
    OptimalBands,
    PoolFigures,
    ProgressiveBooks,
    ScoredShare,
    Scoring,
)

ZERO = Decimal(0)
CENT = Decimal("0.01")
FINE = Decimal("0.000001")  # theoretical sums are kept this fine, then shown to the cent
PERCENT = Decimal("0.0001")  # hold is shown in percent to four places


# A report's groups, as the figures name them and as one of them is called.
SCOPE_OF = {"tables": "table", "dealers": "dealer", "shifts": "shift", "players": "player"}


class CurrencyMismatch(ValueError):
    """Two currencies' figures were about to be added together."""


def _dec(value: object) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(str(value or 0))


@dataclass(slots=True)
class Sums:
    """What one group (a table, dealer, shift, player, the casino) adds up to in one currency."""

    currency: str
    rounds: int = 0
    void_rounds: int = 0
    hands: int = 0
    handle: dict[str, Decimal] = field(default_factory=lambda: dict.fromkeys(BETS, ZERO))
    win: dict[str, Decimal] = field(default_factory=lambda: dict.fromkeys(BETS, ZERO))
    # None: not known (sums read from a report made before what was paid was kept), and
    # whatever it is added to is not known either.
    win_paid: dict[str, Decimal] | None = field(default_factory=lambda: dict.fromkeys(BETS, ZERO))
    # Theoretical win and its variance: the base game (Ante + Blind + Play, per
    # Ante) and Trips (per Trips wager, from the configured pay table).
    theo_base: Decimal = ZERO
    theo_trips: Decimal = ZERO
    var_base: Decimal = ZERO
    var_trips: Decimal = ZERO
    # Twice the covariance of the base game and Trips (of one seat and of two
    # seats of one round): what the total's variance adds to the two above.
    var_cross: Decimal = ZERO
    # What the players' own decisions gave up, in money (Σ Ante × Antes lost, over
    # the scored seats, exact), and how many of the live hands were scored.
    skill: Decimal = ZERO
    scored_hands: int = 0
    mismatches: int = 0
    overpaid: Decimal = ZERO  # the dealer paid players more than the rules give
    underpaid: Decimal = ZERO
    findings: dict[str, int] = field(default_factory=dict)

    def __add__(self, other: Sums) -> Sums:
        result = Sums.from_json(self.to_json())
        result.add(other)
        return result

    def add(self, other: Sums) -> None:
        """Add ``other`` into these sums, in place (merging thousands of parts stays cheap)."""
        if other.currency != self.currency:
            raise CurrencyMismatch(f"{other.currency} figures cannot be added to {self.currency} figures")
        self.rounds += other.rounds
        self.void_rounds += other.void_rounds
        self.hands += other.hands
        for bet in BETS:
            self.handle[bet] += other.handle[bet]
            self.win[bet] += other.win[bet]
        if self.win_paid is None or other.win_paid is None:
            self.win_paid = None
        else:
            for bet in BETS:
                self.win_paid[bet] += other.win_paid[bet]
        self.theo_base += other.theo_base
        self.theo_trips += other.theo_trips
        self.var_base += other.var_base
        self.var_trips += other.var_trips
        self.var_cross += other.var_cross
        self.skill += other.skill
        self.scored_hands += other.scored_hands
        self.mismatches += other.mismatches
        self.overpaid += other.overpaid
        self.underpaid += other.underpaid
        for code, n in other.findings.items():
            self.findings[code] = self.findings.get(code, 0) + n

    def to_json(self) -> dict:
        """Every figure as a string or an int; zeros left out (a player's sums are mostly zeros)."""
        data: dict = {"currency": self.currency}
        for name in ("rounds", "void_rounds", "hands", "scored_hands", "mismatches"):
            if getattr(self, name):
                data[name] = getattr(self, name)
        for name in ("handle", "win"):
            amounts = {b: str(v) for b, v in getattr(self, name).items() if v}
            if amounts:
                data[name] = amounts
        if self.win_paid is not None:  # written when known, zeros too: its absence means not known
            data["win_paid"] = {b: str(v) for b, v in self.win_paid.items() if v}
        for name in ("theo_base", "theo_trips", "var_base", "var_trips", "var_cross", "skill", "overpaid",
                     "underpaid"):
            if getattr(self, name):
                data[name] = str(getattr(self, name))
        if self.findings:
            data["findings"] = dict(sorted(self.findings.items()))
        return data

    @classmethod
    def from_json(cls, data: Mapping) -> Sums:
        return cls(
            currency=str(data["currency"]),
            rounds=int(data.get("rounds", 0)),
            void_rounds=int(data.get("void_rounds", 0)),
            hands=int(data.get("hands", 0)),
            handle={b: _dec(data.get("handle", {}).get(b)) for b in BETS},
            win={b: _dec(data.get("win", {}).get(b)) for b in BETS},
            win_paid=({b: _dec(data["win_paid"].get(b)) for b in BETS} if data.get("win_paid") is not None
                      else None),
            theo_base=_dec(data.get("theo_base")),
            theo_trips=_dec(data.get("theo_trips")),
            var_base=_dec(data.get("var_base")),
            var_trips=_dec(data.get("var_trips")),
            var_cross=_dec(data.get("var_cross")),
            skill=_dec(data.get("skill")),
            scored_hands=int(data.get("scored_hands", 0)),
            mismatches=int(data.get("mismatches", 0)),
            overpaid=_dec(data.get("overpaid")),
            underpaid=_dec(data.get("underpaid")),
            findings={str(k): int(v) for k, v in data.get("findings", {}).items()},
        )


def sums_of(group: GroupFigures) -> Sums:
    """The sums a group's derived figures were derived from."""
    return Sums(
        currency=group.currency, rounds=group.rounds, void_rounds=group.void_rounds, hands=group.hands,
        handle={b: group.handle.get(b, ZERO) for b in BETS}, win={b: group.win.get(b, ZERO) for b in BETS},
        win_paid=None if group.win_paid is None else {b: group.win_paid.get(b, ZERO) for b in BETS},
        theo_base=group.theo_base, theo_trips=group.theo_trips, var_base=group.var_base,
        var_trips=group.var_trips, var_cross=group.var_cross, skill=group.skill,
        scored_hands=group.scored_hands, mismatches=group.mismatches, overpaid=group.overpaid,
        underpaid=group.underpaid, findings=dict(group.findings),
    )


class ByCurrency(dict[str, Sums]):
    """One group's sums, one ``Sums`` per currency: the only way groups are added up."""

    def add(self, sums: Sums) -> None:
        mine = self.get(sums.currency)
        if mine is None:
            self[sums.currency] = Sums.from_json(sums.to_json())
        else:
            mine.add(sums)

    def add_all(self, other: Mapping[str, Sums]) -> None:
        for sums in other.values():
            self.add(sums)

    def to_json(self) -> dict:
        return {currency: sums.to_json() for currency, sums in sorted(self.items())}

    @classmethod
    def from_json(cls, data: Mapping[str, Mapping]) -> ByCurrency:
        groups = cls()
        for currency, sums in data.items():
            groups.add(Sums.from_json({**sums, "currency": currency}))
        return groups

    @classmethod
    def of_groups(cls, data: Mapping[str, GroupFigures]) -> ByCurrency:
        groups = cls()
        for group in data.values():
            groups.add(sums_of(group))
        return groups


@dataclass(frozen=True, slots=True)
class Theory:
    """Per unit wagered: the base game per Ante, Trips per Trips wager of one pay table.

    The covariances are those of two seats of one round (shared board and
    dealer cards) and, for base against Trips, of one seat with itself
    (``base_trips_same``) and with another seat of its round.
    """

    base_edge: Decimal
    base_sd: Decimal
    trips_edge: Decimal
    trips_sd: Decimal
    base_covariance: Decimal = ZERO
    trips_covariance: Decimal = ZERO
    base_trips_same: Decimal = ZERO
    base_trips_other: Decimal = ZERO

    def theoretical(self, wagers: Wagers) -> dict[str, Decimal]:
        """A group's theoretical win and the variance of its win, from the sums of its wagers."""
        var_base = (self.base_sd * self.base_sd * wagers.ante_squares
                    + self.base_covariance * wagers.ante_pairs)
        var_trips = (self.trips_sd * self.trips_sd * wagers.trips_squares
                     + self.trips_covariance * wagers.trips_pairs)
        var_cross = 2 * (self.base_trips_same * wagers.ante_trips_same
                         + self.base_trips_other * wagers.ante_trips_other)
        return {
            "theo_base": (self.base_edge * wagers.ante).quantize(FINE),
            "theo_trips": (self.trips_edge * wagers.trips).quantize(FINE),
            "var_base": var_base.quantize(FINE),
            "var_trips": var_trips.quantize(FINE),
            "var_cross": var_cross.quantize(FINE),
        }


@dataclass(frozen=True, slots=True)
class Wagers:
    """The sums over a group's live seats that its variance needs.

    ``*_pairs`` add, for every round, the products of two different seats'
    wagers (each ordered pair once: ``(Σa)² − Σa²``); ``ante_trips_other``
    likewise pairs one seat's Ante with another seat's Trips.
    """

    ante: Decimal = ZERO
    ante_squares: Decimal = ZERO
    ante_pairs: Decimal = ZERO
    trips: Decimal = ZERO
    trips_squares: Decimal = ZERO
    trips_pairs: Decimal = ZERO
    ante_trips_same: Decimal = ZERO
    ante_trips_other: Decimal = ZERO


# ---- derived figures -------------------------------------------------------


def percent_of(numerator: Decimal, denominator: Decimal) -> Decimal:
    """``numerator / denominator`` in percent, to 4 places (half up); the denominator is not zero.

    The one rounding of a percentage: the hold a report shows and the hold a
    variance test judges are the same number.
    """
    return (numerator / denominator * 100).quantize(PERCENT, rounding=ROUND_HALF_UP)


def percent(numerator: Decimal, denominator: Decimal) -> Decimal | None:
    """``percent_of``; None over nothing."""
    return percent_of(numerator, denominator) if denominator else None


def _band(actual: Decimal, expected: Decimal, variance: Decimal, basis: str) -> BandFigures:
    sd = decimal_sqrt(variance) if variance > 0 else ZERO
    b95, b997 = Band(expected, sd, Z_95), Band(expected, sd, Z_997)
    if sd == 0:
        outside = None
    elif not b997.holds(actual):
        outside = "99.7"
    elif not b95.holds(actual):
        outside = "95"
    else:
        outside = None
    return BandFigures(
        actual=actual.quantize(CENT), expected=expected.quantize(CENT), sd=sd.quantize(CENT),
        low_95=b95.low.quantize(CENT), high_95=b95.high.quantize(CENT),
        low_997=b997.low.quantize(CENT), high_997=b997.high.quantize(CENT),
        z=((actual - expected) / sd).quantize(Decimal("0.01")) if sd else None,
        outside=outside, theoretical=basis,
    )


# Which theoretical win a band judges the house win by.
OPTIMAL = "optimal"  # the game's house edge, as if every decision were the best one
ACTUAL = "actual"  # that plus what the players' scored decisions gave up


# A rate over less time than this is not shown: a table or dealer that dealt a few minutes would
# read as hundreds of hands an hour.
SHORTEST_RATE = Decimal("0.25")  # hours


def hours_of(span: timedelta) -> Decimal:
    """A span in hours, exactly (from its microseconds, not a float)."""
    return Decimal(span // timedelta(microseconds=1)) / 3_600_000_000


def per_hour(count: int, hours: Decimal) -> Decimal | None:
    """``count`` an hour, whole; None over less than ``SHORTEST_RATE``."""
    return (Decimal(count) / hours).quantize(Decimal(1)) if hours >= SHORTEST_RATE else None


def dealer_order(*, overpaid: Decimal, underpaid: Decimal, mismatches: int, dealer: str, currency: str) -> tuple:
    """Dealers in the order every page lists them: by the money their payout mismatches put at
    stake (over and under), then by how many, then by name."""
    return (-(overpaid + underpaid), -mismatches, dealer, currency)


def chart_order(*, outside: str | None, handle: Decimal, key: str, currency: str) -> tuple:
    """Groups in the order a report's charts take them: those outside their band first, then by
    handle, then by name."""
    return (not outside, -handle, key, currency)


def fully_scored(sums: Sums) -> bool:
    """Whether every live hand of the group was scored: only then is its skill amount the whole of it."""
    return sums.hands > 0 and sums.scored_hands == sums.hands


def _bands(base_win: Decimal, trips_win: Decimal, theo_base: Decimal, sums: Sums, basis: str) -> Bands:
    var_total = sums.var_base + sums.var_trips + sums.var_cross
    return Bands(
        base=_band(base_win, theo_base, sums.var_base, basis),
        trips=_band(trips_win, sums.theo_trips, sums.var_trips, basis),
        total=_band(base_win + trips_win, theo_base + sums.theo_trips, var_total, basis),
    )


def derive(sums: Sums) -> GroupFigures:
    """The sums of a group with its ratios, theoretical bands and dealer accuracy.

    ``bands`` are the ones the report judges by (its flags): at actual play
    when the group is fully scored, else at optimal play, each saying which
    (``theoretical``). ``bands_optimal`` are always at optimal play. The
    spread is the optimal-play one either way (docs/VARIANCE.md).
    """
    handle_total = sum(sums.handle.values(), ZERO)
    win_total = sum(sums.win.values(), ZERO)
    base_win = sum((sums.win[b] for b in BAND_BETS[WinBand.BASE]), ZERO)
    trips_win = sum((sums.win[b] for b in BAND_BETS[WinBand.TRIPS]), ZERO)
    theo_base_actual = sums.theo_base + sums.skill
    basis = ACTUAL if fully_scored(sums) else OPTIMAL
    optimal = _bands(base_win, trips_win, sums.theo_base, sums, OPTIMAL)
    win_paid_total = None if sums.win_paid is None else sum(sums.win_paid.values(), ZERO)
    return GroupFigures(
        currency=sums.currency, rounds=sums.rounds, void_rounds=sums.void_rounds, hands=sums.hands,
        handle=dict(sums.handle), win=dict(sums.win),
        win_paid=None if sums.win_paid is None else dict(sums.win_paid),
        win_paid_total=win_paid_total,
        dealer_difference=None if win_paid_total is None else win_paid_total - win_total,
        theo_base=sums.theo_base, theo_trips=sums.theo_trips,
        var_base=sums.var_base, var_trips=sums.var_trips, var_cross=sums.var_cross,
        skill=sums.skill, scored_hands=sums.scored_hands, mismatches=sums.mismatches,
        overpaid=sums.overpaid, underpaid=sums.underpaid, findings=dict(sorted(sums.findings.items())),
        handle_total=handle_total,
        win_total=win_total,
        hold_percent={b: percent(sums.win[b], sums.handle[b]) for b in BETS}
        | {"total": percent(win_total, handle_total)},
        theo_base_actual=theo_base_actual,
        theoretical_optimal=sums.theo_base + sums.theo_trips,
        theoretical_actual=theo_base_actual + sums.theo_trips,
        scored_percent=percent(Decimal(sums.scored_hands), Decimal(sums.hands)),
        fully_scored=fully_scored(sums),
        theoretical=basis,
        bands=optimal if basis == OPTIMAL else _bands(base_win, trips_win, theo_base_actual, sums, ACTUAL),
        bands_optimal=OptimalBands(base=optimal.base, total=optimal.total),
        mismatches_per_1000=(
            (Decimal(sums.mismatches) * 1000 / sums.hands).quantize(Decimal("0.01")) if sums.hands else None
        ),
        limit_breaks=sum(sums.findings.get(code, 0) for code in LIMIT_BREAK_CODES),
    )


def derive_by_currency(groups: Mapping[str, Mapping[str, Sums]]) -> Groups:
    """``{key: {currency: derived}}`` for a scope's groups, keys and currencies in order."""
    return {
        key: {currency: derive(sums) for currency, sums in sorted(by_currency.items())}
        for key, by_currency in sorted(groups.items())
    }


def scoring_of(casino: Mapping[str, Sums], groups: Mapping[str, Groups]) -> Scoring:
    """How much of the range game protection had scored when the report ran: the casino's hands
    per currency, and how many groups of each scope (with hands) were not fully scored, whose
    bands therefore judged by the theoretical at optimal play."""
    return Scoring(
        casino={
            currency: ScoredShare(hands=sums.hands, scored_hands=sums.scored_hands,
                                  scored_percent=percent(Decimal(sums.scored_hands), Decimal(sums.hands)))
            for currency, sums in sorted(casino.items())
        },
        not_fully_scored={
            scope: sum(1 for by_currency in derived.values() for g in by_currency.values()
                       if g.hands and not g.fully_scored)
            for scope, derived in groups.items()
        },
    )


def flags_of(scope: str, derived: Groups) -> list[Flag]:
    """Every band a group of ``scope`` falls outside of, in its currency, worst first."""
    found = []
    for key, by_currency in derived.items():
        for currency, figures in by_currency.items():
            for bet, band in figures.bands:
                if band.outside:
                    found.append(Flag(scope=scope, key=key, currency=currency, bet=bet, **dict(band)))
    found.sort(key=lambda f: (f.outside != "99.7", -abs(f.z or 0)))
    return found


def progressive_books(casino: Mapping[str, GroupFigures], pools: Mapping[str, PoolFigures]) -> dict[str, ProgressiveBooks]:
    """The progressive bets of each currency with a pool, as the books see them (``ProgressiveBooks``).

    Each currency's wagers are the casino's handle of the bet; the awards and the debt are its
    pools' ledgers over the range. The house's win is the cash the bets left less what the debt
    grew by: wagers − fixed awards − awards from the meters − (closing debt − opening debt).
    """
    books = {}
    for currency in sorted({pool.currency for pool in pools.values()}):
        mine = {code: pool for code, pool in sorted(pools.items()) if pool.currency == currency}
        group = casino.get(currency)
        wagers = sum((group.handle.get(bet, ZERO) for bet in POOL_BETS), ZERO) if group else ZERO
        from_meter = sum((pool.awards for pool in mine.values()), ZERO)
        fixed = sum((pool.fixed_awards for pool in mine.values()), ZERO)
        opening = sum((p.opening + p.opening_overflow + p.opening_reserve for p in mine.values()), ZERO)
        closing = sum((p.closing + p.closing_overflow + p.closing_reserve for p in mine.values()), ZERO)
        paid_win = wagers - from_meter - fixed
        win = paid_win - (closing - opening)
        books[currency] = ProgressiveBooks(
            currency=currency, pools=list(mine), wagers=wagers, awards_from_meter=from_meter, fixed_awards=fixed,
            paid_win=paid_win, debt_opening=opening, debt_closing=closing, debt_change=closing - opening,
            win=win, hold_percent=percent(win, wagers),
        )
    return books

