from __future__ import annotations

import importlib
from datetime import date

import pytest
from django.apps import apps
from django.db import transaction
from rest_framework.test import APIClient

from bench.load import APP_ROLE, Throwaway, app_role_ensure
from progressive.proof_versions import pool_versions_record
from rounds.proof_versions import config_versions_record
from rounds.services import table_register
from trail.services import SYSTEM


def ship_configuration() -> None:
    """The configurations and pool the migrations ship, as the migrations write them (in one
    transaction, as a migration runs: a pool and its opening event commit together)."""
    with transaction.atomic():
        importlib.import_module("progressive.migrations.0003_shipped_pool").ship_pool(apps, None)
        importlib.import_module("rounds.migrations.0002_shipped_configs").ship_configs(apps, None)
        # As the migrate that ships them ends: the chain records the shipped versions.
        config_versions_record()
        pool_versions_record()


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """On SQLite the test database is a file of its own, as the embedded default's is:
    Django's in-memory default would have no WAL and no second connection. On PostgreSQL the
    application's role exists before ``migrate`` grants it."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.postgresql":
        app_role_ensure(f"postgres://{database['USER']}@{database['HOST'] or '127.0.0.1'}:{database['PORT'] or 5432}")
        settings.DATABASE_APP_ROLE = APP_ROLE
    if database["ENGINE"] == "django.db.backends.sqlite3" and not database.get("TEST", {}).get("NAME"):
        database.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("sqlite") / "test.sqlite3")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The tests' database made and migrated by its owner, who grants the application's role
    (``migrate`` with ``DATABASE_APP_ROLE``, as production runs it); every test then runs as
    that role (``SET ROLE``, Django's ``assume_role``), which owns nothing. What only the owner
    may do, a test does inside ``tests.insider.as_owner``; the database is dropped as the owner."""
    from django.db import connections

    database = connections["default"]
    if database.vendor != "postgresql":
        yield
        return
    options = database.settings_dict["OPTIONS"]
    options["assume_role"] = APP_ROLE
    database.close()
    yield
    with django_db_blocker.unblock():
        options.pop("assume_role", None)
        database.close()


@pytest.fixture(autouse=True)
def _second_factor_proven_with_force_login(monkeypatch, settings):
    """A person a test signs in with ``force_login`` who must prove a second factor (a supervisor,
    an admin: ``casino.second_factor``) has proven it, with an authenticator of his own, as a
    sign-in with his code leaves the session. The sign-in itself, code and all, is held by
    tests/security/test_second_factor.py and the browser tests, which sign in through the form."""
    from django.test import Client

    settings.SECOND_FACTOR_REQUIRED = True  # as production requires it
    real = Client.force_login

    def force_login(self, user, backend=None):
        real(self, user, backend)
        from django_otp import DEVICE_ID_SESSION_KEY

        from casino.second_factor import required
        from tests.security.people import authenticator

        if required(user):
            session = self.session
            session[DEVICE_ID_SESSION_KEY] = authenticator(user).persistent_id
            session.save()

    monkeypatch.setattr(Client, "force_login", force_login)


@pytest.fixture(autouse=True)
def _shipped_configuration(request, _django_db_marker):
    """A transactional test flushes the database, migrations' data included: put it back."""
    names = set(request.fixturenames)
    marker = request.node.get_closest_marker("django_db")
    if marker is None and not names & {"db", "transactional_db", "live_server"}:
        return
    if marker is None:
        request.getfixturevalue("transactional_db" if names & {"transactional_db", "live_server"} else "db")
    ship_configuration()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Production hashing is slow on purpose; tests only need it to be a hash.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _books_open_since_2000(settings):
    """Test rounds are dated from 2011 on, and the worked examples stay in their month for
    years: the books' window opens in 2000 unless a test narrows it (tests/api/test_window.py)."""
    settings.ROUND_WINDOW_OPENS = date(2000, 1, 1)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Throttle counters live in the cache; no test inherits another's budget."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def table_client(db):
    """``table_client("S01", "se-50kr")``: an API client holding that table's fresh key."""

    def make(code: str = "S01", config: str = "se-50kr") -> APIClient:
        issued = table_register(code=code, config_name=config, actor=SYSTEM)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
        client.table = issued.table
        return client

    return make


@pytest.fixture
def staff(db, django_user_model):
    """``staff("auditor")``: a Django test client signed in as a new user in that role
    (casino/roles.py), its user as ``client.user``; ``staff(None)``: staff with no role."""
    from django.test import Client

    from casino.services import user_roles_set

    def login(role: str | None, name: str = "") -> Client:
        from tests.security.people import hired

        user = hired(name or f"{role or 'staff'}-a", password="pw-for-tests-only")
        if role:
            user_roles_set(user=user, roles=[role], actor=SYSTEM)
        else:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        client = Client()
        client.force_login(user)
        client.user = user
        return client

    return login


@pytest.fixture
def auditor(db, django_user_model):
    from django.contrib.auth.models import Permission

    from casino.people import CHANGED, person_record
    from tests.security.people import hired

    user = hired("auditor", password="a-long-test-password")
    user.user_permissions.add(
        *Permission.objects.filter(codename__startswith="view_", content_type__app_label__in=["trail", "rounds", "progressive", "audit"])
    )
    person_record(user=user, actor=SYSTEM, action=CHANGED)  # as the admin's page records ticked permissions
    return user


@pytest.fixture
def auditor_client(auditor):
    client = APIClient()
    client.force_authenticate(auditor)
    return client


@pytest.fixture
def empty_databases(settings):
    """``make()`` → a new, empty database (a ``bench.load.Throwaway``) on the tests' PostgreSQL server,
    for a test that runs ``manage.py`` or a restore against a database of its own; all dropped after."""
    server = settings.DATABASES["default"]
    address = f"postgres://{server['USER']}@{server['HOST'] or '127.0.0.1'}:{server['PORT'] or 5432}"
    made: list[Throwaway] = []

    def make() -> Throwaway:
        database = Throwaway(address)
        with database._admin() as admin:
            admin.execute(f'CREATE DATABASE "{database.name}"')
        made.append(database)
        return database

    try:
        yield make
    finally:
        for database in made:
            database.drop()


@pytest.fixture(scope="session", autouse=True)
def _flush_past_the_truncate_refusal():
    """A transactional test ends by emptying every table (TRUNCATE), which the database refuses
    on the tables that hold what happened (audit migration 0010): the test's flush does it as a
    superuser restoring a backup would, with the session's triggers off for its transaction."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    real = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        statements = real(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        if not statements:
            return statements
        role = self.connection.settings_dict["OPTIONS"].get("assume_role")
        # SET ROLE is transactional: a flush that fails leaves the application's role in place.
        owner, back = (["RESET ROLE"], [self.compose_sql("SET ROLE %s", [role])]) if role else ([], [])
        return [*owner, "SET LOCAL session_replication_role = replica", *statements, *back]

    DatabaseOperations.sql_flush = sql_flush
    yield
    DatabaseOperations.sql_flush = real
