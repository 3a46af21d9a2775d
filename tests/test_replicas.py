"""Replicas as configured and as checked, without one running (tests/faults/test_replica.py has a real one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.db import OperationalError, connection

from casino.routers import PrimaryReplicaRouter
from infra import replicas
from rounds.models import Round

SETTINGS_OF = (
    "import json, casino.settings as s; "
    "print(json.dumps({'replicas': s.DATABASE_REPLICAS, 'routers': getattr(s, 'DATABASE_ROUTERS', []), "
    "'databases': {a: [d['HOST'], d['OPTIONS'].get('connect_timeout'), d.get('TEST')] "
    "for a, d in s.DATABASES.items() if a != 'default'}}))"
)


def _settings(**env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SETTINGS_OF], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "DJANGO_ENV": "development", **env})


@pytest.fixture(autouse=True)
def _no_kept_verdicts():
    replicas.verdicts_forget()
    yield
    replicas.verdicts_forget()


def test_each_replica_url_is_an_alias_mirroring_the_test_database_behind_the_router():
    done = _settings(DATABASE_URL="postgres://p@primary:5432/casino",
                     DATABASE_REPLICA_URL="postgres://p@one:5432/casino, postgres://p@two:5432/casino?connect_timeout=7")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "replicas": ["replica", "replica_2"],
        "routers": ["casino.routers.PrimaryReplicaRouter"],
        "databases": {"replica": ["one", 2, {"MIRROR": "default"}], "replica_2": ["two", 7, {"MIRROR": "default"}]},
    }


def test_without_a_replica_url_there_is_no_second_database_and_no_router():
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_REPLICA_URL"}
    done = subprocess.run([sys.executable, "-c", SETTINGS_OF], capture_output=True, text=True, timeout=60,
                          env={**env, "DATABASE_URL": "postgres://p@primary:5432/casino"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"replicas": [], "routers": [], "databases": {}}


def test_a_replica_of_the_embedded_sqlite_default_is_refused():
    done = _settings(DATABASE_URL="sqlite:////tmp/never-made.sqlite3", DATABASE_REPLICA_URL="postgres://p@one/casino")
    assert done.returncode != 0
    assert "DATABASE_REPLICA_URL names streaming replicas of a PostgreSQL DATABASE_URL" in done.stderr


def test_every_write_goes_to_the_primary_whatever_its_object_was_read_from():
    router = PrimaryReplicaRouter()
    read_there = Round()
    read_there._state.db = "replica"
    assert router.db_for_write(Round, instance=read_there) == "default"
    assert router.db_for_read(Round, instance=read_there) is None  # Django keeps it where it came from
    assert router.allow_migrate("default", "rounds") is True
    assert router.allow_migrate("replica", "rounds") is False


@pytest.mark.django_db
def test_with_no_replica_configured_every_read_is_the_primarys_and_costs_no_query(django_assert_num_queries):
    with django_assert_num_queries(0):
        assert replicas.read_alias() == "default"
        assert replicas.read_alias(fresh=True) == "default"
        assert replicas.read(lambda alias: alias) == "default"


@pytest.mark.django_db
def test_a_replica_that_is_no_standby_is_passed_over(settings):
    if connection.vendor != "postgresql":
        pytest.skip("replicas are PostgreSQL's")
    # The test database itself, named as a replica: it answers, but it is a primary.
    settings.DATABASE_REPLICAS = ["default"]
    verdict = replicas.replica_check("default")
    assert not verdict.usable and "not a standby" in verdict.reason
    assert replicas.read_alias() == "default"


class _Closed:
    closed = False

    def close(self):
        self.closed = True


def test_a_read_that_fails_on_the_replica_is_read_again_on_the_primary_and_the_replica_passed_over(monkeypatch):
    replica = _Closed()
    monkeypatch.setattr(replicas, "connections", {"replica": replica})
    monkeypatch.setattr(replicas, "read_alias", lambda fresh=False: "replica")
    asked = []

    def answer(alias):
        asked.append(alias)
        if alias == "replica":
            raise OperationalError("terminating connection due to conflict with recovery")
        return "rows"

    assert replicas.read(answer) == "rows"
    assert asked == ["replica", "default"]
    assert replica.closed
    assert not replicas._verdicts["replica"][0].usable
