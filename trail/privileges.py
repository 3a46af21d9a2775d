"""Two database roles: the owner that migrates, and the application's role that owns nothing.

The triggers that protect what happened (``trail.protections``) hold only
against a role that cannot switch them off, and PostgreSQL lets a table's
owner disable its triggers, truncate it and change it at will. So the
service runs as a role of its own that owns no table and holds only what
the application needs:

- SELECT and INSERT on a table whose rows are never changed (an
  ``*_append_only`` protection), SELECT, INSERT, UPDATE and DELETE on the
  rest, whose triggers then decide what may change; never TRUNCATE,
  REFERENCES or TRIGGER, and no DDL: the schema's CREATE is not granted;
- the sequences' USAGE (``nextval``), and SELECT on every table the owner
  makes later (a month's partition), by default privileges;
- EXECUTE on the one function that makes a month's round partitions as the
  owner (rounds migration 0029), the only DDL the application may ask for.

``migrate``, run as the owner with ``DATABASE_APP_ROLE`` naming the
application's role, grants exactly this after the last app's migrations
(again on every run, so a table added later is granted too). In production
the web and the workers refuse to start as a role that could act as a table's
owner (``owner_refusal``), so the split cannot be skipped by mistake.

PostgreSQL only: SQLite, the embedded default, has no roles.
"""

from __future__ import annotations

import logging

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import OperationalError, connections
from django.db.backends.signals import connection_created
from psycopg import sql

from .protections import PROTECTIONS

logger = logging.getLogger(__name__)
CHECK_AT_CONNECTION = "trail.privileges.checked_at_connection"

APPEND_ONLY = frozenset(table for table, triggers in PROTECTIONS.items()
                        if f"{table}_append_only" in triggers)
# Read by the application, never written: the migrations' own record.
READ_ONLY = frozenset({"django_migrations"})
PARTITIONS_MAKER = "table_audit_round_partitions_make(date)"


def grants_for(role: str, using: str = "default") -> None:
    """Give ``role`` exactly the application's privileges on the schema's tables, sequences
    and the partition maker, taking back any other (run as the owner)."""
    connection = connections[using]
    role_name = sql.Identifier(role)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        schema = sql.Identifier(cursor.fetchone()[0])
        cursor.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY 1")
        tables = [name for (name,) in cursor.fetchall()]
        statements = [
            sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA {} FROM {}").format(schema, role_name),
            sql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA {} FROM {}").format(schema, role_name),
            sql.SQL("REVOKE CREATE ON SCHEMA {} FROM {}").format(schema, role_name),
            sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(schema, role_name),
            sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO {}").format(schema, role_name),
            sql.SQL("ALTER DEFAULT PRIVILEGES IN SCHEMA {} GRANT SELECT ON TABLES TO {}").format(schema, role_name),
        ]
        for table in tables:
            statements.append(sql.SQL("GRANT {} ON {} TO {}").format(
                sql.SQL(_privileges_of(table)), sql.Identifier(table), role_name))
        cursor.execute("SELECT to_regprocedure(%s) IS NOT NULL", [PARTITIONS_MAKER])
        if cursor.fetchone()[0]:
            statements.append(sql.SQL("REVOKE ALL ON FUNCTION {} FROM PUBLIC").format(sql.SQL(PARTITIONS_MAKER)))
            statements.append(sql.SQL("GRANT EXECUTE ON FUNCTION {} TO {}").format(
                sql.SQL(PARTITIONS_MAKER), role_name))
        for statement in statements:
            cursor.execute(statement)


def _privileges_of(table: str) -> str:
    if table in READ_ONLY:
        return "SELECT"
    if _parent_of(table) in APPEND_ONLY:
        return "SELECT, INSERT"
    return "SELECT, INSERT, UPDATE, DELETE"


def _parent_of(table: str) -> str:
    """A partition's privileges are its table's (reached through it; read directly, e.g. counted)."""
    for parent in APPEND_ONLY:
        if table.startswith(f"{parent}_p") or table == f"{parent}_default":
            return parent
    return table


def grants_after_the_last_app(sender, using="default", **kwargs) -> None:
    """``grants_for(settings.DATABASE_APP_ROLE)`` once every app's tables exist (connected to
    ``post_migrate``; nothing when the setting is empty or the database is not PostgreSQL)."""
    role = settings.DATABASE_APP_ROLE
    if not role or connections[using].vendor != "postgresql":
        return
    if sender is [config for config in apps.get_app_configs() if config.models_module is not None][-1]:
        grants_for(role, using)


def owner_refusal(connection) -> str | None:
    """Why the service must not run on ``connection``'s role, or None: a superuser, or a role
    (logged in, or set) that can act as the owner of one of the schema's tables."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT r.rolname FROM pg_roles r WHERE r.rolname IN (current_user, session_user) AND r.rolsuper")
        supers = [name for (name,) in cursor.fetchall()]
        if supers:
            return f"the database role {supers[0]} is a superuser"
        cursor.execute(
            "SELECT c.relname, pg_get_userbyid(c.relowner) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') "
            "AND (pg_has_role(current_user, c.relowner, 'USAGE') OR pg_has_role(session_user, c.relowner, 'USAGE')) "
            "ORDER BY 1 LIMIT 1")
        owned = cursor.fetchone()
    if owned:
        return f"the database role can act as {owned[1]}, the owner of {owned[0]}"
    return None


def _refused(why: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(
        f"{why}: the service runs as a role that owns nothing, and the owner only migrates "
        f"(docs/OPERATIONS.md, \"Two database roles\")")


def refuse_the_owner() -> None:
    """Raise ``ImproperlyConfigured`` in production when the service's role could switch the
    records' protections off (called as the web and the workers start). A database that cannot
    be reached yet is checked at the first connection made to it instead, which is refused
    (and so is every one after) until the role is right."""
    if not settings.PRODUCTION:
        return
    database = connections["default"]
    try:
        why = owner_refusal(database)
    except OperationalError:
        logger.warning("the database could not be reached to check the service's role: checked at the "
                       "first connection")
        connection_created.connect(_checked_at_connection, dispatch_uid=CHECK_AT_CONNECTION)
        return
    finally:
        _let_go(database)
    if why:
        raise _refused(why)


def _let_go(database) -> None:
    """Close the connection the check used, and with ``DB_POOL`` the pool that kept it: the web's
    master checks before it forks its workers (gunicorn's ``preload_app``), and a pooled
    connection left open there would be one PostgreSQL session every worker writes to at once."""
    database.close()
    if hasattr(database, "close_pool"):  # PostgreSQL's: closes the pool if there is one
        database.close_pool()


def _checked_at_connection(sender, connection, **kwargs) -> None:
    if connection.alias != "default":
        return
    why = owner_refusal(connection)
    if why:
        connection.close()  # else the next use would find it open, and go on as that role
        raise _refused(why)
    connection_created.disconnect(dispatch_uid=CHECK_AT_CONNECTION)
