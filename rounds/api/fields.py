"""Wire types of ROUND_RECORD.md: amounts, cards, moments with an offset."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from rounds.engine.cards import CardError, card_text, parse_card

# ASCII digits only, matched whole: "100\n" or full-width digits are not amounts.
_UNSIGNED = re.compile(r"^[0-9]{1,12}(\.[0-9]{1,2})?$")
_SIGNED = re.compile(r"^-?[0-9]{1,12}(\.[0-9]{1,2})?$")
CENT = Decimal("0.01")
MAX_UTC_OFFSET = timedelta(hours=14)
FIRST_YEAR, LAST_YEAR = 2000, 2099


def money_text(amount: Decimal) -> str:
    """The canonical text of an amount: two decimals, no exponent.

    Every answer writes dozens of amounts, nearly all of them the same few
    stakes and results: each is worked out once per process and remembered
    (bounded, as amounts can be anything). Zero of either sign is "0.00", as
    PostgreSQL, which has no negative zero, reads it back.
    """
    try:
        return _MONEY_TEXTS[amount]
    except KeyError:
        pass
    text = format(amount.quantize(CENT), "f") if amount else "0.00"
    if len(_MONEY_TEXTS) >= _MONEY_TEXTS_KEPT:
        _MONEY_TEXTS.clear()
    _MONEY_TEXTS[amount] = text
    return text


# By value: Decimal("5") and Decimal("5.00") are one key, and have one text.
_MONEY_TEXTS: dict[Decimal, str] = {}
_MONEY_TEXTS_KEPT = 4096


class AmountField(serializers.Field):
    """A decimal string or an integer with at most two decimals; never a float."""

    default_error_messages = {
        "float": "Send amounts as decimal strings or integers, not floats ({value!r}).",
        "invalid": "{value!r} is not an amount: digits with at most 2 decimals.",
        "negative": "An amount here cannot be negative.",
    }

    def __init__(self, *, signed: bool = False, **kwargs):
        self.signed = signed
        super().__init__(**kwargs)

    def to_internal_value(self, data) -> str:
        if isinstance(data, bool):
            self.fail("invalid", value=data)
        if isinstance(data, float):
            self.fail("float", value=data)
        text = str(data) if isinstance(data, int) else data
        if not isinstance(text, str):
            self.fail("invalid", value=data)
        if (_SIGNED if self.signed else _UNSIGNED).fullmatch(text) is None:
            if not self.signed and _SIGNED.fullmatch(text):
                self.fail("negative")
            self.fail("invalid", value=data)
        return money_text(Decimal(text))

    def to_representation(self, value) -> str:
        return money_text(Decimal(value))


class AmountFieldSchema(OpenApiSerializerFieldExtension):
    """Only ``paid`` amounts may be negative; the schema says which is which."""

    target_class = AmountField

    def map_serializer_field(self, auto_schema, direction):
        pattern = (_SIGNED if self.target.signed else _UNSIGNED).pattern
        integer = {"type": "integer"} if self.target.signed else {"type": "integer", "minimum": 0}
        return {"oneOf": [{"type": "string", "pattern": pattern}, integer]}


@extend_schema_field({"type": "string", "pattern": "^[2-9TJQKA][cdhsCDHS]$", "example": "Ah"})
class CardField(serializers.Field):
    def to_internal_value(self, data) -> str:
        try:
            return card_text(parse_card(data))
        except CardError as exc:
            raise serializers.ValidationError(str(exc)) from None

    def to_representation(self, value) -> str:
        return value


def cards_field(count: int, **kwargs) -> serializers.ListField:
    return serializers.ListField(
        child=CardField(), min_length=count, max_length=count,
        error_messages={
            "min_length": f"Exactly {count} cards.",
            "max_length": f"Exactly {count} cards.",
        },
        **kwargs,
    )


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
