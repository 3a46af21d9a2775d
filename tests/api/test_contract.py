"""rounds.wire.contract: one statement of each field, which the reader, the refusals,
the answer and the schema all follow; and the contract's limits on amounts."""

from __future__ import annotations

import copy
import dataclasses
import re
from datetime import date, datetime, timezone
from decimal import Decimal

import pytest
from django.urls import path
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from infra.models import MONEY
from rounds.models import Finding, Round, Seat, Table, TableConfig, TableConfigVersion
from rounds.selectors import round_detail
from rounds.wire import contract
from rounds.wire.serializers import RoundRecordSerializer, record_fast, round_data
from rounds.wire.shapes import Amount, Money, NotPlain

from .records import ROUNDS, record

# ---- a field added to the table is in the reader, the refusals, the answer and the schema -----------

INSURANCE_IN = Amount("insurance", whole_digits=contract.WAGER_DIGITS, default=contract.NO_AMOUNT)
INSURANCE_OUT = Money("insurance", max_digits=contract.ANSWER_MONEY_DIGITS)


@pytest.fixture(scope="module")
def with_insurance():
    """The contract's record and answer with one more field on each seat, declared only here."""
    def seats_of(shape, seat):
        seats = next(f for f in shape.fields if f.name == "seats")
        return shape.amended(dataclasses.replace(seats, shape=seat))

    return (
        seats_of(contract.RECORD, contract.SEAT_RECORD.amended(INSURANCE_IN)),
        seats_of(contract.ROUND, contract.SEAT.amended(INSURANCE_OUT)),
    )


def insured(value) -> dict:
    data = record()
    data["seats"][0]["insurance"] = value
    return data


def test_an_added_field_is_read_by_the_fast_reader(with_insurance):
    record_shape, _ = with_insurance
    assert record_shape.read(insured("25"))["seats"][0]["insurance"] == "25.00"
    assert record_shape.read(record())["seats"][0]["insurance"] == "0.00"  # its default
    with pytest.raises(NotPlain):
        record_shape.read(insured("-25"))
    # The contract itself never heard of it.
    assert "insurance" not in record_fast(insured("25"))["seats"][0]


def test_an_added_field_is_read_and_its_errors_worded_by_the_serializer(with_insurance):
    record_shape, _ = with_insurance
    serializer = record_shape.serializer()(data=insured("25"))
    assert serializer.is_valid(), serializer.errors
    assert serializer.validated_data == record_shape.read(insured("25"))

    refused = record_shape.serializer()(data=insured("12345678901234"))
    assert not refused.is_valid()
    assert refused.errors["seats"][0]["insurance"] == [
        "At most 12 digits before the decimal point; '12345678901234' has 14."
    ]


def test_an_added_field_is_in_the_answer_and_its_generic_rendering(with_insurance, table_client):
    _, answer_shape = with_insurance
    client = table_client("S01", "se-50kr")
    stored = round_detail(round_pk=client.post(ROUNDS, record(), format="json").json()["id"])
    seats = list(stored.seats.all())
    for seat in seats:
        seat.insurance = Decimal("12.5")  # prefetched: the round's own seats
    answer = answer_shape.write(stored)
    assert [s["insurance"] for s in answer["seats"]] == ["12.50", "12.50"]
    assert answer == dict(round_data(stored), seats=answer["seats"])
    assert answer_shape.write(stored, {"seats": seats[:1]})["seats"] == answer["seats"][:1]
    generic = answer_shape.serializer(generic=True)(stored).data
    assert generic == answer


def test_an_added_field_is_in_the_schema(with_insurance):
    record_shape, answer_shape = with_insurance

    class Post(APIView):
        @extend_schema(request=record_shape.serializer(), responses={201: answer_shape.serializer()})
        def post(self, request):
            raise AssertionError("never called")

    schema = SchemaGenerator(patterns=[path("rounds/", Post.as_view())]).get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    asked = components["SeatRecordRequest"]["properties"]["insurance"]
    assert asked["default"] == "0.00"
    assert {"type": "string", "pattern": r"^[0-9]{1,12}(\.[0-9]{1,2})?$", "example": "100"} in asked["oneOf"]
    answered = components["Seat"]["properties"]["insurance"]
    assert answered["pattern"] == r"^-?\d{0,18}(?:\.\d{0,2})?$"
    assert "insurance" in components["Seat"]["required"]
    # The contract's own schema has no such field.
    assert "insurance" not in contract.SEAT.serializer()().fields


# ---- the answer's rows: given ones as they are, missing ones from the round ---------------------


def unsaved_round() -> tuple[Round, list[Seat]]:
    """A round and two seats as the service writes them, never saved: nothing to read."""
    version = TableConfigVersion(config=TableConfig(name="se-50kr"), version=3)
    round_ = Round(
        pk=41, table=Table(code="S01"), round_id="R-41", config_version=version, pool_version=None,
        dealt_at=datetime(2026, 11, 29, 20, 14, 3, tzinfo=timezone.utc), gaming_day=date(2026, 11, 29),
        dealer="", void=False, status="verified", board="2c7d9hJs4s", dealer_cards="KcKd",
        dealer_hand="pair", dealer_qualifies=True,
        received_at=datetime(2026, 11, 29, 20, 14, 4, tzinfo=timezone.utc),
    )
    seats = [
        Seat(seat=n, player="" if n == 2 else f"P-{n}", hole="5c6d", ante=Decimal("100"), blind=Decimal("100"),
             trips=Decimal(0), play=Decimal(0), progressive=Decimal(0), decision="fold", hand="pair",
             **{f"settled_{bet}": Decimal("-100") if bet in ("ante", "blind") else Decimal(0)
                for bet in ("ante", "blind", "play", "trips", "progressive")},
             paid_reported=n == 1, paid_ante=Decimal("-100"), paid_blind=Decimal("-100"),
             paid_play=Decimal(0), paid_trips=Decimal(0), paid_progressive=Decimal(0))
        for n in (1, 2)
    ]
    return round_, seats


def test_rows_given_for_the_answer_are_used_as_given_without_a_query():
    """No database here: a read of any row would fail the test."""
    round_, seats = unsaved_round()
    finding = Finding(pk=7, code="payout_mismatch", seat=1, bet="blind", expected=Decimal("500"),
                      claimed="50", detail="Blind paid 50, settles 500", informational=False, state="open")
    answer = round_data(round_, seats=seats, findings=[finding], meter_events=[])
    assert [s["seat"] for s in answer["seats"]] == [1, 2]
    assert answer["seats"][1]["player"] is None and answer["dealer"] is None
    assert answer["seats"][0]["paid"]["ante"] == "-100.00" and answer["seats"][1]["paid"] is None
    assert answer["findings"] == [{
        "id": 7, "code": "payout_mismatch", "seat": 1, "bet": "blind", "expected": "500.00",
        "claimed": "50.00", "detail": "Blind paid 50, settles 500", "informational": False, "state": "open",
    }]
    assert answer["progressive"] is None
    assert answer["dealt_at"] == "2026-11-29T21:14:03+01:00"  # the service's time zone
    reversed_ = round_data(round_, seats=seats[::-1], findings=[], meter_events=[])
    assert [s["seat"] for s in reversed_["seats"]] == [2, 1]


@pytest.mark.django_db
def test_rows_left_out_are_read_from_the_round(table_client, django_assert_num_queries):
    client = table_client("S01", "se-50kr")
    data = record(seats=record()["seats"] + [dict(record()["seats"][0], seat=5, hole=["8c", "3d"],
                                                  paid={"ante": "-90"})])
    answer = client.post(ROUNDS, data, format="json").json()
    stored = round_detail(round_pk=answer["id"])
    assert round_data(stored) == answer
    assert round_data(stored, findings=[]) == dict(answer, findings=[])
    seats = list(stored.seats.all())
    assert round_data(stored, seats=seats[:1])["seats"] == answer["seats"][:1]
    # Not prefetched: each list is read with its own query.
    plain = Round.objects.get(pk=answer["id"])
    # The table, the version and its configuration; the seats and the findings (no pool: no events).
    with django_assert_num_queries(3 + 2):
        assert round_data(plain) == answer


# ---- the contract's limits on amounts ---------------------------------------------------------


# The 500:1 Blind on a 2,000,000,050 wager, which a royal flush wins; the dealer has a pair.
ROYAL = {"board": ["Ah", "Kh", "Qh", "Jh", "2c"], "dealer_cards": ["2d", "7s"],
         "seats": [{"seat": 1, "hole": ["Th", "3d"], "ante": "2000000050", "blind": "2000000050",
                    "decision": "preflop_4x", "play": "8000000200",
                    "paid": {"ante": "2000000050", "blind": "1000000025000", "play": "8000000200"}}]}


def royal(**paid) -> dict:
    data = record("R-royal", **copy.deepcopy(ROYAL))
    data["seats"][0]["paid"].update(paid)
    return data


def test_a_paid_amount_of_15_digits_is_read_fast_and_by_the_serializer():
    fast = record_fast(royal())
    assert fast is not None and fast["seats"][0]["paid"]["blind"] == "1000000025000.00"
    serializer = RoundRecordSerializer(data=royal(blind=-999999999999999))
    assert serializer.is_valid(), serializer.errors
    assert serializer.validated_data["seats"][0]["paid"]["blind"] == "-999999999999999.00"


@pytest.mark.parametrize("where, value, message", [
    (("ante",), "1234567890123", "At most 12 digits before the decimal point; '1234567890123' has 13."),
    (("trips",), 10**12, "At most 12 digits before the decimal point; 1000000000000 has 13."),
    (("paid", "blind"), "-1000000000000000", "At most 15 digits before the decimal point; "
                                             "'-1000000000000000' has 16."),
    (("paid", "play"), "1000000000000000.5", "At most 15 digits before the decimal point; "
                                             "'1000000000000000.5' has 16."),
    (("blind",), "100.005", "'100.005' is not an amount: digits with at most 2 decimals."),
    (("ante",), "-5", "An amount here cannot be negative."),
])
def test_an_amount_past_its_limits_is_a_400_naming_the_field_and_the_limit(
        table_client, where, value, message):
    client = table_client("S01", "se-50kr")
    data = record()
    target = data["seats"][0]
    for name in where[:-1]:
        target = target[name]
    target[where[-1]] = value
    response = client.post(ROUNDS, data, format="json")
    assert response.status_code == 400, response.json()
    errors = response.json()["errors"]["seats"]["0"]
    for name in where:
        errors = errors[name]
    assert errors == [message]
    assert record_fast(data) is None


@pytest.mark.skipif(
    Seat._meta.get_field("paid_blind").max_digits < contract.ANSWER_MONEY_DIGITS,
    reason="the stored money columns do not hold the contract's amounts yet (infra.models.MONEY)",
)
def test_the_500_to_1_blind_on_the_largest_kind_of_wager_is_stored_and_answered_exactly(table_client):
    client = table_client("S01", "se-50kr")
    response = client.post(ROUNDS, royal(), format="json")
    assert response.status_code == 201, response.json()
    seat = response.json()["seats"][0]
    assert seat["hand"] == "royal_flush"
    assert seat["settled"]["blind"] == seat["paid"]["blind"] == "1000000025000.00"
    answer_money = re.compile(r"^-?\d{0,18}(?:\.\d{0,2})?$")
    assert all(answer_money.match(v) for v in seat["settled"].values())
    assert "payout_mismatch" not in {f["code"] for f in response.json()["findings"]}


def test_the_answer_declares_amounts_as_wide_as_the_stored_columns():
    assert contract.ANSWER_MONEY_DIGITS >= MONEY["max_digits"]
    for shape in (contract.SEAT, contract.BET_AMOUNTS, contract.FINDING, contract.ROUND_METER_EVENT,
                  contract.ROUND_PROGRESSIVE):
        for field in shape.fields:
            if isinstance(field, Money):
                assert field.max_digits == contract.ANSWER_MONEY_DIGITS, (shape.name, field.name)
