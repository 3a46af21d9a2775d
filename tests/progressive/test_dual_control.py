"""Dual control of the meter: an adjustment above the configured amount moves the meter only
once a second supervisor approves it, and both people are in the audit log."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone

from progressive.models import MeterAdjustmentRequest, MeterEvent, Pool
from progressive.services import (
    ApprovalError,
    MeterError,
    adjustment_approve,
    adjustment_reject,
    meter_adjust,
)
from tests.insider import as_owner
from tests.security.people import person, person_client
from trail.models import AuditEvent
from trail.services import SYSTEM, Actor

POOL = "us-progressive"  # USD, shipped with a reseed of 10,000.00
ABOVE = Decimal("10000")


@pytest.fixture(autouse=True)
def _amounts(settings):
    settings.METER_SECOND_APPROVAL_ABOVE = {"USD": ABOVE, "SEK": Decimal("100000")}


def _pool() -> Pool:
    return Pool.objects.get(code=POOL)


def _asked(delta: str = "15000.00", asker=None) -> MeterAdjustmentRequest:
    asker = asker or person("supervisor", "asker")
    asked = meter_adjust(pool=_pool(), delta=Decimal(delta), actor=Actor.of_user(asker), reason="count error")
    assert isinstance(asked, MeterAdjustmentRequest)
    return asked


# ---- the service ------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_adjustment_up_to_the_amount_moves_the_meter_at_once():
    before = _pool().meter
    event = meter_adjust(pool=_pool(), delta=ABOVE, actor=Actor.of_user(person("supervisor")), reason="count")
    assert isinstance(event, MeterEvent) and _pool().meter == before + ABOVE
    assert not MeterAdjustmentRequest.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("delta", ["10000.01", "-10000.01"])
def test_an_adjustment_above_the_amount_waits_and_the_meter_stays(delta):
    for _ in range(2):  # a meter a large decrease can come out of, in steps one may take alone
        meter_adjust(pool=_pool(), delta=ABOVE, actor=SYSTEM, reason="room to take from")
    before = _pool()
    asked = _asked(delta)
    assert asked.state == "pending" and asked.delta == Decimal(delta) and asked.event is None
    assert (_pool().meter, _pool().last_event_seq) == (before.meter, before.last_event_seq)
    audit = AuditEvent.objects.get(action="meter.adjustment_requested")
    assert audit.actor_name == "asker" and audit.after["delta"] == delta


@pytest.mark.django_db
def test_a_currency_with_no_amount_needs_a_second_supervisor_for_every_adjustment(settings):
    settings.METER_SECOND_APPROVAL_ABOVE = {"SEK": Decimal("100000")}
    assert isinstance(_asked("0.01"), MeterAdjustmentRequest)


@pytest.mark.django_db
def test_only_a_person_asks_for_a_large_adjustment():
    with pytest.raises(MeterError, match="person"):
        meter_adjust(pool=_pool(), delta=Decimal("15000"), actor=SYSTEM, reason="count error")
    assert not MeterAdjustmentRequest.objects.exists()


@pytest.mark.django_db
def test_a_request_that_could_never_be_applied_is_refused_when_asked():
    with pytest.raises(MeterError, match="below zero"):
        _asked(str(-(_pool().meter + ABOVE)))


@pytest.mark.django_db
def test_the_asker_cannot_approve_their_own_request():
    asker = person("supervisor", "asker")
    asked = _asked(asker=asker)
    with pytest.raises(ApprovalError, match="another supervisor"):
        adjustment_approve(asked=asked, actor=Actor.of_user(asker))
    asked.refresh_from_db()
    assert asked.state == "pending" and not AuditEvent.objects.filter(action="meter.adjusted").exists()


@pytest.mark.django_db
def test_a_second_supervisor_approves_and_the_meter_moves_through_its_ledger():
    asked = _asked("15000.00")
    before = _pool().meter
    approved = adjustment_approve(asked=asked, actor=Actor.of_user(person("supervisor", "second")))
    pool = _pool()
    assert pool.meter == before + Decimal("15000.00")
    assert approved.state == "approved" and approved.decided_by_name == "second"
    event = approved.event
    assert (event.kind, event.delta, event.seq, event.actor_name) == (
        "adjustment", Decimal("15000.00"), pool.last_event_seq, "second")
    adjusted = AuditEvent.objects.get(action="meter.adjusted")
    assert adjusted.after["requested_by"] == "asker" and adjusted.after["approved_by"] == "second"
    approval = AuditEvent.objects.get(action="meter.adjustment_approved")
    assert approval.actor_name == "second" and approval.after["requested_by"] == "asker"


@pytest.mark.django_db
def test_a_request_is_decided_once():
    asked = _asked()
    adjustment_reject(asked=asked, actor=Actor.of_user(person("supervisor", "second")), note="no evidence")
    with pytest.raises(ApprovalError, match="rejected") as refused:
        adjustment_approve(asked=asked, actor=Actor.of_user(person("supervisor", "third")))
    assert refused.value.conflict


@pytest.mark.django_db
def test_a_rejection_leaves_the_meter_and_needs_a_note():
    asker = person("supervisor", "asker")
    asked = _asked(asker=asker)
    before = _pool().meter
    with pytest.raises(MeterError, match="note"):
        adjustment_reject(asked=asked, actor=Actor.of_user(asker), note="  ")
    withdrawn = adjustment_reject(asked=asked, actor=Actor.of_user(asker), note="typed one zero too many")
    assert withdrawn.state == "rejected" and withdrawn.event is None and _pool().meter == before
    assert AuditEvent.objects.get(action="meter.adjustment_rejected").after["note"] == "typed one zero too many"


@pytest.mark.django_db
def test_the_approval_checks_the_meter_again_at_its_moment():
    meter_adjust(pool=_pool(), delta=Decimal("5000.00"), actor=SYSTEM, reason="a meter above the amount")
    asked = _asked(str(-_pool().meter))  # the whole meter, allowed when asked
    meter_adjust(pool=_pool(), delta=Decimal("-1.00"), actor=SYSTEM, reason="a smaller correction first")
    with pytest.raises(MeterError, match="below zero"):
        adjustment_approve(asked=asked, actor=Actor.of_user(person("supervisor", "second")))
    asked.refresh_from_db()
    assert asked.state == "pending"


# ---- the database -----------------------------------------------------------------------


@pytest.mark.django_db
def test_the_database_refuses_an_approval_by_the_asker():
    asked = _asked()
    with pytest.raises(IntegrityError), transaction.atomic():
        MeterAdjustmentRequest.objects.filter(pk=asked.pk).update(
            state="approved", decided_by_id=asked.requested_by_id, decided_at=timezone.now(),
            event=MeterEvent.objects.filter(pool=asked.pool).last())


@pytest.mark.django_db
@pytest.mark.parametrize("change", [{"delta": Decimal("99999.00")}, {"reason": "something else"},
                                    {"requested_by_name": "someone else"}])
def test_the_database_refuses_a_change_to_what_was_asked(change):
    asked = _asked()
    with pytest.raises(DatabaseError, match="refused"), transaction.atomic():
        MeterAdjustmentRequest.objects.filter(pk=asked.pk).update(**change)


@pytest.mark.django_db
def test_the_database_refuses_a_second_decision_and_a_delete():
    asked = _asked()
    adjustment_reject(asked=asked, actor=Actor.of_user(person("supervisor", "second")), note="no")
    with pytest.raises(DatabaseError, match="never changed"), transaction.atomic():
        MeterAdjustmentRequest.objects.filter(pk=asked.pk).update(decision_note="changed my mind")
    with pytest.raises(DatabaseError, match="DELETE"), transaction.atomic():
        MeterAdjustmentRequest.objects.filter(pk=asked.pk).delete()
    with pytest.raises(DatabaseError, match="refused"), transaction.atomic(), as_owner(), \
            connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's own writes, checked first
        cursor.execute("TRUNCATE progressive_meteradjustmentrequest CASCADE")


@pytest.mark.django_db(transaction=True)
def test_two_supervisors_approving_at_once_move_the_meter_once():
    asked = _asked("15000.00")
    before = _pool()
    approvers = [person("supervisor", f"approver-{n}") for n in range(2)]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def approve(user):
        try:
            barrier.wait(timeout=10)
            adjustment_approve(asked=asked, actor=Actor.of_user(user))
            outcomes.append("approved")
        except ApprovalError as exc:
            outcomes.append("conflict" if exc.conflict else f"refused: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=approve, args=(user,)) for user in approvers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["approved", "conflict"]
    pool = _pool()
    assert pool.meter == before.meter + Decimal("15000.00")
    assert pool.last_event_seq == before.last_event_seq + 1


# ---- the API ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_over_the_api_a_large_adjustment_is_202_and_a_second_supervisor_approves_it():
    asker, second = person_client("supervisor", "asker"), person_client("supervisor", "second")
    before = _pool().meter
    answer = asker.post(f"/api/v1/pools/{POOL}/adjustments", {"delta": "15000.00", "reason": "count"},
                        format="json")
    assert answer.status_code == 202, answer.json()
    asked = answer.json()
    assert (asked["state"], asked["requested_by"], asked["event"]) == ("pending", "asker", None)
    queue = second.get("/api/v1/adjustment-requests/?state=pending").json()["results"]
    assert [item["id"] for item in queue] == [asked["id"]]

    own = asker.post(f"/api/v1/adjustment-requests/{asked['id']}/approve")
    assert own.status_code == 403 and own.json()["code"] == "permission_denied"
    approved = second.post(f"/api/v1/adjustment-requests/{asked['id']}/approve")
    assert approved.status_code == 200, approved.json()
    assert approved.json()["state"] == "approved" and approved.json()["event"]["delta"] == "15000.00"
    assert _pool().meter == before + Decimal("15000.00")
    again = second.post(f"/api/v1/adjustment-requests/{asked['id']}/approve")
    assert again.status_code == 409 and again.json()["code"] == "decided"


@pytest.mark.django_db
def test_over_the_api_a_rejection_needs_a_note_and_an_auditor_decides_nothing():
    asked = _asked()
    supervisor, auditor = person_client("supervisor", "second"), person_client("auditor", "reader")
    assert auditor.get(f"/api/v1/adjustment-requests/{asked.pk}").status_code == 200
    assert auditor.post(f"/api/v1/adjustment-requests/{asked.pk}/approve").status_code == 403
    missing = supervisor.post(f"/api/v1/adjustment-requests/{asked.pk}/reject", {}, format="json")
    assert missing.status_code == 400 and "note" in missing.json()["errors"]
    rejected = supervisor.post(f"/api/v1/adjustment-requests/{asked.pk}/reject", {"note": "no count sheet"},
                               format="json")
    assert rejected.status_code == 200 and rejected.json()["state"] == "rejected"
