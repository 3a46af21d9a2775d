"""Money as staff pages show it: grouped digits in the casino's locale, two decimals, its currency.

One helper, so that a list, a tile and a report write "12,500.00 SEK" the same
way. Decimal in, text out: never a float on the way. The API and the CSV
exports write plain decimal strings instead, for machines.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from django.utils.formats import get_format, number_format
from django.utils.translation import get_language

CENT = Decimal("0.01")


@lru_cache(maxsize=None)
def _separators(language: str | None) -> tuple[str, str] | None:
    """The language's thousands and decimal marks, where it groups by threes (None otherwise)."""
    if get_format("NUMBER_GROUPING", language) != 3:
        return None
    return get_format("THOUSAND_SEPARATOR", language), get_format("DECIMAL_SEPARATOR", language)


def _two_places(value: Decimal) -> str:
    """``value`` (already to the cent) grouped and pointed as the active language writes it.

    Python's own grouping, marks swapped in, where the language groups by threes: a report's page
    writes a thousand figures, and ``number_format`` looks its marks up again for each one.
    """
    marks = _separators(get_language())
    if marks is None:
        return number_format(value, decimal_pos=2, use_l10n=True, force_grouping=True)
    text = f"{value.copy_abs() if value.is_zero() else value:,.2f}"  # no "-0.00"
    return text if marks == (",", ".") else text.translate(str.maketrans({",": marks[0], ".": marks[1]}))


def money(amount: Decimal | None, currency: str = "") -> str:
    """``12500`` and ``"SEK"`` → ``"12,500.00 SEK"``; None (not known) → ``"–"``."""
    if amount is None:
        return "–"
    # Rounded to the cent first: number_format cuts the digits past decimal_pos (5.7564 → "5.75").
    text = _two_places(Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP))
    return f"{text} {currency}" if currency else text


def whole(value: int) -> str:
    """A count (rounds, hands, events) with its digits grouped: ``100000`` → ``"100,000"``."""
    marks = _separators(get_language())
    if marks is None:
        return number_format(value, use_l10n=True, force_grouping=True)
    return f"{value:,}".replace(",", marks[0])


def percent(value: Decimal | str | None) -> str:
    """A percentage kept to more places (a hold's four), written to two: ``"5.76 %"``; None → ``"–"``."""
    if value in (None, ""):
        return "–"
    shown = Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)
    return f"{_two_places(shown)} %"
