"""Wire types of ROUND_RECORD.md: amounts, cards, moments with an offset, text that is text.

Each comes as the DRF field that reads it from a record (and words what is
wrong) and, where an answer writes it, the DRF field that documents it.
``rounds.wire.contract`` says which field of the record or answer is which.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from game.cards import RANKS, SUITS, CardError, card_text, parse_card

from .memo import BoundedMemo

CENT = Decimal("0.01")
MAX_UTC_OFFSET = timedelta(hours=14)
FIRST_YEAR, LAST_YEAR = 2000, 2099
# Digits and an optional fraction, ASCII only: what an amount past its limits still looks like.
_NUMBER = re.compile(r"^(-?)([0-9]+)(\.[0-9]{1,2})?$")
# The control characters an id may not hold (ROUND_RECORD.md): C0, DEL and C1. A line feed in a
# round id once kept the round's notice from ever being mailed (a header may not hold one).
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# What the schema shows for an amount: a stake as a table sends it ("100"), as answers write it ("100.00").
AMOUNT_EXAMPLE = "100"


def _money_text(amount) -> str:
    amount = amount if type(amount) is Decimal else Decimal(amount)
    return format(amount.quantize(CENT), "f") if amount else "0.00"


# Every answer writes dozens of amounts, nearly all of them the same few stakes
# and results. Keyed by value: Decimal("5") and Decimal("5.00") are one key,
# and have one text.
MONEY_TEXTS = BoundedMemo(_money_text)


def money_text(amount: Decimal) -> str:
    """The canonical text of an amount: two decimals, no exponent.

    Zero of either sign is "0.00", as PostgreSQL, which has no negative zero,
    reads it back.
    """
    return MONEY_TEXTS[amount]


class AmountField(serializers.Field):
    """A decimal string or an integer with at most two decimals; never a float.

    ``whole_digits`` bounds the digits before the decimal point; only a
    ``signed`` amount may be negative.
    """

    default_error_messages = {
        "float": "Send amounts as decimal strings or integers, not floats ({value!r}).",
        "invalid": "{value!r} is not an amount: digits with at most 2 decimals.",
        "negative": "An amount here cannot be negative.",
        "whole_digits": "At most {whole_digits} digits before the decimal point; {value!r} has {digits}.",
    }

    def __init__(self, *, signed: bool = False, whole_digits: int = 12, **kwargs):
        self.signed = signed
        self.whole_digits = whole_digits
        # ASCII digits only, matched whole: "100\n" or full-width digits are not amounts.
        self.pattern = re.compile(
            rf"^{'-?' if signed else ''}[0-9]{{1,{whole_digits}}}(\.[0-9]{{1,2}})?$"
        )
        super().__init__(**kwargs)

    @property
    def largest(self) -> int:
        """The largest whole amount: the bound of an amount sent as an integer."""
        return 10**self.whole_digits - 1

    def to_internal_value(self, data) -> str:
        if isinstance(data, bool):
            self.fail("invalid", value=data)
        if isinstance(data, float):
            self.fail("float", value=data)
        text = str(data) if isinstance(data, int) else data
        if not isinstance(text, str):
            self.fail("invalid", value=data)
        if self.pattern.fullmatch(text) is None:
            number = _NUMBER.fullmatch(text)
            if number is None:
                self.fail("invalid", value=data)
            sign, whole, _ = number.groups()
            if sign and not self.signed:
                self.fail("negative")
            if len(whole) > self.whole_digits:
                self.fail("whole_digits", whole_digits=self.whole_digits, value=data, digits=len(whole))
            self.fail("invalid", value=data)
        return money_text(Decimal(text))

    def to_representation(self, value) -> str:
        return money_text(Decimal(value))


class AmountFieldSchema(OpenApiSerializerFieldExtension):
    """Only ``paid`` amounts may be negative, and each kind has its own digits: the schema says which."""

    target_class = AmountField

    def map_serializer_field(self, auto_schema, direction):
        field = self.target
        low = -field.largest if field.signed else 0
        integer = {"type": "integer", "minimum": low, "maximum": field.largest}
        text = {"type": "string", "pattern": field.pattern.pattern, "example": AMOUNT_EXAMPLE}
        return {"oneOf": [text, integer]}


class MoneyField(serializers.DecimalField):
    """An amount in an answer: its canonical text (``money_text``)."""

    def __init__(self, *, max_digits: int, **kwargs):
        super().__init__(max_digits=max_digits, decimal_places=2, **kwargs)

    def to_representation(self, value) -> str:
        return money_text(value)


class MoneyFieldSchema(OpenApiSerializerFieldExtension):
    """A decimal's schema, with an amount as answers write it for its example: a docs page
    would otherwise make one up from the pattern ("14371714317.", "-.80")."""

    target_class = MoneyField

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        return {**schema, "example": money_text(Decimal(AMOUNT_EXAMPLE))}


# Every spelling of a card RULES.md allows, and its canonical text ("AH" is "Ah").
CARD_TEXTS: dict[str, str] = {
    rank + suit: card_text(parse_card(rank + suit)) for rank in RANKS for suit in SUITS + SUITS.upper()
}


@extend_schema_field({"type": "string", "pattern": "^[2-9TJQKA][cdhsCDHS]$", "example": "Ah"})
class CardField(serializers.Field):
    def to_internal_value(self, data) -> str:
        try:
            return card_text(parse_card(data))
        except CardError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value) -> str:
        return value


class CardsField(serializers.ListField):
    """A number of cards."""


# What the schema shows for cards, by the field's name: those of one real round (c-se-01).
CARDS_EXAMPLES = {"board": ["2c", "7d", "9h", "Ts", "Kd"], "dealer_cards": ["3h", "4s"], "hole": ["8c", "Jd"]}


class CardsFieldSchema(OpenApiSerializerFieldExtension):
    """A list of card codes, with real cards for its example: a docs page would otherwise
    show the one card of ``CardField``'s example as often as the list holds cards."""

    target_class = CardsField
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        example = CARDS_EXAMPLES.get(self.target.field_name)
        return schema if example is None else {**schema, "example": example}


def cards_field(count: int, **kwargs) -> CardsField:
    return CardsField(
        child=CardField(), min_length=count, max_length=count,
        error_messages={
            "min_length": f"Exactly {count} cards.",
            "max_length": f"Exactly {count} cards.",
        },
        **kwargs,
    )


def split_cards(text: str) -> list[str] | None:
    """Stored cards ("AhKh") as the wire writes them (["Ah", "Kh"]); none is None."""
    if not text:
        return None
    return [text[i : i + 2] for i in range(0, len(text), 2)]


class StoredCardsField(CardsField):
    """Cards in an answer, from the stored text of a row (``split_cards``)."""

    def __init__(self, *, count: int, **kwargs):
        super().__init__(child=CardField(), min_length=count, max_length=count, **kwargs)

    def to_representation(self, value) -> list[str] | None:
        return split_cards(value)


class StrictText:
    """A text input that must be a JSON string: DRF's text fields would read ``0`` as
    ``"0"``, and a number is not a reason, a note, a code or a dealer."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(StrictText, serializers.CharField):
    pass


class IdField(StrictCharField):
    """A table-sent id: printable text, refused whole (before any trimming) for a control character."""

    default_error_messages = {"control": "Control characters are not allowed (a {name} at position {at})."}

    def to_internal_value(self, data):
        if isinstance(data, str) and (found := CONTROL_CHARACTERS.search(data)):
            self.fail("control", name=f"U+{ord(found.group()):04X}", at=found.start() + 1)
        return super().to_internal_value(data)


class IdFieldSchema(OpenApiSerializerFieldExtension):
    """The schema says an id may not hold a control character, as the contract does."""

    target_class = IdField

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        return {**schema, "pattern": f"^[^{CONTROL_CHARACTERS.pattern[1:-1]}]*$"}


class StrictSlugField(StrictText, serializers.SlugField):
    pass


class NoneIfBlankCharField(serializers.CharField):
    """Text in an answer that is null where the row has none (a blank column)."""

    def to_representation(self, value) -> str | None:
        return str(value) if value else None


@extend_schema_field(OpenApiTypes.DATETIME)
class OffsetDateTimeField(serializers.Field):
    """ISO 8601 with an explicit offset; kept as the table wrote the instant."""

    def to_internal_value(self, data) -> str:
        if not isinstance(data, str):
            raise serializers.ValidationError("An ISO 8601 date and time with an offset.")
        try:
            moment = datetime.fromisoformat(data)
        except ValueError:
            raise serializers.ValidationError(f"{data!r} is not an ISO 8601 date and time.") from None
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise serializers.ValidationError("The time needs its UTC offset, e.g. +01:00.")
        # Real clocks are within ±14:00 of UTC (PostgreSQL refuses beyond ±15:59), and
        # a casino's rounds fall in this century: anything else is a broken clock, and
        # a year before time zones existed would come back in local mean time.
        if abs(moment.utcoffset()) > MAX_UTC_OFFSET:
            raise serializers.ValidationError("The UTC offset must be within ±14:00.")
        if not FIRST_YEAR <= moment.year <= LAST_YEAR:
            raise serializers.ValidationError(f"{data!r} is outside the years {FIRST_YEAR} to {LAST_YEAR}.")
        return moment.isoformat()

    def to_representation(self, value) -> str:
        return value.isoformat() if isinstance(value, datetime) else value
