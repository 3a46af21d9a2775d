"""A person the asker created or gave a role lately cannot be the second person (issue 27, item 8).

The attack: an admin created a user, made it a supervisor and, signed in as
it, approved the admin's own 90,000 adjustment: the meter moved.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils import timezone
from rest_framework.test import APIClient

from casino.services import user_roles_set
from progressive.models import MeterAdjustmentRequest, Pool
from progressive.services import ApprovalError, adjustment_approve, meter_adjust
from tests.security.people import person
from trail import approvals
from trail.services import Actor

pytestmark = pytest.mark.django_db

POOL = "us-progressive"


@pytest.fixture(autouse=True)
def _amounts(settings):
    settings.METER_SECOND_APPROVAL_ABOVE = {"USD": Decimal("10000")}
    settings.APPROVER_INDEPENDENCE_DAYS = 30


def _pool() -> Pool:
    return Pool.objects.get(code=POOL)


def _ask(user) -> MeterAdjustmentRequest:
    asked = meter_adjust(pool=_pool(), delta=Decimal("90000"), actor=Actor.of_user(user), reason="count")
    assert isinstance(asked, MeterAdjustmentRequest)
    return asked


def test_a_supervisor_the_asker_made_cannot_approve():
    boss = person("admin", "boss")
    puppet = person(None, "puppet")
    user_roles_set(user=puppet, roles=["supervisor"], actor=Actor.of_user(boss))
    asked = _ask(boss)
    before = _pool().meter
    with pytest.raises(ApprovalError) as refused:
        adjustment_approve(asked=asked, actor=Actor.of_user(puppet))
    assert refused.value.code == "not_independent" and refused.value.conflict
    assert list(refused.value.errors) == ["approver"]
    assert "independent of the asker" in str(refused.value)
    assert _pool().meter == before
    asked.refresh_from_db()
    assert asked.state == "pending"
    # Someone the asker never touched approves it.
    approved = adjustment_approve(asked=asked, actor=Actor.of_user(person("supervisor", "independent")))
    assert approved.state == "approved" and _pool().meter == before + Decimal("90000")


def test_the_tie_lapses_after_the_independence_window(monkeypatch):
    boss = person("admin", "boss")
    puppet = person(None, "puppet")
    user_roles_set(user=puppet, roles=["supervisor"], actor=Actor.of_user(boss))
    asked = _ask(boss)
    later = timezone.now() + timedelta(days=31)
    monkeypatch.setattr(approvals, "timezone", SimpleNamespace(now=lambda: later))
    assert approvals.approver_tie(approver_id=puppet.pk, requester_id=boss.pk) is None
    assert adjustment_approve(asked=asked, actor=Actor.of_user(puppet)).state == "approved"


def test_a_puppet_made_in_the_admins_user_pages_is_refused_over_the_api():
    boss = get_user_model().objects.create_superuser("boss", password="pw-for-tests-only")
    pages = APIClient()
    pages.force_login(boss)
    made = pages.post("/admin/auth/user/add/", {
        "username": "puppet", "password1": "a-long-test-password", "password2": "a-long-test-password",
        "usable_password": "true",
    })
    assert made.status_code == 302, made.content.decode()[:1500]
    puppet = get_user_model().objects.get(username="puppet")
    changed = pages.post(f"/admin/auth/user/{puppet.pk}/change/", {
        "username": "puppet", "is_active": "on", "is_staff": "on",
        "groups": [Group.objects.get(name="supervisor").pk],
        "date_joined_0": "2026-11-30", "date_joined_1": "10:00:00",
    })
    assert changed.status_code == 302, changed.content.decode()[:1500]

    asker = APIClient()
    asker.force_authenticate(boss)
    answer = asker.post(f"/api/v1/pools/{POOL}/adjustments", {"delta": "90000.00", "reason": "count"},
                        format="json")
    assert answer.status_code == 202
    before = _pool().meter
    approver = APIClient()
    approver.force_authenticate(puppet)
    refused = approver.post(f"/api/v1/adjustment-requests/{answer.json()['id']}/approve")
    assert refused.status_code == 409, refused.json()
    assert refused.json()["code"] == "not_independent" and "approver" in refused.json()["errors"]
    assert _pool().meter == before

    # And in the admin: the decision page says why, and the meter stays.
    puppet_pages = APIClient()
    puppet_pages.force_login(puppet)
    page = puppet_pages.post(f"/admin/progressive/meteradjustmentrequest/{answer.json()['id']}/decide/",
                             {"decision": "approve"}, follow=True)
    assert "independent of the asker" in page.content.decode()
    assert _pool().meter == before


def test_a_supervisor_whose_password_the_asker_set_cannot_approve(client):
    """The admin's "change password" page: the admin who set another supervisor's password
    holds that account, so its approval of the admin's request is no second person's."""
    boss = person("admin", "boss-pw")
    other = person("supervisor", "other-pw")
    client.force_login(boss)
    answer = client.post(f"/admin/auth/user/{other.pk}/password/",
                         {"password1": "a-new-long-password-9", "password2": "a-new-long-password-9"})
    assert answer.status_code == 302, answer.content[:300]
    asked = _ask(boss)
    with pytest.raises(ApprovalError) as refused:
        adjustment_approve(asked=asked, actor=Actor.of_user(other))
    assert refused.value.code == "not_independent"
