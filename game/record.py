"""A dealt round as the engine reads it: already parsed, not yet judged."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from .cards import Card, parse_cards


# Not frozen: one is built for every seat read, and a frozen dataclass sets
# each field through object.__setattr__, several times slower (docs/SCALING.md).
# Nothing in the engine writes to a record.
@dataclass(slots=True)
class SeatRecord:
    seat: int
    hole: tuple[Card, Card] | None
    ante: Decimal
    blind: Decimal
    trips: Decimal
    play: Decimal
    decision: str
    progressive: Decimal = Decimal(0)
    progressive_lit: bool = False
    player: str | None = None
    # What the dealer settled, per bet, player's view; None when not reported.
    paid: Mapping[str, Decimal] | None = None


@dataclass(slots=True)  # not frozen, as SeatRecord
class RoundRecord:
    seats: tuple[SeatRecord, ...]  # in the order the table listed them
    board: tuple[Card, ...] | None = None
    dealer_cards: tuple[Card, ...] | None = None
    void: bool = False

    def all_cards(self) -> list[Card]:
        cards = [*(self.board or ()), *(self.dealer_cards or ())]
        for seat in self.seats:
            if seat.hole:
                cards += seat.hole
        return cards


ZERO = Decimal(0)


class Amounts(dict):
    """Decimal amounts by their spelling, each parsed once: ``amounts["5.00"]``.

    Tables bet the same few amounts again and again (5.00, 10, 25.00 …). The
    lookup is cheaper than ``Decimal(str)``, and it hands back the same
    Decimal every time, whose hash is then worked out once: hashing a Decimal
    is not cheap (docs/SCALING.md), and the rule checks look every Ante and
    Trips up in a set. Bounded, because a table may send any amount at all. Keep one per
    type of key: 5 == 5.0, but their Decimals differ in exponent.
    """

    __slots__ = ()
    KEPT = 4096

    def __missing__(self, spelling: object) -> Decimal:
        amount = Decimal(str(spelling))
        if len(self) < self.KEPT:
            self[spelling] = amount
        return amount


_AMOUNT_BY_TEXT = Amounts()
_AMOUNT_BY_INT = Amounts()


def _amount(value: object) -> Decimal:
    kind = type(value)
    if kind is str:
        return _AMOUNT_BY_TEXT[value]
    if kind is int:
        return _AMOUNT_BY_INT[value]
    return Decimal(str(value)) if value is not None else ZERO


def seat_from_wire(data: dict) -> SeatRecord:
    """A seat from its wire form, shape already checked (see ROUND_RECORD.md)."""
    get = data.get
    hole = get("hole")
    paid = get("paid")
    # Amounts are decimal strings nearly always: looked up here, without a
    # call; anything else goes through _amount.
    texts = _AMOUNT_BY_TEXT
    ante, blind, trips, play, progressive = (
        get("ante"), get("blind"), get("trips"), get("play"), get("progressive")
    )
    return SeatRecord(
        int(data["seat"]),
        parse_cards(hole) if hole else None,  # type: ignore[arg-type]
        texts[ante] if type(ante) is str else _amount(ante),
        texts[blind] if type(blind) is str else _amount(blind),
        texts[trips] if type(trips) is str else _amount(trips),
        texts[play] if type(play) is str else _amount(play),
        data["decision"],
        texts[progressive] if type(progressive) is str else _amount(progressive),
        bool(get("progressive_lit", False)),
        get("player") or None,
        None if paid is None else {
            bet: texts[v] if type(v) is str else _amount(v) for bet, v in paid.items()
        },
    )


def round_from_wire(data: dict) -> RoundRecord:
    """A round from its wire form, shape already checked (see ROUND_RECORD.md)."""
    board, dealer = data.get("board"), data.get("dealer_cards")
    return RoundRecord(
        tuple([seat_from_wire(s) for s in data["seats"]]),
        parse_cards(board) if board else None,
        parse_cards(dealer) if dealer else None,
        bool(data.get("void", False)),
    )
