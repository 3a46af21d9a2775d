"""The round record on the wire (ROUND_RECORD.md): shape in, stored verdict out.

Every field is stated once, in ``rounds.wire.contract``; the serializers here
are made from it. The input serializers check shape only and give the record
its canonical form (cards as ``Ah``, amounts with two decimals, defaults
filled in). Every rule of the game is the engine's, reached through
``rounds.services.ingest_round``.
"""

from __future__ import annotations

from . import contract
from .fields import split_cards
from .shapes import NotPlain

__all__ = [
    "BetAmountsSerializer", "FindingSerializer", "PaidSerializer", "RoundMeterEventSerializer",
    "RoundProgressiveSerializer", "RoundRecordSerializer", "RoundSerializer", "SeatRecordSerializer",
    "SeatSerializer", "record_fast", "round_data", "split_cards",
]

# What a table posts: these read any body, and word each error.
RoundRecordSerializer = contract.RECORD.serializer()
SeatRecordSerializer = contract.SEAT_RECORD.serializer()
PaidSerializer = contract.PAID.serializer()

# What the service answers: these document it (the schema) and render through round_data's writer.
RoundSerializer = contract.ROUND.serializer()
SeatSerializer = contract.SEAT.serializer()
BetAmountsSerializer = contract.BET_AMOUNTS.serializer()
FindingSerializer = contract.FINDING.serializer()
RoundMeterEventSerializer = contract.ROUND_METER_EVENT.serializer()
RoundProgressiveSerializer = contract.ROUND_PROGRESSIVE.serializer()


def record_fast(payload) -> dict | None:
    """``RoundRecordSerializer``'s canonical record of ``payload``, or None to ask it instead.

    Tables send the same well-formed shape all evening, and DRF's field
    machinery costs more than judging the round. This accepts only input that
    is plainly valid (exact JSON types, ASCII text without surrounding blanks)
    and returns exactly what the serializer would (tests/api/test_record_fast.py
    holds it to that); anything else, valid or not, returns None and goes
    through the serializer, which is the one that words every error.
    """
    try:
        return contract.RECORD.read(payload)
    except NotPlain:
        return None


def round_data(round_, *, seats=None, findings=None, meter_events=None) -> dict:
    """The answer for ``round_``: ``RoundSerializer``'s representation, written without DRF.

    Each list given (the rows just written; seats in seat order) is used as
    it is; each one left out is read from the round (``round_.seats.all()``,
    prefetched by ``selectors.round_list``).
    """
    return contract.ROUND.write(round_, {"seats": seats, "findings": findings, "meter_events": meter_events})
