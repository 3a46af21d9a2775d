"""Issue 45, item 3: the application's database role owns nothing and holds only what it needs.

Every test of the suite runs as that role (tests/conftest.py); these hold what it may not do,
what it may, and that in production the service will not start as a role that owns the tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date

import pytest
from django.db import DatabaseError, connection, transaction

from bench.load import APP_ROLE
from rounds.partitions import month_partitions_make
from tests.insider import as_owner
from trail.privileges import APPEND_ONLY, grants_for, owner_refusal
from trail.protections import PROTECTIONS

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL's roles"),
]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _denied(statement: str, params=(), match: str = "permission denied|must be owner") -> None:
    with pytest.raises(DatabaseError, match=match), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement, params)


def _scalar(statement: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchone()[0]


def test_the_tests_run_as_the_application_s_role_which_owns_nothing():
    assert _scalar("SELECT current_user") == APP_ROLE
    assert not _scalar("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    assert _scalar("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                   "WHERE n.nspname = current_schema() AND pg_has_role(current_user, c.relowner, 'USAGE')") == 0
    # The tests' harness logs in as the owner and sets the role: the service's own check names
    # that too (it could RESET ROLE), which is why production logs in as the role itself.
    assert owner_refusal(connection) == f"the database role {connection.settings_dict['USER']} is a superuser"


@pytest.mark.parametrize("table", sorted(PROTECTIONS))
def test_the_application_cannot_switch_a_protection_off_or_empty_a_table(table):
    trigger = PROTECTIONS[table][0]
    _denied(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}", match="must be owner")
    _denied(f"TRUNCATE {table} CASCADE")
    _denied(f"DROP TABLE {table} CASCADE", match="must be owner")


def test_the_application_cannot_pass_the_triggers_or_make_tables():
    _denied("SET session_replication_role = replica")
    _denied("CREATE TABLE scratch (id int)")
    _denied("ALTER TABLE rounds_round ADD COLUMN scratch int", match="must be owner")
    _denied("CREATE TABLE rounds_round_p203012 PARTITION OF rounds_round "
            "FOR VALUES FROM ('2030-12-01') TO ('2031-01-01')")
    _denied("DELETE FROM django_migrations")


@pytest.mark.parametrize("table", sorted(APPEND_ONLY))
def test_rows_that_are_never_changed_cannot_be_changed_by_the_application(table):
    _denied(f"UPDATE {table} SET id = id")
    _denied(f"DELETE FROM {table}")


def test_the_application_makes_a_month_s_partitions_only_through_the_owner_s_function():
    assert month_partitions_make(connection.cursor(), date(2031, 7, 9)) is True
    assert month_partitions_make(connection.cursor(), date(2031, 7, 30)) is False
    owners = _scalar("SELECT array_agg(DISTINCT pg_get_userbyid(relowner)) FROM pg_class "
                     "WHERE relname IN ('rounds_round_p203107', 'rounds_seat_p203107')")
    assert owners == [connection.settings_dict["USER"]]  # the owner's, as every table
    # Read directly (the operators' counts do), never written but through its table.
    assert _scalar("SELECT count(*) FROM rounds_round_p203107") == 0
    _denied("TRUNCATE rounds_seat_p203107")


def test_migrate_grants_exactly_the_application_s_privileges_again():
    with as_owner(), connection.cursor() as cursor:
        cursor.execute(f"GRANT TRUNCATE, TRIGGER ON rounds_round TO {APP_ROLE}")
        cursor.execute(f"GRANT UPDATE ON audit_auditevent TO {APP_ROLE}")
        cursor.execute(f"GRANT CREATE ON SCHEMA public TO {APP_ROLE}")
    assert _scalar("SELECT has_table_privilege(current_user, 'rounds_round', 'TRUNCATE')")
    with as_owner():
        grants_for(APP_ROLE)
    for table, privilege in (("rounds_round", "TRUNCATE"), ("rounds_round", "TRIGGER"),
                             ("audit_auditevent", "UPDATE"), ("django_migrations", "INSERT")):
        assert not _scalar("SELECT has_table_privilege(current_user, %s, %s)", [table, privilege])
    assert not _scalar("SELECT has_schema_privilege(current_user, 'public', 'CREATE')")
    assert _scalar("SELECT has_table_privilege(current_user, 'rounds_round', 'UPDATE')")
    assert _scalar("SELECT has_table_privilege(current_user, 'audit_auditevent', 'INSERT')")


def _started(user: str, *command: str) -> subprocess.CompletedProcess:
    database = connection.settings_dict
    env = {
        **os.environ, "DJANGO_ENV": "production", "SECRET_KEY": "a-key-for-this-test-only-" + "x" * 40,
        "ALLOWED_HOSTS": "testserver", "CELERY_BROKER_URL": "memory://", "LOG_FORMAT": "plain",
        "DATABASE_URL": f"postgres://{user}@{database['HOST'] or '127.0.0.1'}:{database['PORT'] or 5432}/"
                        f"{database['NAME']}",
    }
    return subprocess.run([sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.django_db(transaction=True)
def test_in_production_the_web_and_the_worker_refuse_to_start_as_the_owner():
    owner = connection.settings_dict["USER"]
    web = _started(owner, "-c", "import casino.wsgi")
    assert web.returncode != 0 and f"the database role {owner} is a superuser" in web.stderr
    worker = _started(owner, "-m", "celery", "-A", "casino", "worker", "--pool", "solo", "--without-mingle",
                      "--without-gossip", "--without-heartbeat", "-Q", "nothing-here")
    assert worker.returncode != 0 and "is a superuser: the service runs as a role that owns nothing" in (
        worker.stderr + worker.stdout)

    # Not a superuser, but the owner of one table: refused alike.
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = 'table_audit_owner_probe'")
        if not cursor.fetchone():
            cursor.execute("CREATE ROLE table_audit_owner_probe LOGIN")
        cursor.execute("CREATE TABLE owned_by_the_probe (id int)")
        cursor.execute("ALTER TABLE owned_by_the_probe OWNER TO table_audit_owner_probe")
    try:
        probe = _started("table_audit_owner_probe", "-c", "import casino.wsgi")
    finally:
        with as_owner(), connection.cursor() as cursor:
            cursor.execute("DROP TABLE owned_by_the_probe")
    assert probe.returncode != 0
    assert "can act as table_audit_owner_probe, the owner of owned_by_the_probe" in probe.stderr

    started = _started(APP_ROLE, "-c", "import casino.wsgi; print('started')")
    assert started.returncode == 0, started.stderr[-2000:]
    assert started.stdout.strip() == "started"
