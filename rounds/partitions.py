"""Rounds and seats partitioned by gaming day (PostgreSQL): making the partitions, and what there is.

Migration 0009 turned both tables into tables partitioned by range of gaming
day, a partition for each month of gaming days (``infra.partitioning`` says
why a month), each table with a default partition so that no round is ever
refused for want of one. Partitions are made only by the schedule: a daily
task (``rounds.partitions_ahead``, in django-celery-beat's schedule) makes
every month of the books' window (``rounds.window``) and the days ahead, and
the migrations make the first. A post never makes one: a table's clock
cannot add tables, indexes and locks to the database (a round of every month
from 2000 to 2099 would have made 2,400 partitions, and every query planned
over all of them). A round of a month without a partition, which only a
round outside the window can be when the schedule runs, goes to the default
partition; when the schedule reaches that month, its partitions are made with
those rows moved in (``infra.partitioning.partitions_create_moving``), so a
table's clock cannot keep a month out of its partition.

A month can be archived (``rounds.services.archives``): its partitions are
detached, and until they are attached again its rows are refused, by the
default partitions themselves (migration 0017), and no partition is made for
it here; ``MonthArchived`` is that refusal as the service raises it.

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

from infra import partitioning
from infra.gaming_day import gaming_day_of
from rounds.models import ArchivedMonth, Round, Seat
from rounds.window import window_opens
from trail.protections import PARTITIONED
from trail.services import SYSTEM, audit_record

logger = logging.getLogger(__name__)

# Made together, a month at a time: a round's seats always have their partition.
TABLES = (Round._meta.db_table, Seat._meta.db_table)
COLUMN = "gaming_day"
DUPLICATE_TABLE = "42P07"  # PostgreSQL's SQLSTATE for a table that exists already
MAKER = "table_audit_round_partitions_make"  # rounds migration 0029
ARCHIVED_MONTH_REFUSED = "rounds_archived_month_refused"  # the default partitions' refusal (migration 0017)

class MonthArchived(ValueError):
    """A row of an archived month refused: the month's rounds are detached (``partitions archive``)."""

    def __init__(self, month: str):
        self.month = month  # YYYY-MM
        super().__init__(f"gaming day {month} is archived: its rounds are detached from the service, "
                         f"and a round of it is refused until the month is attached again")


def refuse_if_archived(error: Exception) -> None:
    """Raise ``MonthArchived`` (from ``error``) if ``error`` is the default partitions' refusal of an
    archived month's row."""
    diagnosis = getattr(error.__cause__, "diag", None)
    if diagnosis is not None and diagnosis.constraint_name == ARCHIVED_MONTH_REFUSED:
        raise MonthArchived(diagnosis.message_detail) from error


def refuse_if_month_archived(day: date) -> None:
    """Raise ``MonthArchived`` if ``day``'s month is archived (a resubmission of one of its rounds,
    whose key stays while the round is away)."""
    if ArchivedMonth.objects.filter(month=partitioning.month_of(day)).exists():
        raise MonthArchived(f"{day:%Y-%m}")


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
    months = {partitioning.month_of(day) for day in days}
    # An archived month gets no partition: its rows go to the default partition, which refuses them.
    months -= set(ArchivedMonth.objects.filter(month__in=months).values_list("month", flat=True))
    for month in sorted(months):
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                if month_partitions_make(cursor, month):
                    result.made.append(month)
        except ProgrammingError as error:
            if getattr(error.__cause__, "sqlstate", None) != DUPLICATE_TABLE:
                raise
            # Another process made it between our look and our CREATE (the
            # table lock in the maker makes this all but impossible).
        except IntegrityError:
            # Only a check the default partition fails raises here: rows of that month went
            # there while no partition existed (a round held apart, dated ahead of the schedule).
            _made_moving(month, result)
    if result.made:
        logger.info("round partitions made for %s", ", ".join(f"{m:%Y-%m}" for m in result.made))
    return result


def month_partitions_make(cursor, month: date) -> bool:
    """Rounds' and seats' partitions of ``month``, where there are none (False if both were
    there), made by the owner's function (rounds migration 0029): the application's role owns
    no table and may make no other (``trail.privileges``)."""
    cursor.execute(f"SELECT {MAKER}(%s)", [month])
    return cursor.fetchone()[0]


def _made_moving(month: date, result: Made) -> None:
    """The month's partitions made with its rows moved out of the default partitions, and the
    move told to the audit chain; refused (and logged) if even that fails."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            moved = partitioning.partitions_create_moving(
                cursor, TABLES, COLUMN, month, guards={table: PARTITIONED[table] for table in TABLES},
                create=lambda cursor, _tables, day: month_partitions_make(cursor, day))
            audit_record(actor=SYSTEM, action="partition.rows_moved", object_type="partition",
                         object_id=f"{month:%Y-%m}", object_repr=f"{month:%Y-%m}",
                         after={"month": f"{month:%Y-%m}", "from": "default", "rows": moved})
    except Exception:  # noqa: BLE001 - the schedule goes on with the other months
        # Moving rows passes a trigger, which only the tables' owner may: the application's
        # role is refused here, and `manage.py partitions --ahead N` run as the owner moves them.
        logger.exception("rounds of %s lie in the default partition and could not be moved: that "
                         "month's partition is not made until `manage.py partitions --ahead N` runs as "
                         "the database's owner (docs/SCALING.md)", f"{month:%Y-%m}")
        result.refused.append(month)
        return
    logger.warning("round partitions made for %s, its rows moved out of the default partition: %s",
                   f"{month:%Y-%m}", moved)
    result.made.append(month)


def partitions_ahead(*, today: date | None = None, ahead: int | None = None) -> Made:
    """Partitions for every month of the books' window up to today's gaming day, and to ``ahead``
    days after it (the daily task, the one maker of partitions)."""
    today = today or gaming_day_of(timezone.now())
    ahead = settings.ROUND_PARTITIONS_AHEAD_DAYS if ahead is None else ahead
    month = min(window_opens(), partitioning.month_of(today - timedelta(days=1)))
    months = []
    while month <= today:
        months.append(month)
        month = partitioning.month_of(month + timedelta(days=31))
    return partitions_make([*months, *(today + timedelta(days=n) for n in range(ahead + 1))])


@dataclass(frozen=True, slots=True)
class Partition:
    table: str
    name: str
    month: date | None  # its first day; None: the default partition
    rows: int  # counted (count(*)): the planner's estimate says 0 until ANALYZE has run


def partitions_list() -> list[Partition]:
    """Every partition of rounds and of seats, its rows counted: reads every partition, so it is
    for an operator's look, not for a request."""
    if not partitioned():
        return []
    with connection.cursor() as cursor:
        return [
            Partition(table, name, month, partitioning.rows_counted(cursor, name))
            for table in TABLES
            for name, month, _ in partitioning.partitions_of(cursor, table)
        ]


def months_archived() -> list[ArchivedMonth]:
    """The months detached from rounds and seats, whose rows are refused until they are attached."""
    if not partitioned():
        return []
    return list(ArchivedMonth.objects.all())


def days_in_default(table: str = TABLES[0]) -> list[date]:
    """Days with rows of ``table`` (rounds unless told) in its default partition: each needs a
    look (docs/SCALING.md)."""
    if not partitioned():
        return []
    with connection.cursor() as cursor:
        return partitioning.days_in_default(cursor, table, COLUMN)
