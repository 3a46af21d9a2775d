"""Rounds and seats partitioned by gaming day (PostgreSQL): making the partitions, and what there is.

Migration 0009 turned both tables into tables partitioned by range of gaming
day, a partition for each month of gaming days (``casino.partitioning`` says
why a month), each table with a default partition so that no round is ever
refused for want of one. Partitions are made ahead by a daily task
(``rounds.partitions_ahead``, in django-celery-beat's schedule), and on the
spot by ingest when a round of a month without one arrives (a table uploading
old rounds): a month's rows belong in its own partition, and once the default
partition holds rows of a month, that month's partition can no longer be made.

On SQLite (the development default) nothing is partitioned and everything here
does nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.conf import settings
from django.db import IntegrityError, ProgrammingError, connection, transaction
from django.utils import timezone

from casino import partitioning
from casino.gaming_day import gaming_day_of
from rounds.models import Round, Seat

logger = logging.getLogger(__name__)

# Made together, a month at a time: a round's seats always have their partition.
TABLES = (Round._meta.db_table, Seat._meta.db_table)
COLUMN = "gaming_day"
DUPLICATE_TABLE = "42P07"  # PostgreSQL's SQLSTATE for a table that exists already

# The days among %s (a date[]) whose month has no partition of rounds yet: one statement of ingest's look.
MISSING_SQL = (
    "SELECT day::date FROM unnest(%s::date[]) AS day "
    f"WHERE to_regclass('{TABLES[0]}_p' || to_char(day, 'YYYYMM')) IS NULL"
)


@dataclass(slots=True)
class Made:
    made: list[date] = field(default_factory=list)  # months (their first day) whose partitions were made now
    refused: list[date] = field(default_factory=list)  # the default partition holds rows of these months


def partitioned() -> bool:
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        return partitioning.is_partitioned(cursor, TABLES[0])


def partitions_make(days: Iterable[date]) -> Made:
    """Partitions of rounds and seats for the month of each of ``days`` that has none, a month
    per transaction."""
    result = Made()
    if not partitioned():
        return result
    for month in sorted({partitioning.month_of(day) for day in days}):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                if partitioning.partitions_create(cursor, TABLES, month):
                    result.made.append(month)
        except ProgrammingError as error:
            if getattr(error.__cause__, "sqlstate", None) != DUPLICATE_TABLE:
                raise
            # Another process made it between our look and our CREATE (the
            # table lock in partitions_create makes this all but impossible).
        except IntegrityError:
            # Only a check the default partition fails raises here: rows of
            # that month went there while no partition existed.
            logger.error("rounds of %s lie in the default partition: that month's partition cannot "
                         "be made until they are moved (docs/SCALING.md)", f"{month:%Y-%m}")
            result.refused.append(month)
    if result.made:
        logger.info("round partitions made for %s", ", ".join(f"{m:%Y-%m}" for m in result.made))
    return result


def partitions_ahead(*, today: date | None = None, ahead: int | None = None) -> Made:
    """Partitions for yesterday's gaming day to ``ahead`` days after today's (the daily task)."""
    today = today or gaming_day_of(timezone.now())
    ahead = settings.ROUND_PARTITIONS_AHEAD_DAYS if ahead is None else ahead
    return partitions_make(today + timedelta(days=n) for n in range(-1, ahead + 1))


@dataclass(frozen=True, slots=True)
class Partition:
    table: str
    name: str
    month: date | None  # its first day; None: the default partition
    rows: int  # the planner's estimate (exact counts would read every partition)


def partitions_list() -> list[Partition]:
    if not partitioned():
        return []
    with connection.cursor() as cursor:
        return [
            Partition(table, name, month, rows)
            for table in TABLES
            for name, month, rows in partitioning.partitions_of(cursor, table)
        ]


def days_in_default() -> list[date]:
    """Days with rounds in the default partition: each needs a look (docs/SCALING.md)."""
    if not partitioned():
        return []
    with connection.cursor() as cursor:
        return partitioning.days_in_default(cursor, TABLES[0], COLUMN)
