"""Repeated failed logins lock out; each table and person posts within a budget."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from api.throttling import TableRateThrottle
from tests import examples

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-test-password"


def test_admin_login_locks_out_after_repeated_failures(django_user_model, client, settings):
    django_user_model.objects.create_user("carla", password=PASSWORD, is_staff=True)
    statuses = [
        client.post("/admin/login/", {"username": "carla", "password": "guess"}).status_code
        for _ in range(settings.AXES_FAILURE_LIMIT)
    ]
    # The form again, with an error, until the limit; the failure that reaches it locks.
    assert statuses == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429]
    locked = client.post("/admin/login/", {"username": "carla", "password": PASSWORD})
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_good_login_before_the_limit_resets_the_count(django_user_model, client, settings):
    django_user_model.objects.create_user("dan", password=PASSWORD, is_staff=True)
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post("/admin/login/", {"username": "dan", "password": "guess"})
    assert client.post("/admin/login/", {"username": "dan", "password": PASSWORD}).status_code == 302


def test_api_basic_auth_counts_towards_the_lockout(django_user_model, settings):
    django_user_model.objects.create_user("erik", password=PASSWORD)
    client = APIClient()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.credentials(HTTP_AUTHORIZATION="Basic ZXJpazpndWVzcw==")  # erik:guess
        assert client.get("/api/v1/rounds/").status_code in (401, 403)
    client.credentials(HTTP_AUTHORIZATION="Basic " + __import__("base64").b64encode(
        f"erik:{PASSWORD}".encode()).decode())
    assert client.get("/api/v1/rounds/").status_code in (401, 403, 429)


def test_each_table_has_its_own_budget(table_client, monkeypatch):
    monkeypatch.setattr(TableRateThrottle, "THROTTLE_RATES", {"table": "3/min"})
    s01, s02 = table_client("S01", "se-50kr"), table_client("S02", "se-50kr")
    records = examples.load("se-50kr.jsonl")
    statuses = [s01.post("/api/v1/rounds/", r["record"], format="json").status_code for r in records[:4]]
    assert statuses == [201, 201, 201, 429]
    other = dict(records[5]["record"], table="S02")
    assert s02.post("/api/v1/rounds/", other, format="json").status_code == 201


def test_behind_a_trusted_proxy_a_lockout_keys_on_the_clients_own_address(django_user_model, client, settings):
    """Everyone behind the proxy comes from its address: a guesser there must not lock a real
    auditor out, and a forged X-Forwarded-For from anywhere else is not believed."""
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    django_user_model.objects.create_user("fia", password=PASSWORD, is_staff=True)
    proxy = {"REMOTE_ADDR": "10.0.0.5"}
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post("/admin/login/", {"username": "fia", "password": "guess"},
                    HTTP_X_FORWARDED_FOR="203.0.113.9", **proxy)
    assert client.post("/admin/login/", {"username": "fia", "password": PASSWORD},
                       HTTP_X_FORWARDED_FOR="203.0.113.9", **proxy).status_code == 429
    # The real auditor, behind the same proxy, from her own address.
    assert client.post("/admin/login/", {"username": "fia", "password": PASSWORD},
                       HTTP_X_FORWARDED_FOR="198.51.100.7", **proxy).status_code == 302


def test_a_forwarded_address_from_outside_the_proxies_is_not_believed(rf, settings):
    from infra.client_address import client_address

    settings.TRUSTED_PROXIES = ["10.0.0.5"]
    forged = rf.get("/", HTTP_X_FORWARDED_FOR="198.51.100.7", REMOTE_ADDR="203.0.113.9")
    assert client_address(forged) == "203.0.113.9"
    chained = rf.get("/", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7", REMOTE_ADDR="10.0.0.5")
    assert client_address(chained) == "198.51.100.7"  # the rightmost hop the proxy did not add
    junk = rf.get("/", HTTP_X_FORWARDED_FOR="not-an-address", REMOTE_ADDR="10.0.0.5")
    assert client_address(junk) == "10.0.0.5"
