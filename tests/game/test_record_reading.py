"""Reading the wire record: amounts parsed once per spelling must read exactly as parsed every time."""

from __future__ import annotations

from decimal import Decimal

import pytest

from game.cards import CardError, parse_cards
from game.record import Amounts, round_from_wire


def _seat(**amounts) -> dict:
    return {"seat": 1, "hole": ["Ah", "Kd"], "decision": "fold", **amounts}


def _read(**amounts):
    return round_from_wire({"seats": [_seat(**amounts)], "board": ["2c", "3d", "4h", "5s", "9c"],
                            "dealer_cards": ["Tc", "Td"]}).seats[0]


@pytest.mark.parametrize("spelling, text", [("5", "5"), ("5.00", "5.00"), (5, "5"), (5.0, "5.0"), ("0.50", "0.50")])
def test_an_amount_keeps_its_spelling_however_often_it_is_read(spelling, text):
    # 5 == 5.0 == "5"-as-read, but their Decimals differ in exponent: none may stand in for another.
    for other in ("5", "5.00", 5, 5.0, "0.50"):
        _read(ante=other)
    for _ in range(3):
        seat = _read(ante=spelling, blind=spelling, paid={"ante": spelling})
        assert str(seat.ante) == str(seat.blind) == str(seat.paid["ante"]) == text


def test_missing_amounts_read_as_zero_and_a_bool_is_not_an_amount():
    seat = _read(ante="5", blind="5", play="0")
    assert seat.trips == seat.progressive == Decimal(0)
    with pytest.raises(ArithmeticError):
        _read(ante=True)


def test_the_amounts_remembered_are_bounded():
    amounts = Amounts()
    for n in range(Amounts.KEPT + 100):
        assert amounts[f"{n}.00"] == Decimal(n)
    assert len(amounts) == Amounts.KEPT
    assert amounts["99999.00"] == Decimal("99999.00")  # still read, only not kept


@pytest.mark.parametrize("cards", [["Ah", "zz"], ["Ah", 7], ["Ah", ["K", "d"]]])
def test_a_wrong_card_is_refused_from_any_iterable(cards):
    for given in (cards, tuple(cards), iter(cards), (c for c in cards)):
        with pytest.raises(CardError):
            parse_cards(given)


def test_cards_read_from_a_generator():
    assert parse_cards(c for c in ["2c", "As"]) == (0, 51)
