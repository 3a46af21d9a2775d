"""/healthz and /readyz: answered to anyone, over plain HTTP, naming nothing but the failing checks."""

from __future__ import annotations

import json
import logging
import socket

import pytest
from django.db import OperationalError
from django.test import Client

from casino import health

CHECK_NAMES = {"database", "migrations", "broker", "audit_chain"}


@pytest.fixture(autouse=True)
def _fresh_readiness():
    health.readiness_forget()
    yield
    health.readiness_forget()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_healthz_answers_without_the_database():
    # No django_db mark: any query would raise here.
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "alive"}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_readyz_is_200_when_every_check_passes():
    response = Client().get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ready"}


@pytest.mark.django_db
def test_probes_are_answered_over_http_for_any_host_without_a_session(settings):
    # As production: HTTPS redirect on, a host list that a balancer's address is not in.
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["audit.casino.example"]
    client = Client()
    for path in ("/healthz", "/readyz"):
        response = client.get(path, HTTP_HOST="10.20.30.40:8001")
        assert response.status_code == 200, (path, response.status_code)
        assert "Set-Cookie" not in response and not response.cookies
    # Everything else still redirects: the exemption is the probes' alone.
    assert client.get("/api/v1/rounds/", HTTP_HOST="audit.casino.example").status_code == 301


@pytest.mark.django_db
def test_readyz_names_only_the_broker_when_it_is_down(settings, caplog):
    port = closed_port()
    settings.CELERY_BROKER_URL = f"redis://:test-broker-password@127.0.0.1:{port}/0"
    with caplog.at_level(logging.WARNING, logger="casino.health"):
        response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "failing": ["broker"]}
    text = response.content.decode()
    for secret in (str(port), "127.0.0.1", "test-broker-password", "redis", "Error", "refused"):
        assert secret not in text
    # The operator finds what went wrong in the log, not in the answer.
    assert any("broker" in record.getMessage() and record.exc_info for record in caplog.records)


@pytest.mark.django_db
def test_readyz_with_a_broker_that_answers(settings):
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/15"
    assert Client().get("/readyz").status_code == 200


@pytest.mark.django_db
def test_readyz_is_503_while_migrations_are_unapplied(monkeypatch):
    from django.db.migrations.executor import MigrationExecutor

    monkeypatch.setattr(health, "_MIGRATED", False)
    monkeypatch.setattr(MigrationExecutor, "migration_plan",
                        lambda self, targets, clean_start=False: [("rounds.9999_pending", False)])
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "failing": ["migrations"]}
    assert "9999" not in response.content.decode()


@pytest.mark.django_db
def test_readyz_is_503_without_the_database_and_says_no_more(monkeypatch):
    from django.db import connection

    def refused(*args, **kwargs):
        raise OperationalError('connection to server at "db-primary.internal" (10.1.1.5), port 5432 '
                               'failed: password authentication failed for user "audit"')

    monkeypatch.setattr(health, "_MIGRATED", False)
    monkeypatch.setattr(connection, "cursor", refused)
    response = Client().get("/readyz")
    monkeypatch.undo()
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert set(body["failing"]) == {"database", "migrations", "audit_chain"}
    assert set(body) == {"status", "failing"} and set(body["failing"]) <= CHECK_NAMES
    text = response.content.decode()
    for secret in ("db-primary", "10.1.1.5", "5432", "password", "audit\"", "Operational"):
        assert secret not in text


@pytest.mark.django_db
def test_readyz_checks_once_a_moment_for_every_probe(django_assert_max_num_queries):
    Client().get("/readyz")
    with django_assert_max_num_queries(0):
        assert json.loads(Client().get("/readyz").content) == {"status": "ready"}


def test_probes_refuse_writes():
    assert Client().post("/healthz").status_code == 405
