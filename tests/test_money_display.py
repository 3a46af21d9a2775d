"""Money on staff pages: the casino's grouping, to the cent half up, with its currency."""

from __future__ import annotations

from decimal import Decimal

import pytest

from infra.money_display import money


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
