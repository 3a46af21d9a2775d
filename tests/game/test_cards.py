"""Card codes exactly as RULES.md "Cards and hands" allows them."""

from __future__ import annotations

import pytest

from game.cards import (
    RANKS,
    SUITS,
    CardError,
    card_text,
    cards_text,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)

ALL_CODES = [rank + suit for rank in RANKS for suit in SUITS]


def test_the_deck_has_52_distinct_cards_numbered_0_to_51():
    assert len(ALL_CODES) == 52
    assert sorted(parse_card(code) for code in ALL_CODES) == list(range(52))


@pytest.mark.parametrize("code", ALL_CODES)
def test_every_card_round_trips_through_its_text(code):
    card = parse_card(code)
    assert card_text(card) == code
    assert RANKS[rank_of(card)] == code[0]
    assert SUITS[suit_of(card)] == code[1]


def test_card_is_rank_times_four_plus_suit():
    assert parse_card("2c") == 0
    assert parse_card("2s") == 3
    assert parse_card("3c") == 4
    assert parse_card("Td") == 8 * 4 + 1
    assert parse_card("As") == 51


@pytest.mark.parametrize("code", ALL_CODES)
def test_suit_is_case_insensitive(code):
    upper_suit = code[0] + code[1].upper()
    assert parse_card(upper_suit) == parse_card(code)
    # The engine always writes the suit in lower case.
    assert card_text(parse_card(upper_suit)) == code


@pytest.mark.parametrize(
    "text",
    [
        "10h",  # RULES.md: "`10h` is refused"
        "10H",
        "ah",  # the rank is not case-insensitive
        "kd",
        "tc",
        "jS",
        "1h",
        "Xh",
        "Ax",
        "A",
        "h",
        "",
        "Ahh",
        " Ah",
        "Ah ",
        "hA",
        "AH\n",
        "Ａh",  # a full-width letter is not an A
    ],
)
def test_codes_outside_the_rules_are_refused(text):
    with pytest.raises(CardError) as caught:
        parse_card(text)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize("value", [None, 0, 51, 12.0, b"Ah", ["A", "h"], ("A", "h"), True])
def test_non_strings_are_refused(value):
    with pytest.raises(CardError, match="two-character string"):
        parse_card(value)


def test_card_error_is_a_value_error():
    assert issubclass(CardError, ValueError)


def test_parse_cards_keeps_order_and_repeats():
    assert parse_cards(["Ah", "2c", "AH"]) == (parse_card("Ah"), 0, parse_card("Ah"))
    assert parse_cards([]) == ()


def test_parse_cards_refuses_the_whole_list_for_one_bad_card():
    with pytest.raises(CardError):
        parse_cards(["Ah", "Kh", "10h"])


def test_cards_text_writes_a_list_back():
    texts = ["Ah", "Kd", "2c", "Ts"]
    assert cards_text(parse_cards(texts)) == texts
    assert cards_text(parse_cards(ALL_CODES)) == ALL_CODES
