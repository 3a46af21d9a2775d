"""Cards as the tables write them (``"Ah"``, ``"Td"``) and as the engine keeps them.

A card is an ``int`` in ``0..51``: ``rank * 4 + suit``, ranks ``2..A`` as ``0..12``
and suits ``c d h s`` as ``0..3``. Integers keep the evaluator's lookups cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RANKS = "23456789TJQKA"
SUITS = "cdhs"

Card = int


class CardError(ValueError):
    """A card code that RULES.md does not allow."""


_BY_TEXT: dict[str, Card] = {}
for _r, _rank in enumerate(RANKS):
    for _s, _suit in enumerate(SUITS):
        _BY_TEXT[_rank + _suit] = _r * 4 + _s
        # RULES.md: "Input is case-insensitive for the suit".
        _BY_TEXT[_rank + _suit.upper()] = _r * 4 + _s

_TEXT: tuple[str, ...] = tuple(RANKS[c // 4] + SUITS[c % 4] for c in range(52))


def parse_card(text: object) -> Card:
    if not isinstance(text, str):
        raise CardError(f"a card is a two-character string, not {type(text).__name__}")
    try:
        return _BY_TEXT[text]
    except KeyError:
        raise CardError(
            f"unknown card {text!r}: a rank of {RANKS} followed by a suit of {SUITS}"
        ) from None


def parse_cards(texts: Iterable[object]) -> tuple[Card, ...]:
    if type(texts) is not list and type(texts) is not tuple:
        texts = list(texts)  # read twice below when a code is wrong
    try:
        # Every round parses eleven or more cards: one lookup each, and
        # parse_card's type check and wording only for a code that is wrong.
        return tuple([_BY_TEXT[t] for t in texts])
    except (KeyError, TypeError):
        return tuple(parse_card(t) for t in texts)


def card_text(card: Card) -> str:
    return _TEXT[card]


def cards_text(cards: Sequence[Card]) -> list[str]:
    return [_TEXT[c] for c in cards]


def rank_of(card: Card) -> int:
    return card >> 2


def suit_of(card: Card) -> int:
    return card & 3
