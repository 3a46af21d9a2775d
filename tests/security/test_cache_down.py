"""The cache down degrades throttling, never storage (issue: "the cache down means nothing is
stored"); wrong table keys are throttled per address and counted.

The cache here is Redis at a port where nothing listens, as when the cache's
Redis is stopped: every throttle's read fails at once.
"""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.test import override_settings
from prometheus_client import REGISTRY
from rest_framework.test import APIClient

from casino import health
from rounds.models import Round, Submission
from tests.api.records import BATCH, ROUNDS, record
from tests.test_health import closed_port

pytestmark = pytest.mark.django_db


def _sample(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def cache_down():
    # Not the settings fixture: the cache is back before the autouse fixtures clear it.
    with override_settings(CACHES={"default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }}):
        health.readiness_forget()
        with pytest.raises(Exception):  # noqa: B017 - whatever the client raises: the cache is down
            caches["default"].get("anything")
        yield
    health.readiness_forget()


def test_with_the_cache_down_rounds_are_stored_and_staff_served(cache_down, table_client, staff):
    before = _sample("table_audit_throttle_cache_errors_total", throttle="TableRateThrottle")
    client = table_client("S01", "se-50kr")

    single = client.post(ROUNDS, record("C-1"), format="json")
    batch = client.post(BATCH, {"rounds": [record("C-2"), record("C-3")]}, format="json")

    assert single.status_code == 201, single.content[:300]
    assert batch.status_code == 200 and [r["status"] for r in batch.json()["results"]] == [201, 201]
    assert set(Round.objects.values_list("round_id", flat=True)) == {"C-1", "C-2", "C-3"}
    assert Submission.objects.filter(http_status=201).count() == 3
    assert _sample("table_audit_throttle_cache_errors_total", throttle="TableRateThrottle") >= before + 2

    auditor = staff("auditor")
    assert auditor.get("/api/v1/rounds/").status_code == 200
    assert auditor.get("/admin/rounds/round/").status_code == 200


def test_with_the_cache_down_readyz_says_degraded_and_stays_200(cache_down):
    response = APIClient().get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "degraded", "degraded": ["cache"]}


def test_wrong_table_keys_from_one_address_are_throttled_and_counted(settings, table_client):
    settings.TABLE_KEY_FAILURES_PER_MINUTE = 5
    caches["default"].clear()
    invalid = _sample("table_audit_table_key_refusals_total", outcome="invalid")
    throttled = _sample("table_audit_table_key_refusals_total", outcome="throttled")
    good = table_client("S01", "se-50kr")
    guesser = APIClient(REMOTE_ADDR="203.0.113.9")
    guesser.credentials(HTTP_AUTHORIZATION="Bearer ta_abcdef_" + "x" * 40)

    answers = [guesser.post(ROUNDS, record(f"G-{n}"), format="json").status_code for n in range(8)]

    assert answers == [401] * 5 + [429] * 3
    assert _sample("table_audit_table_key_refusals_total", outcome="invalid") == invalid + 5
    assert _sample("table_audit_table_key_refusals_total", outcome="throttled") == throttled + 3
    # Only wrong keys are refused: a table whose key is right is served, from elsewhere or from
    # the very address (a floor behind one NAT), and nothing was kept for the guesses.
    assert good.post(ROUNDS, record("OK-1"), format="json").status_code == 201
    assert good.post(ROUNDS, record("OK-2"), format="json", REMOTE_ADDR="203.0.113.9").status_code == 201
    assert not Submission.objects.filter(claimed_round__startswith="G-").exists()
