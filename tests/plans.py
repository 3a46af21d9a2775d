"""What the plan tests share (PostgreSQL): a table's statistics made those of a small table, a
second session to grow it behind the planner's back, and every plan a piece of work runs."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from django.db import connection

from tests.insider import as_owner

# How a table's statistics come to describe a small table: gathered while it was small (autovacuum
# off or behind), or never (a fresh database).
STALE = ("analyzed while small", "never gathered")


def statistics_of_a_small_table(table: str, kind: str) -> None:
    with as_owner(), connection.cursor() as cursor:
        if kind == "analyzed while small":
            cursor.execute(f"ANALYZE {table}")
            return
        cursor.execute("DELETE FROM pg_statistic WHERE starelid = %s::regclass", [table])
        cursor.execute("UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE oid = %s::regclass", [table])


def other_session() -> psycopg.Connection:
    """A connection of its own to the test database: what it writes, this session's plans are not told."""
    settings = connection.settings_dict
    return psycopg.connect(dbname=settings["NAME"], user=settings["USER"], password=settings["PASSWORD"] or None,
                           host=settings["HOST"] or None, port=settings["PORT"] or None)


def plans_of(work: Callable[[], object]) -> list[str]:
    """Every plan the statements of ``work`` (and the queries their triggers run) were executed
    with, as ``auto_explain`` reports them to this session."""
    plans: list[str] = []
    raw = connection.connection
    raw.add_notice_handler(lambda notice: plans.append(notice.message_primary or ""))
    # Loading a module and its settings are a superuser's; the work itself runs as the application.
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("LOAD 'auto_explain'")
        for setting in ("auto_explain.log_min_duration = 0", "auto_explain.log_nested_statements = on",
                        "client_min_messages = log"):
            cursor.execute(f"SET {setting}")
    try:
        work()
    finally:
        with as_owner(), connection.cursor() as cursor:
            cursor.execute("RESET client_min_messages")
            cursor.execute("RESET auto_explain.log_min_duration")
        raw._notice_handlers.clear()
    return plans
