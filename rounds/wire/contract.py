"""The round record and its answer (ROUND_RECORD.md), each field stated once.

What a table posts is ``RECORD``; what it gets back is ``ROUND``. Each line
below is one field on the wire: its kind, bounds, default, and whether it may
be without a value. ``rounds.wire.shapes`` makes from these lines the fast
reader of a record, the DRF serializers that word every refusal, the writer of
the answer, and so the OpenAPI schema: a field added here is in all of them.

Tables are real clients: a field may be added, never renamed, dropped or
given another meaning.
"""

from __future__ import annotations

from game.findings import ALL_CODES
from game.rules import BETS, DECISION_MULTIPLES
from infra.models import MONEY
from infra.work import State

from .shapes import (
    Amount,
    Answer,
    Cards,
    Choice,
    Day,
    Flag,
    Integer,
    Many,
    Moment,
    Money,
    Obj,
    Record,
    Text,
)
from .statuses import RoundStatusChoices

# ROUND_RECORD.md "amounts": a wager has at most 12 integer digits; a paid
# amount at most 15, the 500:1 Blind on the largest wager.
WAGER_DIGITS = 12
PAID_DIGITS = 15
# What an answer's amounts may hold: as the stored money columns
# (infra.models.MONEY), room for all that follows from the largest amounts
# (a 500:1 Blind, seven seats summed, a meter fed by such rounds).
ANSWER_MONEY_DIGITS = MONEY["max_digits"]

FIRST_SEAT, LAST_SEAT = 1, 7  # seat numbers; a round has at most as many seats as the last number
NO_AMOUNT = "0.00"


# ---- the record ---------------------------------------------------------------------------

PAID = Record(
    "Paid",
    [Amount(bet, whole_digits=PAID_DIGITS, signed=True, default=NO_AMOUNT) for bet in BETS],
    unknown="Unknown bet; one of {names}.",
    doc="What the dealer settled, per bet, signed, player's view; a bet left out is 0.",
)

SEAT_RECORD = Record("SeatRecord", [
    Integer("seat", minimum=FIRST_SEAT, maximum=LAST_SEAT),
    Text("player", max_length=64, optional=True),
    Cards("hole", count=2, optional=True),
    Amount("ante", whole_digits=WAGER_DIGITS),
    Amount("blind", whole_digits=WAGER_DIGITS),
    Amount("trips", whole_digits=WAGER_DIGITS, default=NO_AMOUNT),
    Amount("progressive", whole_digits=WAGER_DIGITS, default=NO_AMOUNT),
    Flag("progressive_lit", default=False),
    Choice("decision", choices=tuple(DECISION_MULTIPLES)),
    Amount("play", whole_digits=WAGER_DIGITS),
    Obj("paid", shape=PAID, optional=True),
])

REQUIRED_UNLESS_VOID = "Required unless the round is void."


def record_rules(record: dict) -> dict:
    """What no one field of a canonical record can say: its errors, empty when there are none.

    A round that is not void has all its cards; each seat is listed once.
    """
    errors: dict = {}
    seats = record["seats"]
    if not record["void"]:
        for name in ("board", "dealer_cards"):
            if record[name] is None:
                errors[name] = [REQUIRED_UNLESS_VOID]
        holes = {
            str(i): {"hole": [REQUIRED_UNLESS_VOID]} for i, seat in enumerate(seats) if seat["hole"] is None
        }
        if holes:
            errors["seats"] = holes
    numbers = [seat["seat"] for seat in seats]
    if len(set(numbers)) != len(numbers):
        twice = sorted({n for n in numbers if numbers.count(n) > 1})
        errors.setdefault("seats", {})["non_field_errors"] = [
            f"Seat {n} is listed more than once." for n in twice
        ]
    return errors


RECORD = Record("RoundRecord", [
    Text("table", max_length=32),
    Text("round", max_length=64),
    Moment("dealt_at"),
    Text("dealer", max_length=64, optional=True),
    Flag("void", default=False),
    Cards("board", count=5, optional=True),
    Cards("dealer_cards", count=2, optional=True),
    Many("seats", shape=SEAT_RECORD, min_length=1, max_length=LAST_SEAT),
], rules=record_rules, doc="One dealt round as a table posts it (ROUND_RECORD.md).")


# ---- the answer ---------------------------------------------------------------------------

BET_AMOUNTS = Answer(
    "BetAmounts", [Money(bet, max_digits=ANSWER_MONEY_DIGITS) for bet in BETS], of_mapping=True,
)

# In the order answers have always listed them.
SEAT = Answer("Seat", [
    Integer("seat"),
    Text("player", optional=True),
    Cards("hole", count=2, optional=True),
    Text("hand", optional=True),
    Text("decision"),
    Flag("progressive_lit"),
    Obj("settled", shape=BET_AMOUNTS, call=True),
    Obj("paid", shape=BET_AMOUNTS, call=True, optional=True),
    Money("ante", max_digits=ANSWER_MONEY_DIGITS),
    Money("blind", max_digits=ANSWER_MONEY_DIGITS),
    Money("trips", max_digits=ANSWER_MONEY_DIGITS),
    Money("play", max_digits=ANSWER_MONEY_DIGITS),
    Money("progressive", max_digits=ANSWER_MONEY_DIGITS),
])

FINDING = Answer("Finding", [
    Integer("id", source="pk"),
    Choice("code", choices=ALL_CODES),
    Integer("seat", optional=True),
    Text("bet", optional=True),
    Money("expected", max_digits=ANSWER_MONEY_DIGITS, optional=True),
    Money("claimed", max_digits=ANSWER_MONEY_DIGITS, optional=True),
    Text("detail"),
    Flag("informational"),
    Choice("state", choices=tuple(State.choices)),
])

ROUND_METER_EVENT = Answer("RoundMeterEvent", [
    Integer("seq"),
    Text("kind"),
    Integer("seat", optional=True),
    Money("amount", max_digits=ANSWER_MONEY_DIGITS),
    Money("meter", source="meter_after", max_digits=ANSWER_MONEY_DIGITS),
])

ROUND_PROGRESSIVE = Answer("RoundProgressive", [
    Text("pool", source="pool_version.pool.code"),
    Money("meter_before", max_digits=ANSWER_MONEY_DIGITS),
    Money("meter_after", max_digits=ANSWER_MONEY_DIGITS),
    Many("events", shape=ROUND_METER_EVENT, source="meter_events"),
])

ROUND_CONFIG = Answer("RoundConfig", [
    Text("name", source="config.name"),
    Integer("version"),
])

ROUND = Answer("Round", [
    Integer("id", source="pk"),
    Text("table", source="table.code"),
    Text("round", source="round_id"),
    Moment("dealt_at"),
    Day("gaming_day"),
    Text("dealer", optional=True),
    Flag("void"),
    Choice("status", choices=tuple(RoundStatusChoices.choices)),
    Cards("board", count=5, optional=True),
    Cards("dealer_cards", count=2, optional=True),
    Text("dealer_hand", optional=True),
    Flag("dealer_qualifies", optional=True),
    Obj("config", shape=ROUND_CONFIG, source="config_version"),
    Many("seats", shape=SEAT),
    # null for a table without a pool
    Obj("progressive", shape=ROUND_PROGRESSIVE, source="*", optional=True, when="pool_version_id"),
    Many("findings", shape=FINDING),
    Moment("received_at"),
], doc="A stored round with its verdict: the answer to a post, and what staff read.")
