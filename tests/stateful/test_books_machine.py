"""A stateful test: tables post, resubmit and conflict, supervisors void and adjust.

Hypothesis drives a ``RuleBasedStateMachine`` through random sequences of
what happens on a casino floor, through the real API (tables) and the real
services (supervisors), and after every step checks the books:

- every accepted round is stored exactly once, with the body it was accepted with;
- every meter equals the sum of its ledger, which proves it row by row;
- no money is made or lost between the engine and the stored results: each
  stored round, judged again from its stored record, gives the stored seats'
  settlement and the round's own meter events (a voided round: all zero);
- a refused write (409, 400, a void or adjustment the rules refuse) changes
  nothing but the refusal's own trace.

Each run of the machine is one savepoint inside the test's transaction,
rolled back at its end, so runs never see each other's rounds.
``BOOKS_EXAMPLES`` and ``BOOKS_STEPS`` make it run longer.
"""

from __future__ import annotations

import copy
import itertools
import os
from collections import Counter
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import ClassVar

import pytest
from django.core.cache import cache
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)
from rest_framework.test import APIClient

from progressive.models import Pool
from progressive.reversal import ReversalError
from progressive.services import MeterError, meter_adjust
from rounds.models import Finding, Round, Submission
from rounds.services import VoidError, record_hash, round_void, table_register
from rounds.wire.serializers import RoundRecordSerializer
from tests.rollback import rolled_back_block
from tests.security.people import person
from trail.services import SYSTEM, Actor

from . import invariants
from .records import SE_50KR, US_30K, almost_valid, round_records

ROUNDS = "/api/v1/rounds/"
TABLES = {"ST1": ("us-30k", US_30K), "ST2": ("us-30k", US_30K), "ST3": ("se-50kr", SE_50KR)}
EXAMPLES = int(os.environ.get("BOOKS_EXAMPLES", "15"))
STEPS = int(os.environ.get("BOOKS_STEPS", "30"))
START = datetime(2026, 11, 29, 19, 0, tzinfo=timezone(timedelta(hours=1)))
# What the runs did, so the test can tell that every kind of step really happened.
SEEN: Counter = Counter()


def canonical_hash(record: dict) -> str:
    """The hash the service stores for ``record`` (the canonical form of its shape check)."""
    serializer = RoundRecordSerializer(data=copy.deepcopy(record))
    assert serializer.is_valid(), serializer.errors
    return record_hash(serializer.validated_data)


class Books(RuleBasedStateMachine):
    # Set by the test before the runs: tables' keys and the supervisor, outside every run's savepoint.
    keys: ClassVar[dict[str, str]] = {}
    supervisor: ClassVar[object] = None

    stored = Bundle("stored")

    def __init__(self):
        super().__init__()
        # Every run of the machine in its own savepoint, undone in teardown().
        self._run = rolled_back_block()
        self._run.__enter__()
        self.clients = {}
        for code, key in self.keys.items():
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
            self.clients[code] = client
        self.accepted: dict[tuple[str, str], str] = {}
        self.records: dict[tuple[str, str], dict] = {}
        self.clock = itertools.count()

    def teardown(self):
        transaction.set_rollback(True)
        self._run.__exit__(None, None, None)

    def post(self, table: str, record: dict):
        cache.clear()  # a table's throttle budget is not what is tested here
        return self.clients[table].post(ROUNDS, record, format="json")

    def next_time(self) -> str:
        return (START + timedelta(minutes=next(self.clock))).isoformat()

    # ---- what tables do ---------------------------------------------------------

    @initialize()
    def nothing_stored_yet(self):
        assert not Round.objects.filter(table__code__in=TABLES).exists()

    @rule(target=stored, table=st.sampled_from(sorted(TABLES)), count=st.integers(1, 3), data=st.data())
    def post_new_rounds(self, table, count, data):
        keys = []
        for _ in range(count):
            round_id = f"{table}-{len(self.accepted) + 1:04d}"
            record = data.draw(round_records(
                table=table, round_id=round_id, dealt_at=self.next_time(), limits=TABLES[table][1]
            ))
            response = self.post(table, record)
            assert response.status_code == 201, response.json()
            SEEN["round stored"] += 1
            kinds = {e["kind"] for e in (response.json()["progressive"] or {}).get("events", [])}
            SEEN.update(f"{kind} event" for kind in kinds)
            key = (table, round_id)
            self.accepted[key] = canonical_hash(record)
            self.records[key] = record
            keys.append(key)
        if data.draw(st.booleans()):
            # The table lost the last answer and posts the round again at once.
            self.resubmit_the_same_round(keys[-1])
        return multiple(*keys)

    @rule(key=stored)
    def resubmit_the_same_round(self, key):
        before = invariants.state_of_the_books()
        response = self.post(key[0], self.records[key])
        assert response.status_code == 200, response.json()
        assert invariants.state_of_the_books() == before
        SEEN["identical resubmission"] += 1

    @rule(key=stored, change=st.sampled_from(["dealer", "ante", "seat"]))
    def resubmit_a_different_round_under_the_same_id(self, key, change):
        record = copy.deepcopy(self.records[key])
        seat = record["seats"][0]
        if change == "dealer":
            record["dealer"] = "D-other"
        elif change == "ante":
            unit = TABLES[key[0]][1].unit
            seat["ante"] = seat["blind"] = str(int(seat["ante"]) + unit)
            seat.pop("paid", None)
            seat["play"] = "0"
            seat["decision"] = "fold"
        else:
            seat["seat"] = ({1, 2, 3, 4, 5, 6, 7} - {s["seat"] for s in record["seats"]} or {seat["seat"]}).pop()
        if canonical_hash(record) == self.accepted[key]:
            return  # the change happened to change nothing
        stored = Round.objects.get(table__code=key[0], round_id=key[1])
        seats = list(stored.seats.order_by("seat").values())
        conflicts = Finding.objects.filter(round=stored, code="conflicting_resubmission").count()

        response = self.post(key[0], record)

        assert response.status_code == 409, response.json()
        stored.refresh_from_db()
        assert stored.record_hash == self.accepted[key]
        assert list(stored.seats.order_by("seat").values()) == seats
        assert Finding.objects.filter(round=stored, code="conflicting_resubmission").count() == conflicts + 1
        assert Submission.objects.filter(round=stored, outcome="conflict").count() >= 1
        SEEN["conflict refused"] += 1

    @rule(table=st.sampled_from(sorted(TABLES)), data=st.data())
    def post_a_record_with_one_field_broken(self, table, data):
        records = round_records(table=table, round_id=f"{table}-broken", dealt_at=self.next_time(),
                                limits=TABLES[table][1])
        record, what, field = data.draw(almost_valid(records))
        before = invariants.state_of_the_books()
        kept = Submission.objects.filter(outcome="rejected").count()

        response = self.post(table, record)

        assert response.status_code == 400, (what, response.json())
        assert field in response.json()["errors"], (what, response.json())
        assert invariants.state_of_the_books() == before
        assert Submission.objects.filter(outcome="rejected").count() == kept + 1
        SEEN["broken record refused"] += 1

    # ---- what supervisors do ---------------------------------------------------------

    @rule(key=stored)
    def void_a_round(self, key):
        stored = Round.objects.get(table__code=key[0], round_id=key[1])
        before = invariants.state_of_the_books()
        try:
            round_void(round_pk=stored.pk, user=self.supervisor, reason="machine fault")
        except (VoidError, ReversalError):
            # Already void, or the meter cannot give back what the round took: nothing moves.
            assert invariants.state_of_the_books() == before
            SEEN["void refused"] += 1
        else:
            stored.refresh_from_db()
            assert stored.status == Round.Status.VOID and stored.voided_at is not None
            SEEN["round voided"] += 1

    @rule(
        pool=st.sampled_from(["us-progressive"]),
        delta=st.one_of(
            st.decimals(Decimal("-500.00"), Decimal("500.00"), places=2),
            st.just(Decimal("-1000000.00")),  # more than any meter holds: refused
        ),
    )
    def adjust_a_meter(self, pool, delta):
        before = invariants.state_of_the_books()
        try:
            meter_adjust(pool=Pool.objects.get(code=pool), delta=delta,
                         actor=Actor.of_user(self.supervisor), reason="stateful test")
        except MeterError:
            assert invariants.state_of_the_books() == before
            SEEN["adjustment refused"] += 1
        else:
            assert delta != 0
            SEEN["meter adjusted"] += 1

    # ---- the books, after every step ---------------------------------------------

    @invariant()
    def every_accepted_round_is_stored_once(self):
        assert invariants.rounds_stored_once(self.accepted) == []

    @invariant()
    def every_meter_is_the_sum_of_its_ledger(self):
        assert invariants.meters_are_their_ledgers() == []

    @invariant()
    def stored_results_are_what_the_engine_settles(self):
        assert invariants.results_are_the_engine_verdict() == []


@pytest.mark.django_db
def test_the_books_hold_whatever_tables_and_supervisors_do():
    Books.keys = {
        code: table_register(code=code, config_name=config, actor=SYSTEM).key
        for code, (config, _) in TABLES.items()
    }
    Books.supervisor = person("supervisor", "books-supervisor")
    run_state_machine_as_test(
        Books,
        settings=settings(
            max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
            derandomize=os.environ.get("BOOKS_RANDOM") != "1",
            suppress_health_check=list(HealthCheck),
        ),
    )
    print("books machine:", dict(sorted(SEEN.items())))
    expected = {
        "round stored", "identical resubmission", "conflict refused", "broken record refused",
        "round voided", "void refused", "meter adjusted", "adjustment refused",
        "contribution event", "award event", "reseed event",
    }
    assert expected <= set(SEEN), f"never happened: {sorted(expected - set(SEEN))}"
