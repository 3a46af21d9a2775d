"""Several statements in one round trip to the database, prepared once per connection.

Storing a round is a handful of inserts and updates made while the pool's and
the audit chain's row locks are held; every round trip to PostgreSQL is time
every other table waits. ``run`` sends a list of statements as one string when
the driver allows it (psycopg 3 with client-side binding, Django's default),
and one by one otherwise (SQLite, server-side binding); either way the
statements run in order in the caller's transaction.

The SQL follows the models: the columns of an INSERT are the model's concrete
fields, so a column another migration adds is written like any
``bulk_create`` would. On PostgreSQL the rows of an INSERT travel as one JSON
parameter that the server spreads into the table's columns
(``json_populate_recordset``): turning a hundred Python values into SQL
literals one by one costs the web worker more than the database's work on the
whole round. Elsewhere Django's own compiler writes the INSERT.

A statement marked ``prepare`` is prepared (SQL ``PREPARE``) the first time a
connection meets it and executed by name afterwards: PostgreSQL then plans it
once per connection, not once per round.
"""

from __future__ import annotations

import hashlib
import json
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import cache

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import BinaryField, DecimalField, JSONField, Model, QuerySet
from django.db.models.sql import InsertQuery, UpdateQuery

from infra.jsons import write_json

# Rows of an INSERT as one JSON parameter on PostgreSQL; off, Django's compiler writes them.
JSON_ROWS = True


@dataclass(frozen=True, slots=True)
class Statement:
    sql: str
    params: tuple
    returns_rows: bool = False
    # Worth preparing: its text is the same every time (only the parameters
    # change) and it runs on every round, so PostgreSQL plans it once per
    # connection instead of every time. Planning is most of what a small
    # statement costs the database.
    prepare: bool = False


def insert(model: type[Model], objs: Sequence[Model], *, returning: str | None = None,
           using: str = DEFAULT_DB_ALIAS) -> list[Statement]:
    """INSERTs of ``objs`` (every concrete field, the primary key too when set).

    Several statements when the backend limits the parameters of one.
    ``returning`` names a field whose values come back, one row per object.
    """
    if not objs:
        return []
    connection = connections[using]
    opts = model._meta
    with_pk = objs[0].pk is not None
    if connection.vendor == "postgresql" and JSON_ROWS:
        return [_insert_json(model, objs, with_pk, returning)]
    fields = [f for f in opts.concrete_fields if not (f.primary_key and not with_pk)]
    returning_fields = [opts.get_field(returning)] if returning else None
    size = max(1, connection.ops.bulk_batch_size(fields, objs) or len(objs))
    statements = []
    for start in range(0, len(objs), size):
        query = InsertQuery(model)
        query.insert_values(fields, objs[start : start + size], raw=False)
        compiler = query.get_compiler(using=using)
        compiler.returning_fields = returning_fields
        for sql, params in compiler.as_sql():
            statements.append(Statement(sql, tuple(params), returns_rows=bool(returning)))
    return statements


@cache
def _json_insert_sql(model: type[Model], with_pk: bool, returning: str | None) -> tuple[str, tuple, tuple]:
    """The INSERT, the (column, attribute, JSON encoder or None) of each field, the stamped fields."""
    opts = model._meta
    fields = tuple(f for f in opts.concrete_fields if with_pk or not f.primary_key)
    columns = ", ".join(f'"{f.column}"' for f in fields)
    sql = (
        f'INSERT INTO "{opts.db_table}" ({columns}) '
        f'SELECT {columns} FROM json_populate_recordset(NULL::"{opts.db_table}", %s)'
    )
    if returning:
        sql += f' RETURNING "{opts.get_field(returning).column}"'
    layout = tuple((f.column, f.attname, _column_text(f)) for f in fields)
    stamped = tuple(f for f in fields if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False))
    return sql, layout, stamped


def _column_text(field):
    """How a value of ``field`` is written into the rows' JSON, when orjson cannot write it as is.

    Decided once per column: a round has some sixty amounts, and handing each
    to orjson's ``default`` callback cost more than writing the rest of the JSON.
    """
    if isinstance(field, DecimalField):
        return str
    if isinstance(field, BinaryField):
        return _bytes_text
    if isinstance(field, JSONField) and field.encoder is not None:
        encoder = field.encoder
        # A JSON column gets the value itself (the server stores it as jsonb),
        # as the field's own encoder would write it.
        return lambda value: json.loads(json.dumps(value, cls=encoder))
    return None


def _bytes_text(value) -> str:
    return "\\x" + bytes(value).hex()


def _insert_json(model, objs, with_pk: bool, returning: str | None) -> Statement:
    sql, layout, stamped = _json_insert_sql(model, with_pk, returning)
    rows = []
    for obj in objs:
        for f in stamped:
            f.pre_save(obj, add=True)  # sets the moment on the object too, as save() does
        # A row about to be inserted holds every column in its __dict__;
        # getattr would look each one up through the class first.
        data = obj.__dict__
        row = {}
        for column, attname, text in layout:
            value = data[attname] if attname in data else getattr(obj, attname)
            if text is not None and value is not None:
                value = text(value)
            row[column] = value
        rows.append(row)
    return Statement(sql, (write_json(rows, default=_json_default),),
                     returns_rows=bool(returning), prepare=True)


def _json_default(value):
    """What ``json`` cannot write, in the text form PostgreSQL reads for the column."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(value).hex()
    raise TypeError(f"{type(value).__name__} is not a column value")


def update(queryset: QuerySet, **values) -> Statement:
    """``queryset.update(**values)`` as a statement (no auto_now: pass the moment)."""
    query = queryset.query.chain(UpdateQuery)
    query.add_update_values(values)
    sql, params = query.get_compiler(queryset.db).as_sql()
    return Statement(sql, tuple(params))


def select(queryset: QuerySet) -> Statement:
    sql, params = queryset.query.get_compiler(queryset.db).as_sql()
    return Statement(sql, tuple(params), returns_rows=True)


def raw(sql: str, params: Sequence = (), *, returns_rows: bool = False, prepare: bool = False) -> Statement:
    return Statement(sql, tuple(params), returns_rows, prepare)


def run(statements: Sequence[Statement], *, using: str = DEFAULT_DB_ALIAS) -> list[list[tuple] | None]:
    """Execute in order; for each statement its rows (``returns_rows``) or None."""
    connection = connections[using]
    results: list[list[tuple] | None] = []
    if not statements:
        return results
    with connection.cursor() as cursor:
        several = _can_send_several(connection, cursor)
        if several and settings.DB_PREPARED_STATEMENTS:
            statements = _as_prepared(connection, cursor, statements)
        if len(statements) > 1 and several:
            params = [p for s in statements for p in s.params]
            cursor.execute("; ".join(s.sql for s in statements), params or None)
            for number, statement in enumerate(statements):
                if number:
                    cursor.nextset()
                results.append(cursor.fetchall() if statement.returns_rows else None)
            return results
        for statement in statements:
            cursor.execute(statement.sql, statement.params or None)
            results.append(cursor.fetchall() if statement.returns_rows else None)
    return results


# The statements each live connection has prepared. A connection is a
# PostgreSQL session; its prepared statements live as long as it does.
_PREPARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PLACEHOLDER = re.compile(r"%s|%%")


def _as_prepared(connection, cursor, statements: Sequence[Statement]) -> list[Statement]:
    """``statements`` with each one marked ``prepare`` as an EXECUTE of its prepared form.

    The first time a connection meets a statement it is prepared (PREPARE
    outlives the transaction, even one rolled back), alone, so that it counts
    as prepared only once PostgreSQL said so.
    """
    if not any(s.prepare for s in statements):
        return list(statements)
    known = _PREPARED.setdefault(connection.connection, set())
    missing = {_name(s.sql): s.sql for s in statements if s.prepare and _name(s.sql) not in known}
    if missing:
        cursor.execute("; ".join(f"PREPARE {name} AS {_numbered(sql)}" for name, sql in missing.items()))
        known.update(missing)
    executes = []
    for s in statements:
        if not s.prepare:
            executes.append(s)
            continue
        args = f"({', '.join(['%s'] * len(s.params))})" if s.params else ""
        executes.append(Statement(f"EXECUTE {_name(s.sql)}{args}", s.params, s.returns_rows))
    return executes


@cache
def _name(sql: str) -> str:
    return "ta_" + hashlib.sha1(sql.encode()).hexdigest()[:20]


def _numbered(sql: str) -> str:
    """``%s`` placeholders as PREPARE wants them: ``$1``, ``$2``, …"""
    numbers = iter(range(1, sql.count("%s") + 1))
    return _PLACEHOLDER.sub(lambda m: "%" if m.group() == "%%" else f"${next(numbers)}", sql)


def _can_send_several(connection, cursor) -> bool:
    if connection.vendor != "postgresql":
        return False
    import psycopg

    # Server-side binding (the extended protocol) takes one statement at a time.
    return isinstance(getattr(cursor, "cursor", None), psycopg.ClientCursor)
