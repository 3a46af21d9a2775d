"""The hot path's shortcuts give exactly what the slow, obvious code gives.

- ``record_fast`` against ``RoundRecordSerializer``: the same canonical record
  for every plainly well-formed body, and None (the serializer's turn) for
  anything else, valid or not.
- The answer (``round_data``, written from rows) against DRF rendering the
  very fields the schema is made of, one by one.
- The answer to a POST (built from the rows just written) against a GET of
  the stored round, for single posts and batches.
- The writes sent together (one string, JSON rows) against the same writes
  sent one by one as Django compiles them.
"""

from __future__ import annotations

import copy
import json
import random
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infra import sql
from rounds.models import Round, Submission, TableConfig
from rounds.selectors import config_version_in_force, pool_version_in_force, round_detail
from rounds.simulation import simulate_rounds
from rounds.wire import contract
from rounds.wire.serializers import RoundRecordSerializer, RoundSerializer, record_fast

from .records import BATCH, ROUNDS, record, us_record

START = datetime(2026, 11, 28, 18, 0, tzinfo=ZoneInfo("Europe/Stockholm"))
TROUBLED = {"dealer_error_rate": 0.2, "rule_break_rate": 0.1, "void_rate": 0.05}


def serializer_record(payload):
    serializer = RoundRecordSerializer(data=payload)
    return serializer.validated_data if serializer.is_valid() else None


# ---- record_fast ---------------------------------------------------------------------------


def test_a_plain_record_is_taken_as_the_serializer_takes_it():
    largest = record()
    largest["seats"][0].update(ante="999999999999.99", blind=10**12 - 1,
                               paid={"blind": "-999999999999999.99", "trips": 10**15 - 1})
    for payload in (record(), us_record(), us_record(seats=7), record(void=True, board=None), largest):
        assert record_fast(copy.deepcopy(payload)) == serializer_record(copy.deepcopy(payload))
        assert record_fast(payload) is not None


# Values that are valid somewhere, invalid elsewhere, or valid only to DRF's leniency.
ODD_VALUES = st.sampled_from([
    None, "", " ", "R-1 ", "R\x00", "R\n1", "R-1\n", "R\x85", "\u00e9t\u00e9", "\ud800", 7, 0, 8, -1, True, False, 1.5, "1.50",
    "100", "100.005", "-5", "1e3", [], ["Ah"], ["Ah", "Kd"], ["ah", "KD"], ["Ah", "Ah"], ["1x", "Kd"],
    {}, {"ante": "-5"}, {"ante": None}, {"bonus": "1"}, "fold", "preflop_4x", "FOLD", "true",
    "2026-11-29T21:14:03+01:00", "2026-11-29T21:14:03", "0001-01-01T00:00:00+00:00",
    ["2c", "7d", "9h", "Js", "4s"], "x" * 65, 2**70,
    # at, within and past the digits a wager (12) and a paid amount (15) may have
    "999999999999.99", "1000000000000", 10**12 - 1, 10**12, "-999999999999999.99", "1000000025000",
    -(10**15 - 1), 10**15, "0000000000000001", "1.", ".5", "+5", "\uff15",
])
ROUND_KEYS = st.sampled_from(
    ["table", "round", "dealt_at", "dealer", "void", "board", "dealer_cards", "seats", "extra"])
SEAT_KEYS = st.sampled_from(
    ["seat", "player", "hole", "ante", "blind", "trips", "progressive", "progressive_lit",
     "decision", "play", "paid", "extra"])
PAID_KEYS = st.sampled_from(["ante", "blind", "play", "trips", "progressive", "bonus"])


@st.composite
def mutated_records(draw):
    payload = draw(st.sampled_from([record(), us_record(seats=3), record(void=True)]))
    payload = copy.deepcopy(payload)
    for _ in range(draw(st.integers(0, 3))):
        where = draw(st.sampled_from(["round", "seat", "paid", "drop", "drop-seat"]))
        if where == "round":
            payload[draw(ROUND_KEYS)] = draw(ODD_VALUES)
        elif where == "drop":
            payload.pop(draw(ROUND_KEYS), None)
        elif isinstance(payload.get("seats"), list) and payload["seats"]:
            seat = payload["seats"][draw(st.integers(0, len(payload["seats"]) - 1))]
            if isinstance(seat, dict) and where == "seat":
                seat[draw(SEAT_KEYS)] = draw(ODD_VALUES)
            elif isinstance(seat, dict) and where == "paid" and isinstance(seat.get("paid"), dict):
                seat["paid"][draw(PAID_KEYS)] = draw(ODD_VALUES)
            elif isinstance(seat, dict):
                seat.pop(draw(SEAT_KEYS), None)
    return payload


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_records())
def test_record_fast_never_disagrees_with_the_serializer(payload):
    fast = record_fast(copy.deepcopy(payload))
    slow = serializer_record(copy.deepcopy(payload))
    if slow is None:
        assert fast is None, "the shortcut took a body the serializer refuses"
    elif fast is not None:
        assert fast == slow


def test_record_fast_takes_the_simulators_rounds_as_the_serializer(db):
    for config in ("se-50kr", "us-30k"):
        for payload in dealt(config, count=150):
            fast = record_fast(json.loads(json.dumps(payload)))
            assert fast is not None
            assert fast == serializer_record(json.loads(json.dumps(payload)))


# ---- the answers ----------------------------------------------------------------------------


def dealt(config: str, count: int, seed: int = 3) -> list[dict]:
    version = config_version_in_force(config=TableConfig.objects.get(name=config), at=START)
    pool = pool_version_in_force(pool=version.pool, at=START).rules() if version.pool else None
    table = "U01" if version.pool else "S01"
    return list(simulate_rounds(table=table, rules=version.rules(), pool=pool, rng=random.Random(seed),
                                start=START, count=count, **TROUBLED))


def generic(round_: Round) -> dict:
    """What DRF makes of the declared fields (those the schema shows), without the writer."""
    return contract.ROUND.serializer(generic=True)(round_).data


@pytest.mark.django_db
@pytest.mark.parametrize("config", ["se-50kr", "us-30k"])
def test_each_answer_is_the_stored_round_as_a_get_shows_it(table_client, auditor_client, config):
    client = table_client("U01" if config == "us-30k" else "S01", config)
    records = dealt(config, count=40)
    answers = [client.post(ROUNDS, r, format="json") for r in records[:25]]
    batch = client.post(BATCH, {"rounds": records[25:]}, format="json").json()["results"]
    answers = [a.json() for a in answers if a.status_code == 201]
    answers += [item["body"] for item in batch if item["status"] == 201]
    assert len(answers) > 30
    for answer in answers:
        shown = auditor_client.get(f"{ROUNDS}{answer['id']}/").json()
        assert answer == shown
    statuses = {a["status"] for a in answers}
    assert {"verified", "flagged"} <= statuses, statuses
    assert any(a["findings"] for a in answers)
    if config == "us-30k":
        assert all(a["progressive"]["events"] for a in answers if not a["void"])
    for stored in Round.objects.all():
        detail = round_detail(round_pk=stored.pk)
        assert RoundSerializer(detail).data == generic(detail)


@pytest.mark.django_db
def test_writes_sent_one_by_one_as_django_compiles_them_store_the_same(table_client, monkeypatch):
    records = dealt("us-30k", count=12)
    stored = []
    for together in (True, False):
        if not together:
            monkeypatch.setattr(sql, "_can_send_several", lambda connection, cursor: False)
            monkeypatch.setattr(sql, "JSON_ROWS", False)
        code = "U01" if together else "U02"
        client = table_client(code, "us-30k")
        mine = [dict(r, table=code) for r in records]
        answers = [client.post(ROUNDS, r, format="json").json() for r in mine[:6]]
        answers += [i["body"] for i in client.post(BATCH, {"rounds": mine[6:]}, format="json").json()["results"]]
        stored.append([_comparable(a) for a in answers])
    assert stored[0] == stored[1]
    assert Submission.objects.filter(outcome="accepted").count() == 24


def _comparable(answer: dict) -> dict:
    """An answer without what differs between two tables posting the same rounds."""
    answer = dict(answer)
    for key in ("id", "table", "received_at"):
        answer.pop(key)
    answer["findings"] = [dict(f, id=None) for f in answer["findings"]]
    if answer["progressive"]:
        # The second table's rounds move the meter on from where the first left it.
        answer["progressive"] = {k: v for k, v in answer["progressive"].items() if k == "pool"}
    return answer
