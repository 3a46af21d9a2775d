"""casino.renderers.JSONRenderer writes exactly the bytes DRF's own renderer writes."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal

import pytest
from django.utils.translation import gettext_lazy
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.renderers import JSONRenderer as DRFRenderer

from casino.renderers import JSONRenderer

# Strings that JavaScript reads differently from JSON, and plenty beyond ASCII.
TEXTS = st.text() | st.sampled_from(["\u2028", "a\u2029b", "é", "\U0001f0a1", "\x00", '"\\'])
PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1) | TEXTS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTS, inner, max_size=4),
    max_leaves=16,
)


def both(data, media_type=None):
    return JSONRenderer().render(data, media_type), DRFRenderer().render(data, media_type)


@given(PLAIN)
def test_plain_values_are_written_byte_for_byte_as_drf_writes_them(data):
    ours, drf = both(data)
    assert ours == drf


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_reads_back_as_the_same_number(number):
    ours, drf = both({"x": number})
    assert json.loads(ours) == json.loads(drf) == {"x": number}


@pytest.mark.parametrize("value", [
    datetime(2026, 11, 30, 8, 0, 0, 123456, tzinfo=UTC),  # DRF writes UTC as "Z"
    datetime(2026, 11, 30, 9, 0, tzinfo=timezone(timedelta(hours=1))),
    datetime(2026, 11, 30, 9, 0),
    date(2026, 11, 30),
    time(23, 59, 1),
    gettext_lazy("Not found."),
    {1: "a key that is not a string"},  # orjson refuses: DRF writes it
    2**70,  # past 64 bits: DRF writes it
    ["\u2028", {"nested": datetime(2026, 1, 1, tzinfo=UTC)}],
])
def test_what_orjson_leaves_to_drf_comes_out_as_drf_writes_it(value):
    ours, drf = both({"value": value})
    assert ours == drf


@pytest.mark.parametrize("media_type", [None, "application/json; indent=4"])
def test_money_is_never_a_float(media_type):
    # DRF's own encoder writes a Decimal as a float (12.5, or 0.30000000000000004 for 0.3 + 0.0…).
    for data in ({"amount": Decimal("12.50")}, {1: Decimal("0.10")}):  # orjson's path, and DRF's
        written = json.loads(JSONRenderer().render(data, media_type))
        assert list(written.values())[0] == str(list(data.values())[0])


def test_an_indented_answer_asked_for_is_drfs():
    ours, drf = both({"a": [1, 2]}, "application/json; indent=4")
    assert ours == drf
    assert b"\n    " in ours


def test_nothing_is_an_empty_body():
    assert JSONRenderer().render(None) == b""


def test_the_api_answers_with_this_renderer(client):
    response = client.get("/api/v1/rounds/", HTTP_ACCEPT="application/json")
    assert isinstance(response.accepted_renderer, JSONRenderer)
