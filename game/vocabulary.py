"""The game's words, each declared once: bets, decisions, round statuses, finding codes, meter event kinds.

The wire contract (``shared/spec/ROUND_RECORD.md``) spells them; the models
build their choices from these enums, and the API, the admin and the
reconciliation name them from here, so a word added or renamed here is added
or renamed everywhere (and ``makemigrations`` says which columns it touches).

What the engine hands out is the plain ``str`` value, never the enum member:
a verdict is plain data, and a member used as a JSON object's key is refused
by orjson.
"""

from __future__ import annotations

from enum import StrEnum


class Bet(StrEnum):
    """A seat's bets, in the contract's order (``paid`` and ``settled`` list them so)."""

    ANTE = "ante"
    BLIND = "blind"
    PLAY = "play"
    TRIPS = "trips"
    PROGRESSIVE = "progressive"


BETS: tuple[str, ...] = tuple(bet.value for bet in Bet)  # what is said of each: ``bets.BET_TERMS``


class Decision(StrEnum):
    """When the player bet Play, or folded (RULES.md "A round"); the multiples are in ``rules``."""

    PREFLOP_4X = "preflop_4x"
    PREFLOP_3X = "preflop_3x"
    FLOP_2X = "flop_2x"
    RIVER_1X = "river_1x"
    FOLD = "fold"


DECISIONS: tuple[str, ...] = tuple(decision.value for decision in Decision)


class RoundStatus(StrEnum):
    """A stored round's status (ROUND_RECORD.md "Response")."""

    VERIFIED = "verified"  # every claim matches and no rule is broken
    FLAGGED = "flagged"  # at least one finding that is not informational
    SETTLED = "settled"  # no seat said what the dealer paid
    VOID = "void"  # reported (or later declared) void; wins over flagged


STATUSES: tuple[str, ...] = tuple(status.value for status in RoundStatus)


class FindingCode(StrEnum):
    """What a round's verdict can find (ROUND_RECORD.md's table of codes)."""

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
    DEALT_IN_FUTURE = "dealt_in_future"
    CONFLICTING_RESUBMISSION = "conflicting_resubmission"
    DEALT_OUTSIDE_WINDOW = "dealt_outside_window"
    POOL_OFF_LEDGER = "pool_off_ledger"


FINDING_CODES: tuple[str, ...] = tuple(code.value for code in FindingCode)
# Findings that describe a correct round rather than a problem with it.
INFORMATIONAL_CODES: frozenset[str] = frozenset(
    {FindingCode.AGGREGATE_LIMIT_APPLIED.value, FindingCode.PROGRESSIVE_AWARD.value}
)
# Raised by the service, never by the engine: they need what a verdict is not
# given (the rounds stored before; the months the books hold open; the pool's ledger).
SERVICE_CODES: frozenset[str] = frozenset(
    {FindingCode.CONFLICTING_RESUBMISSION.value, FindingCode.DEALT_OUTSIDE_WINDOW.value,
     FindingCode.POOL_OFF_LEDGER.value}
)
# Raised once for each bet one mistake reaches: an Ante off the unit makes the Blind (its equal)
# and often the Play (its multiple) off the unit too. The contract keeps a finding per bet; the
# auditors' queue shows a seat's findings of such a code as one row and works them together
# (``rounds.mistakes``).
ONE_PER_BET_CODES: frozenset[str] = frozenset({FindingCode.BET_OFF_UNIT.value})


class MeterEventKind(StrEnum):
    """Every kind of event a pool's ledger holds, whoever makes it."""

    # Made by a round (``game.progressive``).
    CONTRIBUTION = "contribution"
    OVERFLOW = "overflow"  # a contribution above the ceiling, kept aside
    RESERVE = "reserve"  # a contribution's share for the hidden meter
    AWARD = "award"  # a percentage line, taken from the meter
    FIXED_AWARD = "fixed_award"  # a fixed line, paid by the house
    RESEED = "reseed"  # after a 100 % award; also a pool's opening meter
    # Made by a person: an auditor's adjustment with a reason, the overflow
    # moved into the meter, a void's taking back of a round's events.
    ADJUSTMENT = "adjustment"
    OVERFLOW_TRANSFER = "overflow_transfer"
    REVERSAL = "reversal"


METER_EVENT_KINDS: tuple[str, ...] = tuple(kind.value for kind in MeterEventKind)
# What a dealt round's verdict can write to the ledger; the contract answers these.
ROUND_EVENT_KINDS: tuple[str, ...] = (
    MeterEventKind.CONTRIBUTION.value,
    MeterEventKind.OVERFLOW.value,
    MeterEventKind.RESERVE.value,
    MeterEventKind.AWARD.value,
    MeterEventKind.FIXED_AWARD.value,
    MeterEventKind.RESEED.value,
)
# What people (and the services acting for them) write: a pool's opening
# meter is a reseed with no round, a void is a reversal of each event.
PERSON_EVENT_KINDS: tuple[str, ...] = (
    MeterEventKind.RESEED.value,
    MeterEventKind.ADJUSTMENT.value,
    MeterEventKind.OVERFLOW_TRANSFER.value,
    MeterEventKind.REVERSAL.value,
)

# How each kind may move the visible meter, as multiples of its (positive)
# amount: a round's kinds one way each; an adjustment either way; a reversal
# undoes a contribution, an award or an adjustment (either way), or an event
# that never moved the meter (0). The ledger writes by it, its check proves by it.
METER_MOVES: dict[str, tuple[int, ...]] = {
    MeterEventKind.CONTRIBUTION.value: (1,),
    MeterEventKind.RESEED.value: (1,),
    MeterEventKind.OVERFLOW_TRANSFER.value: (1,),
    MeterEventKind.AWARD.value: (-1,),
    MeterEventKind.FIXED_AWARD.value: (0,),
    MeterEventKind.OVERFLOW.value: (0,),
    MeterEventKind.RESERVE.value: (0,),
    MeterEventKind.ADJUSTMENT.value: (1, -1),
    MeterEventKind.REVERSAL.value: (1, -1, 0),
}
