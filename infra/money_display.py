"""Money as staff pages show it: grouped digits in the casino's locale, two decimals, its currency.

One helper, so that a list, a tile and a report write "12,500.00 SEK" the same
way. Decimal in, text out: never a float on the way. The API and the CSV
exports write plain decimal strings instead, for machines.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from django.utils.formats import number_format

CENT = Decimal("0.01")


def money(amount: Decimal | None, currency: str = "") -> str:
    """``12500`` and ``"SEK"`` → ``"12,500.00 SEK"``; None (not known) → ``"–"``."""
    if amount is None:
        return "–"
    # Rounded to the cent first: number_format cuts the digits past decimal_pos (5.7564 → "5.75").
    cents = Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)
    text = number_format(cents, decimal_pos=2, use_l10n=True, force_grouping=True)
    return f"{text} {currency}" if currency else text


def percent(value: Decimal | str | None) -> str:
    """A percentage kept to more places (a hold's four), written to two: ``"5.76 %"``; None → ``"–"``."""
    if value in (None, ""):
        return "–"
    shown = Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)
    return f"{number_format(shown, decimal_pos=2, use_l10n=True, force_grouping=True)} %"
