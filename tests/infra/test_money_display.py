"""Money on staff pages: the casino's grouping, to the cent half up, with its currency."""

from __future__ import annotations

from decimal import Decimal

import pytest

from infra.money_display import money, whole


@pytest.mark.parametrize(("amount", "currency", "shown"), [
    (Decimal("12500"), "SEK", "12,500.00 SEK"),
    (Decimal("-1234567.5"), "USD", "-1,234,567.50 USD"),
    (Decimal("5.7564"), "", "5.76"),  # rounded, not cut
    (Decimal("0.005"), "EUR", "0.01 EUR"),  # half up
    (Decimal("999999999999999.99"), "SEK", "999,999,999,999,999.99 SEK"),  # the contract's largest paid
    (None, "SEK", "–"),
])
def test_money_is_grouped_rounded_and_named(amount, currency, shown):
    assert money(amount, currency) == shown


@pytest.mark.parametrize("language", ["en-gb", "sv", "de", "fr", "hi"])
@pytest.mark.parametrize("amount", [Decimal("0"), Decimal("-0.004"), Decimal("7.5"), Decimal("-1234567.555"),
                                    Decimal("999999999999999.99"), Decimal("1000")])
def test_money_is_written_as_django_writes_numbers_in_each_language(language, amount):
    """The quick grouping (Python's, the language's marks swapped in) writes what Django's
    ``number_format`` writes, in languages of other marks and of other grouping."""
    from decimal import ROUND_HALF_UP

    from django.utils import translation
    from django.utils.formats import number_format

    with translation.override(language):
        cents = amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        assert money(amount, "SEK") == f"{number_format(cents, 2, use_l10n=True, force_grouping=True)} SEK"


@pytest.mark.parametrize("language", ["en-gb", "sv", "de", "hi"])
@pytest.mark.parametrize("value", [0, -5, 999, 1000, -1234567, 10**15])
def test_counts_are_grouped_as_django_groups_them(language, value):
    from django.utils import translation
    from django.utils.formats import number_format

    with translation.override(language):
        assert whole(value) == number_format(value, use_l10n=True, force_grouping=True)
