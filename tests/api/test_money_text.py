"""rounds.wire.fields.money_text: two decimals, remembered per value, the same text every time;
and the bounded memo behind it."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rounds.wire import fields
from rounds.wire.fields import money_text
from rounds.wire.memo import BoundedMemo

# As wide as the answer's amounts: 18 digits before the point.
AMOUNTS = st.decimals(min_value=-10**18 + 1, max_value=10**18 - 1, allow_nan=False, allow_infinity=False,
                      places=2)


@given(AMOUNTS)
def test_an_amount_has_its_two_decimal_text_however_often_it_is_asked(amount):
    expected = format(amount.quantize(Decimal("0.01")), "f") if amount else "0.00"
    assert money_text(amount) == expected
    assert money_text(amount) == expected  # remembered
    assert money_text(Decimal(expected)) == expected  # the same value spelt otherwise


def test_equal_values_share_one_text_and_zero_has_no_sign():
    assert money_text(Decimal("5")) == money_text(Decimal("5.00")) == "5.00"
    assert money_text(Decimal("-0.00")) == money_text(Decimal("0")) == "0.00"
    assert money_text("1000000025000") == "1000000025000.00"  # a row not read back yet may hold text


def test_what_is_remembered_stays_bounded(monkeypatch):
    texts = BoundedMemo(fields.MONEY_TEXTS.work, most=100)
    monkeypatch.setattr(fields, "MONEY_TEXTS", texts)
    for cents in range(250):
        assert fields.money_text(Decimal(cents) / 100) == f"{cents // 100}.{cents % 100:02d}"
    assert 0 < len(texts) <= 100


def test_a_memo_works_each_key_out_once_and_keeps_nothing_that_failed():
    calls = []

    def work(key):
        calls.append(key)
        if key < 0:
            raise ValueError(key)
        return key * 2

    memo = BoundedMemo(work, most=3)
    assert [memo[1], memo[1], memo[2]] == [2, 2, 4]
    assert calls == [1, 2]
    with pytest.raises(ValueError):
        memo[-1]
    assert -1 not in memo
    for key in (3, 4, 5):
        memo[key]
    assert len(memo) <= 3 and memo[5] == 10
