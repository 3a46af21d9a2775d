"""The decisions a seat makes, street by street, in the words of the wire contract.

A round record says only where the Play bet went (``decision``: ``preflop_4x``
… ``fold``, RULES.md "A round"); every street before it was a check. Scoring
a seat's play needs each of those choices, including the checks, and the
options it had at each: this module is their one home.
"""

from __future__ import annotations

from enum import StrEnum

from game.vocabulary import Decision


class Street(StrEnum):
    """Where a decision is taken: before the flop, on the flop, on the river."""

    PREFLOP = "preflop"
    FLOP = "flop"
    RIVER = "river"


STREETS: tuple[str, ...] = tuple(street.value for street in Street)

# Not betting: a check before the river. On the river the player bets 1x or folds.
CHECK = "check"

# Every option a player has on each street, best known first where the
# mathematics settles it (3x is never better than 4x: the same hands win).
OPTIONS: dict[str, tuple[str, ...]] = {
    Street.PREFLOP.value: (Decision.PREFLOP_4X.value, Decision.PREFLOP_3X.value, CHECK),
    Street.FLOP.value: (Decision.FLOP_2X.value, CHECK),
    Street.RIVER.value: (Decision.RIVER_1X.value, Decision.FOLD.value),
}

# The board cards a player has seen when deciding on each street.
BOARD_SEEN: dict[str, int] = {Street.PREFLOP.value: 0, Street.FLOP.value: 3, Street.RIVER.value: 5}


def choices(decision: str) -> tuple[tuple[str, str], ...]:
    """Every ``(street, option)`` a seat chose on its way to ``decision``, street by street."""
    if decision in (Decision.PREFLOP_4X.value, Decision.PREFLOP_3X.value):
        return ((Street.PREFLOP.value, decision),)
    if decision == Decision.FLOP_2X.value:
        return ((Street.PREFLOP.value, CHECK), (Street.FLOP.value, decision))
    if decision in (Decision.RIVER_1X.value, Decision.FOLD.value):
        return (
            (Street.PREFLOP.value, CHECK),
            (Street.FLOP.value, CHECK),
            (Street.RIVER.value, decision),
        )
    raise ValueError(f"unknown decision {decision!r}")
