"""What a verdict can find wrong (or note) in a round; the codes are ``vocabulary.FindingCode``."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .vocabulary import FINDING_CODES, INFORMATIONAL_CODES, FindingCode

# The codes by the names the engine and the services have always used.
PAYOUT_MISMATCH = FindingCode.PAYOUT_MISMATCH.value
ANTE_BLIND_UNEQUAL = FindingCode.ANTE_BLIND_UNEQUAL.value
BET_OFF_UNIT = FindingCode.BET_OFF_UNIT.value
BET_BELOW_MINIMUM = FindingCode.BET_BELOW_MINIMUM.value
BET_ABOVE_MAXIMUM = FindingCode.BET_ABOVE_MAXIMUM.value
PLAY_MISMATCH = FindingCode.PLAY_MISMATCH.value
DUPLICATE_CARD = FindingCode.DUPLICATE_CARD.value
PLAYER_MULTIPLE_HANDS = FindingCode.PLAYER_MULTIPLE_HANDS.value
PROGRESSIVE_WAGER_INVALID = FindingCode.PROGRESSIVE_WAGER_INVALID.value
PROGRESSIVE_NOT_LIT = FindingCode.PROGRESSIVE_NOT_LIT.value
AGGREGATE_LIMIT_APPLIED = FindingCode.AGGREGATE_LIMIT_APPLIED.value
PROGRESSIVE_AWARD = FindingCode.PROGRESSIVE_AWARD.value
DEALT_IN_FUTURE = FindingCode.DEALT_IN_FUTURE.value
# Raised by the service, not the engine (vocabulary.SERVICE_CODES says why).
CONFLICTING_RESUBMISSION = FindingCode.CONFLICTING_RESUBMISSION.value
DEALT_OUTSIDE_WINDOW = FindingCode.DEALT_OUTSIDE_WINDOW.value
# The round's pool held a meter its ledger does not give, and the round was judged at the ledger's.
POOL_OFF_LEDGER = FindingCode.POOL_OFF_LEDGER.value

INFORMATIONAL = INFORMATIONAL_CODES
ALL_CODES = FINDING_CODES
# A limit break: an Ante or Trips outside the table's limits.
LIMIT_BREAK_CODES = (BET_BELOW_MINIMUM, BET_ABOVE_MAXIMUM)


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
