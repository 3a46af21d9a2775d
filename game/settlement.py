"""Settlement of Ante, Blind, Play and Trips, as RULES.md lays it out.

Results are in the player's view: positive a win, negative a loss, zero a push.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal

from . import findings as f
from .bets import GAME_BETS
from .evaluator import category_of, cards_key, evaluate_on_board
from .findings import Finding
from .record import RoundRecord, SeatRecord
from .rules import FOLD, TableRules

ZERO = Decimal(0)


def floor_to(amount: Decimal, minor_unit: Decimal) -> Decimal:
    # Rounding passed by position: decimal parses a keyword at twice the cost.
    return amount.quantize(minor_unit, ROUND_FLOOR)


@dataclass(slots=True)
class SeatSettlement:
    seat: int
    hand: int | None  # the seat's hand value; None when it holds no cards
    results: dict[str, Decimal]  # ante, blind, play, trips


@dataclass(slots=True)
class GameSettlement:
    dealer_hand: int | None
    dealer_qualifies: bool | None
    seats: dict[int, SeatSettlement]
    findings: list[Finding]


def settle_game(record: RoundRecord, rules: TableRules) -> GameSettlement:
    if record.void or record.board is None or record.dealer_cards is None:
        return _void(record)
    board = record.board
    # Every hand shares the board: its key is summed once (see evaluator.cards_key).
    board_key = cards_key(board)
    dealer = evaluate_on_board(board_key, board, record.dealer_cards)
    qualifies = category_of(dealer) >= rules.dealer_qualifier

    seats: dict[int, SeatSettlement] = {}
    # RULES.md settles right to left; no game bet of one seat depends on
    # another's, so the order the table listed them gives the same results.
    for seat in record.seats:
        number, hole = seat.seat, seat.hole
        if hole is None:
            seats[number] = SeatSettlement(number, None, dict.fromkeys(GAME_BETS, ZERO))
            continue
        hand = evaluate_on_board(board_key, board, hole)
        seats[number] = SeatSettlement(number, hand, _settle_seat(seat, hand, dealer, qualifies, rules))
    found = _apply_aggregate_limit(seats, rules)
    return GameSettlement(dealer, qualifies, seats, found)


def seat_number(seat: SeatRecord) -> int:
    return seat.seat


def _void(record: RoundRecord) -> GameSettlement:
    seats = {
        s.seat: SeatSettlement(s.seat, None, dict.fromkeys(GAME_BETS, ZERO)) for s in record.seats
    }
    return GameSettlement(None, None, seats, [])


def _settle_seat(
    seat: SeatRecord, hand: int, dealer: int, qualifies: bool, rules: TableRules
) -> dict[str, Decimal]:
    category = category_of(hand)
    if seat.decision == FOLD:
        ante, blind, play = -seat.ante, -seat.blind, ZERO
    elif hand > dealer:
        ante = seat.ante if qualifies else ZERO
        blind_pay = rules.blind_pays.get(category)
        blind = floor_to(seat.blind * blind_pay, rules.minor_unit) if blind_pay else ZERO
        play = seat.play
    elif hand < dealer:
        ante = -seat.ante if qualifies else ZERO
        blind, play = -seat.blind, -seat.play
    else:
        ante = blind = play = ZERO

    trips = ZERO
    if seat.trips:
        trips_pay = rules.trips_pays.get(category)
        trips = floor_to(seat.trips * trips_pay, rules.minor_unit) if trips_pay else -seat.trips
    # bets.GAME_BETS, spelled out: a display of constant keys is built in one step.
    return {"ante": ante, "blind": blind, "play": play, "trips": trips}


def _apply_aggregate_limit(seats: dict[int, SeatSettlement], rules: TableRules) -> list[Finding]:
    limit = rules.aggregate_limit
    if limit is None:
        return []
    total = ZERO
    for s in seats.values():
        for amount in s.results.values():
            if amount > ZERO:
                total += amount
    if total <= limit:
        return []
    minor = rules.minor_unit
    # Scaled in whole numbers, exactly: a 500:1 Blind times a large limit has
    # more digits than the decimal context keeps (28), and a product rounded
    # there can fall a minor unit short of the floor of the true share.
    limit_n, limit_d = limit.as_integer_ratio()
    total_n, total_d = total.as_integer_ratio()
    minor_n, minor_d = minor.as_integer_ratio()
    over = limit_n * total_d * minor_d
    under = limit_d * total_n * minor_n
    for s in seats.values():
        for bet, amount in s.results.items():
            if amount > ZERO:
                amount_n, amount_d = amount.as_integer_ratio()
                s.results[bet] = minor * ((amount_n * over) // (amount_d * under))
    return [
        Finding(
            f.AGGREGATE_LIMIT_APPLIED, expected=limit, claimed=total,
            detail=f"winnings of {total} exceed the table aggregate limit {limit}; "
            f"each win scaled by {limit}/{total}",
        )
    ]
