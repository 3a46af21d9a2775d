"""Refusals that name their fields, shared by every app's services.

A service raises one of these; the API turns ``errors`` into its 400 body and
the admin shows each message beside its field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal

NON_FIELD = "non_field_errors"
CENT = Decimal("0.01")
# The largest amount staff may type in (limits, pool numbers, adjustments): 12
# integer digits, as a wager may have (ROUND_RECORD.md). The money columns hold
# 18 (infra.models.MONEY), room for what follows from such amounts.
MONEY_LIMIT = Decimal(10) ** 12
# A number as people and files write one for the service, in the wire's grammar: ASCII digits, one
# optional point with digits on both sides, a minus at most. No plus, exponent, separator or other
# script's digits: "1e5", "1_000", "+100" and "١٠٠" would each be read as a hundred or more.
DECIMAL_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


class FieldErrors(ValueError):
    """A change the rules refuse; ``errors`` maps each field to what is wrong with it."""

    def __init__(self, message: str | Mapping[str, list[str]], *, field: str = NON_FIELD):
        if isinstance(message, Mapping):
            self.errors = {name: list(texts) for name, texts in message.items()}
            message = "; ".join(f"{name}: {' '.join(texts)}" for name, texts in self.errors.items())
        else:
            self.errors = {field: [message]}
        super().__init__(message)


class ErrorList(dict):
    """Collects every refusal before raising, so a form shows them all at once."""

    def add(self, field: str, message: str) -> None:
        self.setdefault(field, []).append(message)


def decimal_of(value: object) -> Decimal | None:
    """``value`` as an exact Decimal; None for floats (never money) and for what is not a number
    written in ``DECIMAL_TEXT`` (surrounding spaces aside)."""
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, bool) or isinstance(value, float) or value is None:
        return None
    text = str(value).strip(" \t")
    return Decimal(text) if DECIMAL_TEXT.fullmatch(text) else None


def money_check(errors: ErrorList, field: str, value: object, minor_unit: Decimal, *, positive: bool) -> Decimal | None:
    amount = decimal_of(value)
    if amount is None:
        errors.add(field, f"{value!r} is not an amount: send a decimal string such as '5.00'.")
        return None
    if amount < 0 or (positive and amount == 0):
        errors.add(field, "must be positive." if positive else "cannot be negative.")
        return None
    if amount >= MONEY_LIMIT:
        errors.add(field, f"must be below {MONEY_LIMIT:,}.")
        return None
    if amount % minor_unit:
        errors.add(field, f"must be a whole number of the minor unit {minor_unit}.")
        return None
    return amount.quantize(CENT)
