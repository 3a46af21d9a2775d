"""Tables partitioned by a date on PostgreSQL: turning a table into one, and its partitions.

A table partitioned by range of a date column keeps each calendar month of
dates in a table of its own (``<table>_p202611``), and a default partition
(``<table>_default``) for a date whose partition could not be made, so that no
row is ever refused for want of one. Queries that name the date read only its
month's partition; a month can be moved to cheaper storage or archived on its own.

Why a month and not a day: a query that does not name the date (a round
looked up by id, a join from findings) is planned against every partition,
and planning grows with their number: five years of monthly partitions plan
a lookup by id some thirty times faster than thirteen months of daily ones
(docs/SCALING.md, measured on this project's rounds table).

PostgreSQL's rules shape the callers: the primary key and every unique
constraint of a partitioned table must include the partition column, and a
foreign key can only point at a unique key, so one pointing at such a table
names both columns. A partition for a day can no longer be made once the
default partition holds rows of that day.

Everything here is PostgreSQL only and takes a cursor; callers decide when.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta

from psycopg import sql

DEFAULT = "default"


def month_of(day: date) -> date:
    return day.replace(day=1)


def partition_name(table: str, day: date) -> str:
    """The partition of ``table`` that holds ``day``: its month's."""
    return f"{table}_p{day:%Y%m}"


def default_partition_name(table: str) -> str:
    return f"{table}_{DEFAULT}"


def partitions_create_moving(cursor, tables: Iterable[str], column: str, day: date,
                             guards: dict[str, str], create) -> dict[str, int]:
    """The month's partitions made (``create(cursor, tables, day)``) when its rows already lie in
    the default partitions: the rows moved into them, in the caller's transaction; how many of
    each table.

    The tables are locked against everyone (in the order given, the writers' order) for the
    moment it takes. Each default partition's row trigger that refuses a DELETE (``guards``, by
    table) stands aside for the move alone and is back before the transaction ends, so no
    other statement ever sees it off. Constraints are checked at once from here on: a
    table's triggers cannot be switched while checks of it wait for the commit, and the rows
    leave referrers first and come back referred-to first (the order of ``tables``).
    """
    tables = list(tables)
    first = month_of(day)
    after = month_of(first + timedelta(days=31))
    in_month = sql.SQL("{} >= {} AND {} < {}").format(
        sql.Identifier(column), sql.Literal(first.isoformat()), sql.Identifier(column), sql.Literal(after.isoformat()))
    for table in tables:
        cursor.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.Identifier(table)))
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    moved = {}
    for table in tables:
        cursor.execute(sql.SQL("CREATE TEMPORARY TABLE {} ON COMMIT DROP AS SELECT * FROM {} WHERE {}").format(
            sql.Identifier(f"{table}_moving"), sql.Identifier(default_partition_name(table)), in_month))
        moved[table] = cursor.rowcount
    for table in reversed(tables):
        default, guard = sql.Identifier(default_partition_name(table)), sql.Identifier(guards[table])
        cursor.execute(sql.SQL("ALTER TABLE {} DISABLE TRIGGER {}").format(default, guard))
        cursor.execute(sql.SQL("DELETE FROM {} WHERE {}").format(default, in_month))
        cursor.execute(sql.SQL("ALTER TABLE {} ENABLE TRIGGER {}").format(default, guard))
    create(cursor, tables, first)
    for table in tables:
        cursor.execute(sql.SQL("INSERT INTO {} SELECT * FROM {}").format(
            sql.Identifier(table), sql.Identifier(f"{table}_moving")))
    return moved


def _truncate_refused_like_parent(cursor, table: str, partition: str) -> None:
    """PostgreSQL gives a new partition its parent's row triggers, not its statement ones: a
    parent that refuses TRUNCATE (audit migration 0010) passes the refusal on here, so that
    emptying one month's partition directly is refused as emptying the table is."""
    cursor.execute("SELECT 1 FROM pg_trigger WHERE tgname = %s AND NOT tgisinternal", [f"{table}_never_truncated"])
    if cursor.fetchone():
        cursor.execute(sql.SQL(
            "CREATE TRIGGER {} BEFORE TRUNCATE ON {} FOR EACH STATEMENT EXECUTE FUNCTION table_audit_refuse_change()"
        ).format(sql.Identifier(f"{partition}_never_truncated"), sql.Identifier(partition)))


def days_in_default(cursor, table: str, column: str) -> list[date]:
    """The dates whose rows lie in ``table``'s default partition."""
    cursor.execute(sql.SQL("SELECT DISTINCT {} FROM {} ORDER BY 1").format(
        sql.Identifier(column), sql.Identifier(default_partition_name(table))))
    return [day for (day,) in cursor.fetchall()]


def partitions_of(cursor, table: str) -> list[tuple[str, date | None, int]]:
    """``table``'s partitions: (name, first day of its month or None for the default,
    rows as the planner estimates)."""
    cursor.execute(
        "SELECT c.relname, c.reltuples::bigint FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = %s::regclass ORDER BY c.relname", [table])
    found = []
    for name, estimate in cursor.fetchall():
        suffix = name.removeprefix(f"{table}_")
        day = None if suffix == DEFAULT else date(int(suffix[1:5]), int(suffix[5:7]), 1)
        found.append((name, day, max(estimate, 0)))
    return found


def rows_counted(cursor, name: str) -> int:
    """The exact number of rows of the table ``name`` (a partition, attached or not)."""
    cursor.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(name)))
    return cursor.fetchone()[0]


def is_attached(cursor, table: str, name: str) -> bool:
    cursor.execute("SELECT 1 FROM pg_inherits WHERE inhparent = %s::regclass AND inhrelid = to_regclass(%s)",
                   [table, name])
    return cursor.fetchone() is not None


def partition_detach(cursor, table: str, day: date) -> str:
    """Detach ``table``'s partition of ``day``'s month; its name. The table stays, with its
    rows, indexes and own triggers; the row triggers it had from ``table`` go with the detach."""
    name = partition_name(table, day)
    cursor.execute(sql.SQL("ALTER TABLE {} DETACH PARTITION {}").format(sql.Identifier(table), sql.Identifier(name)))
    return name


def partition_attach(cursor, table: str, day: date) -> str:
    """Attach the table of ``day``'s month back to ``table`` as its partition; its name.
    PostgreSQL checks every row against the month, and the default partition for rows of it."""
    first = month_of(day)
    after = month_of(first + timedelta(days=31))
    name = partition_name(table, first)
    cursor.execute(sql.SQL("ALTER TABLE {} ATTACH PARTITION {} FOR VALUES FROM ({}) TO ({})").format(
        sql.Identifier(table), sql.Identifier(name), sql.Literal(first.isoformat()), sql.Literal(after.isoformat())))
    return name


def partition_table_create(cursor, table: str, day: date) -> str:
    """A table shaped as ``table``'s partition of ``day``'s month, not attached (to restore a
    dump into); TRUNCATE refused on it as on the month's partitions."""
    name = partition_name(table, day)
    cursor.execute(sql.SQL(
        "CREATE TABLE {} (LIKE {} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)"
    ).format(sql.Identifier(name), sql.Identifier(table)))
    _truncate_refused_like_parent(cursor, table, name)
    return name


def foreign_keys_between(cursor, name: str, referenced: str) -> list[str]:
    """The foreign keys of the table ``name`` that point at ``referenced``."""
    cursor.execute("SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid = %s::regclass "
                   "AND confrelid = %s::regclass ORDER BY conname", [name, referenced])
    return [constraint for (constraint,) in cursor.fetchall()]


def is_partitioned(cursor, table: str) -> bool:
    cursor.execute("SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass(%s)", [table])
    return cursor.fetchone() is not None


def partition_by_month(cursor, table: str, column: str, *, days: Iterable[date]) -> None:
    """Turn ``table`` into a table partitioned by range of the date ``column``, a partition a
    month (those of ``days`` and of every date in it), rows and all.

    Its columns, defaults, checks, indexes, triggers and foreign keys come
    back as they were, and its primary key ``id`` becomes ``(id, column)``,
    its ids drawn from a sequence of the same name as before. Foreign keys
    that pointed at it are dropped: the caller points them at a key that
    names the day. A unique constraint without ``column`` cannot exist on the
    partitioned table; the models must have changed it first.
    Runs in the caller's transaction (a migration's).
    """
    old = f"{table}_unpartitioned"
    cursor.execute(
        "SELECT conrelid::regclass::text, conname FROM pg_constraint "
        "WHERE confrelid = %s::regclass AND contype = 'f'", [table])
    for referrer, name in cursor.fetchall():
        cursor.execute(sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
            sql.Identifier(referrer), sql.Identifier(name)))
    cursor.execute(
        "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = %s::regclass AND contype IN ('p', 'u', 'f') ORDER BY conname", [table])
    constraints = cursor.fetchall()
    cursor.execute(
        "SELECT indexdef FROM pg_indexes i WHERE i.schemaname = current_schema() AND i.tablename = %s "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = to_regclass(i.indexname))",
        [table])
    indexes = [definition for (definition,) in cursor.fetchall()]
    cursor.execute("SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = %s::regclass "
                   "AND NOT tgisinternal", [table])
    triggers = [definition for (definition,) in cursor.fetchall()]
    cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
    (sequence,) = cursor.fetchone()
    cursor.execute(sql.SQL("SELECT last_value, is_called FROM {}").format(sql.SQL(sequence)))
    last_value, is_called = cursor.fetchone()
    for name, kind, definition in constraints:
        if kind == "u" and column not in definition:
            raise ValueError(f"{table}: unique constraint {name} ({definition}) lacks {column}")

    cursor.execute(sql.SQL("ALTER TABLE {} RENAME TO {}").format(sql.Identifier(table), sql.Identifier(old)))
    cursor.execute(sql.SQL(
        "CREATE TABLE {} (LIKE {} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE "
        "INCLUDING COMMENTS) PARTITION BY RANGE ({})"
    ).format(sql.Identifier(table), sql.Identifier(old), sql.Identifier(column)))
    cursor.execute(sql.SQL("CREATE TABLE {} PARTITION OF {} DEFAULT").format(
        sql.Identifier(default_partition_name(table)), sql.Identifier(table)))
    cursor.execute(sql.SQL("SELECT DISTINCT {} FROM {}").format(sql.Identifier(column), sql.Identifier(old)))
    for month in sorted({month_of(d) for d in (*days, *(d for (d,) in cursor.fetchall()))}):
        cursor.execute(_create_statement(table, month))
    cursor.execute(sql.SQL("INSERT INTO {} SELECT * FROM {}").format(sql.Identifier(table), sql.Identifier(old)))
    cursor.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(old)))

    # The old table's sequence went with it; ids go on from where it stood.
    cursor.execute(sql.SQL("CREATE SEQUENCE {} OWNED BY {}.id").format(
        sql.SQL(sequence), sql.Identifier(table)))
    cursor.execute("SELECT setval(%s, %s, %s)", [sequence, last_value, is_called])
    cursor.execute(sql.SQL("ALTER TABLE {} ALTER COLUMN id SET DEFAULT nextval({})").format(
        sql.Identifier(table), sql.Literal(sequence)))
    for name, kind, definition in constraints:
        if kind == "p":
            definition = sql.SQL("PRIMARY KEY (id, {})").format(sql.Identifier(column))
        else:
            definition = sql.SQL(definition)
        cursor.execute(sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} ").format(
            sql.Identifier(table), sql.Identifier(name)) + definition)
    for definition in (*indexes, *triggers):
        cursor.execute(definition)


def _create_statement(table: str, day: date) -> sql.Composed:
    first = month_of(day)
    after = month_of(first + timedelta(days=31))
    return sql.SQL("CREATE TABLE {} PARTITION OF {} FOR VALUES FROM ({}) TO ({})").format(
        sql.Identifier(partition_name(table, first)), sql.Identifier(table),
        sql.Literal(first.isoformat()), sql.Literal(after.isoformat()))


def _exists(cursor, name: str) -> bool:
    cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [name])
    return cursor.fetchone()[0]

