"""Properties of the intake over generated records, and of the checks the machine relies on.

Every kind of broken field (records.BREAKS) is tried on generated rounds of
both configurations: a 400 naming the field, the body kept as rejected, and
nothing stored. Valid rounds are stored once, settled as the engine settles
them. And the invariant checks themselves catch a books that does not add up,
so that the stateful test passing means something.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from progressive.models import MeterEvent, Pool
from rounds.models import Round, Seat, Submission
from rounds.services import record_hash
from tests.insider import meter_triggers_off

from . import invariants
from .records import BREAKS, SE_50KR, US_30K, almost_valid, round_records

pytestmark = pytest.mark.django_db
ROUNDS = "/api/v1/rounds/"
property_settings = settings(
    max_examples=6, deadline=None, database=None, derandomize=True,
    suppress_health_check=list(HealthCheck),
)


def records(table: str, limits, round_id: str = "P-1"):
    return round_records(table=table, round_id=round_id, dealt_at="2026-11-29T21:14:03+01:00", limits=limits)


@pytest.mark.parametrize("index", range(len(BREAKS)), ids=[b[0] for b in BREAKS])
def test_a_record_with_one_field_broken_is_a_400_naming_it_and_nothing_is_stored(table_client, index):
    clients = {"U01": table_client("U01", "us-30k"), "S01": table_client("S01", "se-50kr")}

    @property_settings
    @given(table=st.sampled_from(["U01", "S01"]), data=st.data())
    def check(table, data):
        base = records(table, US_30K if table == "U01" else SE_50KR)
        record, what, field = data.draw(almost_valid(base, breaks=[BREAKS[index]]))
        kept = Submission.objects.filter(outcome="rejected").count()
        response = clients[table].post(ROUNDS, record, format="json")
        assert response.status_code == 400, (what, response.json())
        assert field in response.json()["errors"], (what, response.json())
        assert not Round.objects.exists()
        assert Submission.objects.filter(outcome="rejected").count() == kept + 1

    check()


def test_generated_rounds_are_stored_once_as_the_engine_settles_them(table_client):
    clients = {"U01": table_client("U01", "us-30k"), "S01": table_client("S01", "se-50kr")}
    accepted: dict = {}

    @settings(max_examples=30, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(table=st.sampled_from(["U01", "S01"]), data=st.data())
    def check(table, data):
        round_id = f"P-{len(accepted) + 1}"
        record = data.draw(records(table, US_30K if table == "U01" else SE_50KR, round_id))
        response = clients[table].post(ROUNDS, record, format="json")
        assert response.status_code == 201, response.json()
        accepted[(table, round_id)] = None
        again = clients[table].post(ROUNDS, record, format="json")
        assert again.status_code == 200 and again.json() == response.json()

    check()
    assert invariants.rounds_stored_once(accepted) == []
    assert invariants.meters_are_their_ledgers() == []
    assert invariants.results_are_the_engine_verdict() == []


# ---- the checks catch what they are there to catch ----------------------------


@pytest.fixture
def played(table_client):
    from tests import examples

    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:4]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    assert invariants.results_are_the_engine_verdict() == []
    assert invariants.meters_are_their_ledgers() == []
    return client


def test_a_seat_settled_other_than_the_engine_says_is_caught(played):
    seat = Seat.objects.filter(round__pool_version__isnull=False).order_by("pk").first()
    Seat.objects.filter(pk=seat.pk).update(settled_ante=seat.settled_ante + Decimal("1.00"))
    problems = invariants.results_are_the_engine_verdict()
    assert len(problems) == 1 and "the engine settles" in problems[0]


def test_a_meter_moved_without_its_ledger_is_caught(played):
    with meter_triggers_off():  # the database refuses it otherwise (tests/progressive/test_meter_trigger.py)
        Pool.objects.filter(code="us-progressive").update(meter=Pool.objects.get(code="us-progressive").meter + 1)
    assert any("not the sum of its events" in p or "its events add up" in p
               for p in invariants.meters_are_their_ledgers())


def test_a_round_stored_twice_or_not_at_all_is_caught(played):
    stored = {(t, r): h for t, r, h in Round.objects.values_list("table__code", "round_id", "record_hash")}
    assert invariants.rounds_stored_once(stored) == []
    missing = {**stored, ("U01", "never-posted"): None}
    assert invariants.rounds_stored_once(missing) == ["('U01', 'never-posted') accepted but not stored"]
    fewer = dict(list(stored.items())[1:])
    assert len(invariants.rounds_stored_once(fewer)) == 1
    changed = {key: record_hash({"other": key}) for key in stored}
    assert len(invariants.rounds_stored_once(changed)) == len(stored)


def test_a_round_whose_meter_events_differ_from_the_engine_is_caught(played):
    # The ledger refuses edits (append-only trigger), so compare against a round that claims another meter.
    round_ = Round.objects.filter(meter_events__kind=MeterEvent.Kind.CONTRIBUTION).order_by("pk").last()
    with meter_triggers_off():  # a round's columns are the database's to protect (audit migration 0010)
        Round.objects.filter(pk=round_.pk).update(meter_before=round_.meter_before + 1)
    assert any("meter_before" in p for p in invariants.results_are_the_engine_verdict())
