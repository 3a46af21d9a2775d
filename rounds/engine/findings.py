"""What a verdict can find wrong (or note) in a round."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

PAYOUT_MISMATCH = "payout_mismatch"
ANTE_BLIND_UNEQUAL = "ante_blind_unequal"
BET_OFF_UNIT = "bet_off_unit"
BET_BELOW_MINIMUM = "bet_below_minimum"
BET_ABOVE_MAXIMUM = "bet_above_maximum"
PLAY_MISMATCH = "play_mismatch"
DUPLICATE_CARD = "duplicate_card"
PLAYER_MULTIPLE_HANDS = "player_multiple_hands"
PROGRESSIVE_WAGER_INVALID = "progressive_wager_invalid"
PROGRESSIVE_NOT_LIT = "progressive_not_lit"
AGGREGATE_LIMIT_APPLIED = "aggregate_limit_applied"
PROGRESSIVE_AWARD = "progressive_award"
# Raised by the service, not the engine: it needs the stored history.
CONFLICTING_RESUBMISSION = "conflicting_resubmission"

# Findings that describe a correct round rather than a problem with it.
INFORMATIONAL = frozenset({AGGREGATE_LIMIT_APPLIED, PROGRESSIVE_AWARD})

ALL_CODES = (
    PAYOUT_MISMATCH,
    ANTE_BLIND_UNEQUAL,
    BET_OFF_UNIT,
    BET_BELOW_MINIMUM,
    BET_ABOVE_MAXIMUM,
    PLAY_MISMATCH,
    DUPLICATE_CARD,
    PLAYER_MULTIPLE_HANDS,
    PROGRESSIVE_WAGER_INVALID,
    PROGRESSIVE_NOT_LIT,
    AGGREGATE_LIMIT_APPLIED,
    PROGRESSIVE_AWARD,
    CONFLICTING_RESUBMISSION,
)


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    seat: int | None = None
    bet: str | None = None
    expected: Decimal | None = None
    claimed: Decimal | None = None
    detail: str = ""

    @property
    def informational(self) -> bool:
        return self.code in INFORMATIONAL
