"""A dealt round as the engine reads it: already parsed, not yet judged."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from .cards import Card, parse_cards


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class RoundRecord:
    seats: tuple[SeatRecord, ...]  # in the order the table listed them
    board: tuple[Card, ...] | None = None
    dealer_cards: tuple[Card, ...] | None = None
    void: bool = False

    def all_cards(self) -> list[Card]:
        cards = list(self.board or ()) + list(self.dealer_cards or ())
        for seat in self.seats:
            cards.extend(seat.hole or ())
        return cards


def _amount(value: object) -> Decimal:
    return Decimal(str(value)) if value is not None else Decimal(0)


def seat_from_wire(data: dict) -> SeatRecord:
    """A seat from its wire form, shape already checked (see ROUND_RECORD.md)."""
    hole = data.get("hole")
    paid = data.get("paid")
    return SeatRecord(
        seat=int(data["seat"]),
        hole=tuple(parse_cards(hole)) if hole else None,  # type: ignore[arg-type]
        ante=_amount(data.get("ante")),
        blind=_amount(data.get("blind")),
        trips=_amount(data.get("trips")),
        play=_amount(data.get("play")),
        decision=data["decision"],
        progressive=_amount(data.get("progressive")),
        progressive_lit=bool(data.get("progressive_lit", False)),
        player=data.get("player") or None,
        paid=None if paid is None else {bet: _amount(v) for bet, v in paid.items()},
    )


def round_from_wire(data: dict) -> RoundRecord:
    """A round from its wire form, shape already checked (see ROUND_RECORD.md)."""
    board, dealer = data.get("board"), data.get("dealer_cards")
    return RoundRecord(
        seats=tuple(seat_from_wire(s) for s in data["seats"]),
        board=parse_cards(board) if board else None,
        dealer_cards=parse_cards(dealer) if dealer else None,
        void=bool(data.get("void", False)),
    )
