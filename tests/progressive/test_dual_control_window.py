"""Dual control cannot be split: what one person moves alone on a pool over the window counts
toward the second-approval amount (issue 27, item 7).

The attack: twelve adjustments of 10,000 USD by one supervisor, each at the
amount one may move alone, moved the meter 120,000 with no second person.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.utils import timezone

from progressive import services
from progressive.models import MeterAdjustmentRequest, MeterEvent, Pool
from progressive.services import adjustment_approve, meter_adjust, moved_alone
from tests.security.people import person, person_client
from trail.models import AuditEvent
from trail.services import SYSTEM, Actor

pytestmark = pytest.mark.django_db

POOL = "us-progressive"
ABOVE = Decimal("10000")


@pytest.fixture(autouse=True)
def _amounts(settings):
    settings.METER_SECOND_APPROVAL_ABOVE = {"USD": ABOVE}
    settings.METER_SECOND_APPROVAL_WINDOW_HOURS = 24


def _pool() -> Pool:
    return Pool.objects.get(code=POOL)


def _adjust(user, delta: str):
    return meter_adjust(pool=_pool(), delta=Decimal(delta), actor=Actor.of_user(user), reason="count")


def test_twelve_adjustments_of_the_amount_move_the_meter_once_alone():
    supervisor = person("supervisor", "splitter")
    before = _pool().meter
    done = [_adjust(supervisor, "10000.00") for _ in range(12)]
    assert isinstance(done[0], MeterEvent)
    assert all(isinstance(item, MeterAdjustmentRequest) for item in done[1:])
    assert _pool().meter == before + ABOVE
    asked = AuditEvent.objects.filter(action="meter.adjustment_requested").order_by("seq").first()
    assert asked.after["moved_alone"] == "10000.00" and asked.after["window_hours"] == 24


def test_an_increase_and_a_decrease_both_count_by_their_size():
    supervisor = person("supervisor", "see-saw")
    for _ in range(2):
        meter_adjust(pool=_pool(), delta=ABOVE, actor=SYSTEM, reason="room to take from")
    assert isinstance(_adjust(supervisor, "6000.00"), MeterEvent)
    assert isinstance(_adjust(supervisor, "-6000.00"), MeterAdjustmentRequest)
    assert moved_alone(pool=_pool(), actor=Actor.of_user(supervisor)) == Decimal("6000.00")


def test_another_persons_and_a_second_persons_adjustments_do_not_count():
    first, other = person("supervisor", "first"), person("supervisor", "other")
    asked = _adjust(first, "15000.00")
    adjustment_approve(asked=asked, actor=Actor.of_user(other))  # approved: the event is other's, not alone
    assert moved_alone(pool=_pool(), actor=Actor.of_user(first)) == 0
    assert moved_alone(pool=_pool(), actor=Actor.of_user(other)) == 0
    assert isinstance(_adjust(first, "10000.00"), MeterEvent)
    assert isinstance(_adjust(other, "10000.00"), MeterEvent)
    assert isinstance(_adjust(first, "0.01"), MeterAdjustmentRequest)


def test_adjustments_older_than_the_window_no_longer_count(monkeypatch):
    supervisor = person("supervisor", "patient")
    assert isinstance(_adjust(supervisor, "10000.00"), MeterEvent)
    later = timezone.now() + timedelta(hours=25)
    monkeypatch.setattr(services, "timezone", SimpleNamespace(now=lambda: later))
    assert isinstance(_adjust(supervisor, "10000.00"), MeterEvent)


def test_over_the_api_the_second_small_adjustment_waits():
    client = person_client("supervisor", "splitter")
    before = _pool().meter
    answers = [client.post(f"/api/v1/pools/{POOL}/adjustments", {"delta": "10000.00", "reason": "count"},
                           format="json") for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 202, 202]
    assert _pool().meter == before + ABOVE
    assert MeterAdjustmentRequest.objects.filter(state="pending").count() == 2
