"""rounds.api.fields.money_text: two decimals, remembered per value, the same text every time."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from rounds.api import fields
from rounds.api.fields import money_text

AMOUNTS = st.decimals(min_value=-10**12, max_value=10**12, allow_nan=False, allow_infinity=False, places=2)


@given(AMOUNTS)
def test_an_amount_has_its_two_decimal_text_however_often_it_is_asked(amount):
    expected = format(amount.quantize(Decimal("0.01")), "f") if amount else "0.00"
    assert money_text(amount) == expected
    assert money_text(amount) == expected  # remembered
    assert money_text(Decimal(expected)) == expected  # the same value spelt otherwise


def test_equal_values_share_one_text_and_zero_has_no_sign():
    assert money_text(Decimal("5")) == money_text(Decimal("5.00")) == "5.00"
    assert money_text(Decimal("-0.00")) == money_text(Decimal("0")) == "0.00"


def test_what_is_remembered_stays_bounded(monkeypatch):
    monkeypatch.setattr(fields, "_MONEY_TEXTS", {})
    for cents in range(fields._MONEY_TEXTS_KEPT + 10):
        money_text(Decimal(cents) / 100)
    assert len(fields._MONEY_TEXTS) <= fields._MONEY_TEXTS_KEPT
