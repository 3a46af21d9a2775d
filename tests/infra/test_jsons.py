"""infra.jsons: orjson where it can, the json module's own answer wherever orjson says no."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infra.jsons import read_json, write_json
from infra.sql import _json_default

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(JSON_VALUES)
def test_reading_gives_what_the_json_module_gives(value):
    text = json.dumps(value)  # ASCII: lone surrogates travel escaped
    assert _same(read_json(text), json.loads(text))
    assert _same(read_json(text.encode()), json.loads(text.encode()))


def _same(a, b) -> bool:
    """Equal, and of the same types all the way down (1 == 1.0 would hide a lossy read)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}'])
def test_nan_and_infinity_reach_the_callers_refusal(text):
    def refuse(name):
        raise ValueError(f"{name} refused")

    with pytest.raises(ValueError, match="refused"):
        read_json(text, parse_constant=refuse)


@pytest.mark.parametrize("text", [
    '{"seat": 123456789012345678901234567890}', "[18446744073709551616, -9223372036854775809]",
    '"\\ud800"',
])
def test_what_orjson_refuses_is_read_by_the_json_module(text):
    assert _same(read_json(text), json.loads(text))


def test_nesting_too_deep_fails_as_it_does_in_the_json_module():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(RecursionError):
        json.loads(deep)
    with pytest.raises(RecursionError):
        read_json(deep)


_default = _json_default  # as infra.sql writes rows for PostgreSQL


@given(JSON_VALUES)
def test_writing_reads_back_to_what_the_json_module_writes(value):
    assert json.loads(write_json(value, default=_default)) == json.loads(json.dumps(value, default=_default))


def test_writing_columns_as_postgresql_reads_them():
    row = {"amount": Decimal("12.50"), "at": datetime(2026, 11, 30, 6, 43, 0, 123456, tzinfo=UTC),
           "day": date(2026, 11, 30), "big": 2**70, "name": "Åsa \u2028"}
    assert json.loads(write_json(row, default=_default)) == {
        "amount": "12.50", "at": "2026-11-30T06:43:00.123456+00:00", "day": "2026-11-30",
        "big": 2**70, "name": "Åsa \u2028",
    }
