"""The admin shows pools, ledgers, versions and readings, and changes meters only through services."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import localize

from progressive.models import MeterEvent, MeterReading, Pool, PoolVersion
from progressive.services import reading_record
from tests import examples
from tests.progressive.records import ROUNDS
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(django_user_model, db, table_client):
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:2]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    reading_record(pool=Pool.objects.get(code="us-progressive"), displayed="1.00",
                   reported_at=timezone.now(), reporter=SYSTEM)
    boss = django_user_model.objects.create_superuser("boss", password="a-long-test-password")
    browser = Client()
    browser.force_login(boss)
    return browser


def test_the_pool_page_shows_its_meters_versions_and_last_events_with_round_links(admin_client_):
    pool = Pool.objects.get(code="us-progressive")
    listing = admin_client_.get(reverse("admin:progressive_pool_changelist"))
    assert listing.status_code == 200
    assert localize(pool.meter) in listing.content.decode()  # as the admin writes it: "8,101.62"

    page = admin_client_.get(reverse("admin:progressive_pool_change", args=[pool.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "Last 20 ledger events" in text and "v1 from 2000-01-01" in text
    round_pk = MeterEvent.objects.filter(pool=pool, round__isnull=False).first().round_id
    assert reverse("admin:rounds_round_change", args=[round_pk]) in text


def test_ledger_versions_and_readings_are_listed_and_never_editable(admin_client_):
    event = MeterEvent.objects.filter(round__isnull=False).first()
    for name, obj in (("meterevent", event), ("poolversion", PoolVersion.objects.first()),
                      ("meterreading", MeterReading.objects.first())):
        assert admin_client_.get(reverse(f"admin:progressive_{name}_changelist")).status_code == 200
        detail = admin_client_.get(reverse(f"admin:progressive_{name}_change", args=[obj.pk]))
        assert detail.status_code == 200
        assert 'name="_save"' not in detail.content.decode(), name
        assert admin_client_.get(reverse(f"admin:progressive_{name}_add")).status_code == 403
    ledger = admin_client_.get(reverse("admin:progressive_meterevent_changelist")).content.decode()
    assert reverse("admin:rounds_round_change", args=[event.round_id]) in ledger


def test_an_adjustment_from_the_admin_needs_a_reason_and_lands_in_the_ledger(admin_client_):
    pool = Pool.objects.get(code="us-progressive")
    url = reverse("admin:progressive_pool_adjust", args=[pool.pk])
    assert admin_client_.get(url).status_code == 200
    refused = admin_client_.post(url, {"delta": "-99999999.00", "reason": "too much"})
    assert refused.status_code == 200 and "below zero" in refused.content.decode()
    assert admin_client_.post(url, {"delta": "5.00", "reason": ""}).status_code == 200
    assert not MeterEvent.objects.filter(kind="adjustment").exists()

    done = admin_client_.post(url, {"delta": "5.00", "reason": "display reset"})
    assert done.status_code == 302
    event = MeterEvent.objects.get(kind="adjustment")
    assert (event.delta, event.reason, event.actor_name) == (Decimal("5.00"), "display reset", "boss")


def test_saving_a_pool_changes_its_name_only(admin_client_):
    pool = Pool.objects.get(code="us-progressive")
    url = reverse("admin:progressive_pool_change", args=[pool.pk])
    response = admin_client_.post(url, {
        "name": "Renamed link", "meter": "1.00",
        "versions-TOTAL_FORMS": "0", "versions-INITIAL_FORMS": "1", "versions-MIN_NUM_FORMS": "0", "versions-MAX_NUM_FORMS": "1000",
        "events-TOTAL_FORMS": "0", "events-INITIAL_FORMS": "0", "events-MIN_NUM_FORMS": "0", "events-MAX_NUM_FORMS": "1000",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    after = Pool.objects.get(pk=pool.pk)
    assert (after.name, after.meter) == ("Renamed link", pool.meter)


def test_a_pool_added_in_the_admin_goes_through_the_service(admin_client_):
    url = reverse("admin:progressive_pool_add")
    form = {
        "code": "se-link", "name": "SE link", "currency": "SEK", "minor_unit": "0.01",
        "wager": "50.00", "rate": "0.15", "reseed": "100000.00", "ceiling": "", "reserve_rate": "0",
        "reading_tolerance": "0", "note": "",
        "lines": json.dumps([{"category": "royal_flush", "qualifier": "hole", "kind": "percent", "amount": "101"}]),
    }
    refused = admin_client_.post(url, form)
    assert refused.status_code == 200 and "cannot exceed 100" in refused.content.decode()
    assert not Pool.objects.filter(code="se-link").exists()

    form["lines"] = json.dumps([{"category": "royal_flush", "qualifier": "hole", "kind": "percent", "amount": "100"}])
    assert admin_client_.post(url, form).status_code == 302
    pool = Pool.objects.get(code="se-link")
    assert (pool.meter, pool.last_event_seq, pool.versions.get().rate) == (Decimal("100000.00"), 1, Decimal("0.15"))
