"""The admin's side of dual control: a large adjustment is asked for on the pool's page and
approved or rejected on the request's page, by a second supervisor."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client

from progressive.models import MeterAdjustmentRequest, Pool
from tests.security.people import person

pytestmark = pytest.mark.django_db
POOL = "us-progressive"


@pytest.fixture(autouse=True)
def _amounts(settings):
    settings.METER_SECOND_APPROVAL_ABOVE = {"USD": Decimal("10000")}


def _signed_in(username: str) -> Client:
    client = Client()
    client.force_login(person("supervisor", username))
    return client


def _adjust(client: Client, delta: str):
    pool = Pool.objects.get(code=POOL)
    return client.post(f"/admin/progressive/pool/{pool.pk}/adjust/", {"delta": delta, "reason": "count sheet 7"})


def test_the_adjust_page_says_how_much_one_supervisor_may_move_alone():
    pool = Pool.objects.get(code=POOL)
    page = _signed_in("asker").get(f"/admin/progressive/pool/{pool.pk}/adjust/")
    assert "larger than 10,000 USD" in page.content.decode()  # the admin groups thousands


def test_a_large_adjustment_waits_on_its_page_and_a_second_supervisor_approves_it():
    before = Pool.objects.get(code=POOL).meter
    asker = _signed_in("asker")
    answer = _adjust(asker, "15000.00")
    asked = MeterAdjustmentRequest.objects.get()
    assert answer.status_code == 302 and answer["Location"].endswith(f"/meteradjustmentrequest/{asked.pk}/change/")
    assert Pool.objects.get(code=POOL).meter == before
    own_page = asker.get(answer["Location"]).content.decode()
    assert "another supervisor approves it" in own_page and 'value="approve"' not in own_page

    second = _signed_in("second")
    page = second.get(answer["Location"]).content.decode()
    assert 'value="approve"' in page
    decided = second.post(f"/admin/progressive/meteradjustmentrequest/{asked.pk}/decide/", {"decision": "approve"})
    assert decided.status_code == 302
    asked.refresh_from_db()
    assert asked.state == "approved" and asked.decided_by_name == "second"
    assert Pool.objects.get(code=POOL).meter == before + Decimal("15000.00")


def test_the_asker_cannot_approve_by_a_crafted_post_but_may_withdraw():
    asker = _signed_in("asker")
    _adjust(asker, "15000.00")
    asked = MeterAdjustmentRequest.objects.get()
    decide = f"/admin/progressive/meteradjustmentrequest/{asked.pk}/decide/"
    followed = asker.post(decide, {"decision": "approve"}, follow=True).content.decode()
    assert "another supervisor approves it" in followed
    asked.refresh_from_db()
    assert asked.state == "pending"
    asker.post(decide, {"decision": "reject", "note": "wrong pool"})
    asked.refresh_from_db()
    assert (asked.state, asked.decision_note) == ("rejected", "wrong pool")


def test_an_auditor_sees_the_request_but_cannot_decide_it():
    _adjust(_signed_in("asker"), "15000.00")
    asked = MeterAdjustmentRequest.objects.get()
    auditor = Client()
    auditor.force_login(person("auditor", "reader"))
    page = auditor.get(f"/admin/progressive/meteradjustmentrequest/{asked.pk}/change/")
    assert page.status_code == 200 and 'id="decision"' not in page.content.decode()
    refused = auditor.post(f"/admin/progressive/meteradjustmentrequest/{asked.pk}/decide/", {"decision": "approve"})
    assert refused.status_code == 403
    asked.refresh_from_db()
    assert asked.state == "pending"
