"""What a table's post no longer pays for, and that nothing it guards was lost.

A web worker remembers a proven table key for a few seconds, and revocation
still works: ``api.authentication._ProvenKeys`` skips the key lookup for a key this
process proved within ``TABLE_KEY_CACHE_SECONDS``. A change made in this
process (a rotation, a deactivation through the admin or ``register_table``)
forgets every key at once: tests/api/test_round_ingest.py and
test_authentication.py show those ending at once. Here: a change made where
this process cannot see it (another worker, SQL) takes effect within the
cache's time, a key's own expiry is exact, and only the very key that was
proven is remembered. Then: the people's middleware standing aside for a
table's post (casino.middleware) with every header still there, and the
table's throttle keeping DRF's rule with a compact log (api.throttling).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from api import authentication
from rounds.models import Table, TableKey
from rounds.services import table_register
from tests.api.records import ROUNDS, record
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


@pytest.fixture
def clock(monkeypatch):
    """The cache's clock, moved by hand."""
    now = [1000.0]
    monkeypatch.setattr(authentication.time, "monotonic", lambda: now[0])
    return now


@pytest.fixture(autouse=True)
def _forget_keys():
    authentication._PROVEN.clear()
    yield
    authentication._PROVEN.clear()


def test_a_key_revoked_elsewhere_stops_within_the_cache_time(table_client, settings, clock):
    settings.TABLE_KEY_CACHE_SECONDS = 5
    client = table_client("S01", "se-50kr")
    assert client.post(ROUNDS, record("R-1"), format="json").status_code == 201

    # As another worker or an operator's SQL would: no signal reaches this process.
    TableKey.objects.filter(table__code="S01").update(expires_at=timezone.now() - timedelta(seconds=1))
    clock[0] += 4
    assert client.post(ROUNDS, record("R-2"), format="json").status_code == 201
    clock[0] += 1.5
    assert client.post(ROUNDS, record("R-3"), format="json").status_code == 401


def test_a_table_deactivated_elsewhere_stops_within_the_cache_time(table_client, settings, clock):
    settings.TABLE_KEY_CACHE_SECONDS = 5
    client = table_client("S01", "se-50kr")
    assert client.post(ROUNDS, record("R-1"), format="json").status_code == 201
    Table.objects.filter(code="S01").update(active=False)
    clock[0] += 5
    assert client.post(ROUNDS, record("R-2"), format="json").status_code == 401


def test_a_change_in_this_process_ends_a_remembered_key_at_once(table_client, settings, clock):
    settings.TABLE_KEY_CACHE_SECONDS = 3600
    client = table_client("S01", "se-50kr")
    assert client.post(ROUNDS, record("R-1"), format="json").status_code == 201
    key = TableKey.objects.get(table__code="S01")
    key.expires_at = timezone.now() - timedelta(seconds=1)
    key.save(update_fields=["expires_at"])
    assert client.post(ROUNDS, record("R-2"), format="json").status_code == 401


def test_a_remembered_key_still_ends_exactly_at_its_expiry(table_client, settings, clock, monkeypatch):
    settings.TABLE_KEY_CACHE_SECONDS = 3600
    old = table_client("S01", "se-50kr")
    table_register(code="S01", config_name="se-50kr", actor=SYSTEM, grace=timedelta(minutes=15))
    assert old.post(ROUNDS, record("R-1"), format="json").status_code == 201

    later = timezone.now() + timedelta(minutes=15, seconds=1)
    monkeypatch.setattr(authentication.timezone, "now", lambda: later)
    assert old.post(ROUNDS, record("R-2"), format="json").status_code == 401


def test_only_the_proven_key_is_remembered_not_its_id(table_client, settings, clock):
    settings.TABLE_KEY_CACHE_SECONDS = 3600
    client = table_client("S01", "se-50kr")
    key = client._credentials["HTTP_AUTHORIZATION"]
    assert client.post(ROUNDS, record("R-1"), format="json").status_code == 201

    forged = APIClient()
    forged.credentials(HTTP_AUTHORIZATION=key[:-2] + ("xx" if not key.endswith("xx") else "yy"))
    assert forged.post(ROUNDS, record("R-2"), format="json").status_code == 401
    assert client.post(ROUNDS, record("R-2"), format="json").status_code == 201


def test_a_refused_key_is_never_remembered(table_client, settings, clock, monkeypatch):
    settings.TABLE_KEY_CACHE_SECONDS = 3600
    client = table_client("S01", "se-50kr")
    key = client._credentials["HTTP_AUTHORIZATION"]
    Table.objects.filter(code="S01").update(active=False)
    assert client.post(ROUNDS, record("R-1"), format="json").status_code == 401

    Table.objects.filter(code="S01").update(active=True)
    looked_up = []
    original = authentication.key_in_force
    monkeypatch.setattr(authentication, "key_in_force", lambda **kw: looked_up.append(kw) or original(**kw))
    again = APIClient()
    again.credentials(HTTP_AUTHORIZATION=key)
    assert again.post(ROUNDS, record("R-1"), format="json").status_code == 201
    assert again.post(ROUNDS, record("R-2"), format="json").status_code == 201
    assert len(looked_up) == 1  # looked up once, then remembered


def test_with_no_cache_time_nothing_is_remembered(table_client, settings, clock):
    settings.TABLE_KEY_CACHE_SECONDS = 0
    client = table_client("S01", "se-50kr")
    assert client.post(ROUNDS, record("R-1"), format="json").status_code == 201
    TableKey.objects.filter(table__code="S01").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.post(ROUNDS, record("R-2"), format="json").status_code == 401


def test_a_tables_post_skips_the_peoples_middleware_but_keeps_every_header(table_client):
    """A table's post skips sessions, users and messages (casino.middleware), nothing it answers with."""
    client = table_client("S01", "se-50kr")
    response = client.post(ROUNDS, record("R-1"), format="json", HTTP_X_REQUEST_ID="req-1")
    assert response.status_code == 201
    assert not hasattr(response.wsgi_request, "session")
    assert not hasattr(response.wsgi_request, "_messages")
    assert response["X-Request-ID"] == "req-1"
    assert response["Content-Type"] == "application/json"
    assert response["Vary"] == "Accept"
    assert response["Allow"] == "GET, POST, HEAD, OPTIONS"
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert "Set-Cookie" not in response

    # A person's request still goes through all of it.
    people = APIClient()
    assert people.get("/api/docs/").status_code == 200
    assert hasattr(people.get("/api/docs/").wsgi_request, "session")


def test_a_tables_budget_is_the_same_sliding_log_kept_compactly(table_client, monkeypatch):
    """api.throttling.TableRateThrottle: DRF's rule, its log stored as an array."""
    from array import array

    from django.core.cache import cache

    from api.throttling import TableRateThrottle

    monkeypatch.setattr(TableRateThrottle, "THROTTLE_RATES", {"table": "3/min"})
    client = table_client("S01", "se-50kr")
    # A log written as a list (by DRF's own throttle before) is read as it stands.
    cache.set("throttle_table_S01", [__import__("time").time()], 60)
    statuses = [client.post(ROUNDS, record(f"R-{n}"), format="json").status_code for n in range(3)]
    assert statuses == [201, 201, 429]
    refused = client.post(ROUNDS, record("R-9"), format="json")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert refused.json()["code"] == "throttled"
    log = cache.get("throttle_table_S01")
    assert isinstance(log, array) and len(log) == 3
