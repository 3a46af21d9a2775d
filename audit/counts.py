"""The cage's count of a table's gaming day: entered or imported, corrected with why, never changed.

``count_enter`` keeps one count (``audit.TableCount``) under its table's row
lock, so two corrections of one day cannot both replace the same count; the
first count of a day needs no note, a correction needs one. ``counts_import``
reads the same figures from CSV (one line a table's day) and keeps all of
them or none. Each is an event in the trail. ``current_counts`` is what the
report and the table's page compare with the books: each table's latest
count of each day, summed over a range.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from audit.models import TableCount
from infra import locks
from infra.gaming_day import gaming_day_of
from infra.validation import CENT, ErrorList, FieldErrors, money_check
from rounds.models import Table, TableConfigVersion
from trail.services import Actor, audit_record

AMOUNTS: tuple[str, ...] = ("drop", "fills", "credits", "opening_inventory", "closing_inventory")
CSV_COLUMNS: tuple[str, ...] = ("table", "gaming_day", *AMOUNTS, "note")
# The most lines one import takes: a month of a large floor.
IMPORT_MOST_LINES = 20_000


class CountError(FieldErrors):
    pass


def table_currency(table: Table, day: date) -> str:
    """The currency the table dealt in on ``day``: its configuration's version in force then."""
    versions = TableConfigVersion.objects.filter(config_id=table.config_id).order_by("-effective_from", "-version")
    on_the_day = [v for v in versions if timezone.localdate(v.effective_from) <= day]
    chosen = on_the_day[0] if on_the_day else versions.last()
    if chosen is None:
        raise CountError(f"table {table.code}'s configuration has no version yet", field="table")
    return chosen.currency


def count_enter(*, table_code: str, gaming_day: date | str, amounts: Mapping[str, object], user, note: str = "",
                source: str = TableCount.Source.ENTERED, request_id: str = "") -> TableCount:
    """Keep the count of ``table_code``'s ``gaming_day``; a second count of that day replaces the first,
    and needs a ``note`` saying why."""
    errors = ErrorList()
    table = Table.objects.filter(code=str(table_code).strip()).first()
    if table is None:
        errors.add("table", f"no table {table_code!r}")
    day = _day(errors, gaming_day)
    checked = {name: money_check(errors, name, amounts.get(name), CENT, positive=False) for name in AMOUNTS}
    if errors:
        raise CountError(errors)
    note = (note or "").strip()
    actor = Actor.of_user(user)
    with transaction.atomic():
        locks.rows_locked(Table.objects.filter(pk=table.pk), [table.pk], no_key=True).get()
        last = TableCount.objects.filter(table=table, gaming_day=day, replaced_by__isnull=True).first()
        if last is not None and not note:
            raise CountError(f"{table.code} has a count of {day} already: a correction needs a note saying why",
                             field="note")
        count = TableCount.objects.create(
            table=table, gaming_day=day, currency=table_currency(table, day), **checked, source=source,
            note=note, replaces=last, entered_by=user, entered_by_name=actor.name)
        audit_record(actor=actor, action="count.corrected" if last else "count.entered", obj=count,
                     before=_figures(last) if last else None, after={**_figures(count), "note": note},
                     request_id=request_id)
    return count


def counts_import(*, text: str, user, request_id: str = "") -> list[TableCount]:
    """Every line of ``text`` (CSV with ``CSV_COLUMNS``' header) kept as a count, or none of them."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in CSV_COLUMNS if c != "note" and c not in (reader.fieldnames or [])]
    if missing:
        raise CountError(f"the header lacks {', '.join(missing)}: it must name {', '.join(CSV_COLUMNS)}",
                         field="file")
    lines = list(reader)
    if not lines:
        raise CountError("the file holds no count", field="file")
    if len(lines) > IMPORT_MOST_LINES:
        raise CountError(f"at most {IMPORT_MOST_LINES:,} lines at once", field="file")
    kept, errors = [], ErrorList()
    with transaction.atomic():
        for number, line in enumerate(lines, start=2):
            try:
                with transaction.atomic():
                    kept.append(count_enter(
                        table_code=line.get("table") or "", gaming_day=line.get("gaming_day") or "",
                        amounts={name: line.get(name) for name in AMOUNTS}, user=user,
                        note=line.get("note") or "", source=TableCount.Source.IMPORTED, request_id=request_id))
            except FieldErrors as refused:
                for field, problems in refused.errors.items():
                    for problem in problems:
                        errors.add(f"line {number}: {field}", problem)
        if errors:
            transaction.set_rollback(True)
            raise CountError(errors)
    return kept


@dataclass(slots=True)
class CountSums:
    """A table's counts over a range in one currency, and the days counted."""

    days: int = 0
    drop: Decimal = Decimal(0)
    fills: Decimal = Decimal(0)
    credits: Decimal = Decimal(0)
    win: Decimal = Decimal(0)


def current_counts(*, day_from: date, day_to: date) -> dict[tuple[str, str], CountSums]:
    """Each table's latest count of each day of the range, summed by (table code, currency)."""
    sums: dict[tuple[str, str], CountSums] = {}
    counts = (TableCount.objects.filter(gaming_day__range=(day_from, day_to), replaced_by__isnull=True)
              .select_related("table").order_by("table__code", "gaming_day"))
    for count in counts:
        one = sums.setdefault((count.table.code, count.currency), CountSums())
        one.days += 1
        one.drop += count.drop
        one.fills += count.fills
        one.credits += count.credits
        one.win += count.count_win
    return sums


def last_counted_day() -> date | None:
    return TableCount.objects.aggregate(last=Max("gaming_day"))["last"]


def _day(errors: ErrorList, value: date | str) -> date | None:
    if isinstance(value, date):
        day = value
    else:
        try:
            day = date.fromisoformat(str(value).strip())
        except ValueError:
            errors.add("gaming_day", f"{value!r} is not a day: write it as 2026-12-04")
            return None
    if day > gaming_day_of(timezone.now()):
        errors.add("gaming_day", f"{day} has not begun: a count follows the day it counts")
        return None
    return day


def _figures(count: TableCount) -> dict[str, str]:
    return {"table": count.table.code, "gaming_day": count.gaming_day.isoformat(), "currency": count.currency,
            **{name: str(getattr(count, name)) for name in AMOUNTS}, "count_win": str(count.count_win)}
