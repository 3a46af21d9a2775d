"""What is said of each bet a round can hold, declared once: what settles it, when its wager counts
in the handle, and which theoretical band judges the house's win on it.

The words are ``vocabulary.Bet``'s, in the contract's order. What the books do with a bet is read
from ``BET_TERMS`` (or from what is derived from it below), never from a bet's name: the handle
(``rounds.selectors.bet_handled``, ``rounds.services.day_totals``), the bands a report judges by
(``books.figures``), what the variance tests count, the progressive books and the
report's CSV. How each bet is settled is the engine's (``settlement``, ``progressive``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .vocabulary import Bet


class SettledBy(StrEnum):
    RULES = "rules"  # RULES.md's settlement table, by the table's configuration version
    POOL = "pool"  # PROGRESSIVE.md, against the pool the seat's wager fed


class WinBand(StrEnum):
    """The theoretical bands a group's house win is judged by, each of one or more bets
    (``books.figures``; docs/VARIANCE.md)."""

    BASE = "base"  # Ante, Blind and Play together: the game's house edge is per Ante
    TRIPS = "trips"  # per Trips wager, from the table's Trips pay table


@dataclass(frozen=True, slots=True)
class BetTerms:
    bet: str
    settled_by: SettledBy
    # None: no theoretical band judges it (the Progressive: its pool's books do, ``progressive_books``).
    band: WinBand | None
    # Its wager counts in the handle only where the seat's progressive light was on.
    counted_only_when_lit: bool = False


BET_TERMS: tuple[BetTerms, ...] = (
    BetTerms(Bet.ANTE.value, SettledBy.RULES, WinBand.BASE),
    BetTerms(Bet.BLIND.value, SettledBy.RULES, WinBand.BASE),
    BetTerms(Bet.PLAY.value, SettledBy.RULES, WinBand.BASE),
    BetTerms(Bet.TRIPS.value, SettledBy.RULES, WinBand.TRIPS),
    BetTerms(Bet.PROGRESSIVE.value, SettledBy.POOL, None, counted_only_when_lit=True),
)

# The bets RULES.md's settlement table covers, in the contract's order.
GAME_BETS: tuple[str, ...] = tuple(t.bet for t in BET_TERMS if t.settled_by is SettledBy.RULES)
# The bets each pool settles: their handle is what the pools' books set against their awards.
POOL_BETS: tuple[str, ...] = tuple(t.bet for t in BET_TERMS if t.settled_by is SettledBy.POOL)
# Each band's bets, in the contract's order.
BAND_BETS: dict[WinBand, tuple[str, ...]] = {
    band: tuple(t.bet for t in BET_TERMS if t.band is band) for band in WinBand
}
# The bets any band judges: the handle the variance tests set a band's win against.
BANDED_BETS: tuple[str, ...] = tuple(t.bet for t in BET_TERMS if t.band is not None)
# A bet that is its band's only one: the band is that bet's own (a report's row of it shows it).
OWN_BAND: dict[str, WinBand] = {bets[0]: band for band, bets in BAND_BETS.items() if len(bets) == 1}
COUNTED_ONLY_WHEN_LIT: frozenset[str] = frozenset(t.bet for t in BET_TERMS if t.counted_only_when_lit)
