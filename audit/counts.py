"""The cage's count of a table's gaming day: entered or imported, corrected with why, never changed.

``count_enter`` keeps one count (``audit.TableCount``) under its table's row
lock, so two corrections of one day cannot both replace the same count; the
first count of a day needs no note, a correction needs one. ``counts_import``
reads the same figures from CSV (one line a table's day), checks every line
before it writes one, and keeps all of them or none, their tables locked
together. The currency is the one the table dealt in that day. Each is an event in the trail. ``current_counts`` is what the
report and the table's page compare with the books: each table's latest
count of each day, summed over a range.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit.models import TableCount
from infra import locks
from infra.gaming_day import gaming_day_of, gaming_day_window
from infra.validation import CENT, ErrorList, FieldErrors, money_check
from rounds.models import Round, Table, TableConfigVersion
from rounds.window import window_opens
from trail.services import Actor, AuditEntry, audit_record_many

AMOUNTS: tuple[str, ...] = ("drop", "fills", "credits", "opening_inventory", "closing_inventory")
CSV_COLUMNS: tuple[str, ...] = ("table", "gaming_day", *AMOUNTS, "note")
# The most lines one import takes: a month of a large floor.
IMPORT_MOST_LINES = 20_000
# A day as ISO writes it in full, ASCII digits: Python also reads "20261129" and other scripts' digits.
ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class CountError(FieldErrors):
    pass


def table_currency(table: Table, day: date) -> str:
    """The currency ``table`` dealt in on ``day``: its rounds' of that day; without a round, the
    configuration version in force at the day's end, of the configuration the table has now."""
    dealt = set(Round.objects.filter(table=table, gaming_day=day).order_by()
                .values_list("config_version__currency", flat=True).distinct())
    if len(dealt) > 1:
        raise CountError(f"table {table.code} dealt in {', '.join(sorted(dealt))} on {day}: a count is of "
                         "one currency", field="table")
    if dealt:
        return dealt.pop()
    _, ends = gaming_day_window(day, time_zone=settings.GAMING_DAY_TIME_ZONE, cutoff_hour=settings.GAMING_DAY_CUTOFF_HOUR)
    versions = TableConfigVersion.objects.filter(config_id=table.config_id).order_by("-effective_from", "-version")
    chosen = versions.filter(effective_from__lt=ends).first() or versions.last()
    if chosen is None:
        raise CountError(f"table {table.code}'s configuration has no version yet", field="table")
    return chosen.currency


@dataclass(frozen=True, slots=True)
class CountLine:
    """A count as typed or read, checked: what ``_keep`` writes."""

    table: Table
    day: date
    amounts: dict[str, Decimal]
    note: str


def count_enter(*, table_code: str, gaming_day: date | str, amounts: Mapping[str, object], user, note: str = "",
                source: str = TableCount.Source.ENTERED, request_id: str = "") -> TableCount:
    """Keep the count of ``table_code``'s ``gaming_day``; a second count of that day replaces the first,
    and needs a ``note`` saying why."""
    return _keep([_checked(table_code, gaming_day, amounts, note)], user=user, source=source,
                 request_id=request_id)[0]


def counts_import(*, text: str, user, request_id: str = "") -> list[TableCount]:
    """Every line of ``text`` (CSV with ``CSV_COLUMNS``' header) kept as a count, or none of them."""
    if "\x00" in text:
        raise CountError(f"line {text.count(chr(10), 0, text.index(chr(0))) + 1}: a NUL character; the file is "
                         "not text", field="file")
    reader = csv.DictReader(io.StringIO(text), strict=True)
    try:
        missing = [c for c in CSV_COLUMNS if c != "note" and c not in (reader.fieldnames or [])]
        if missing:
            raise CountError(f"the header lacks {', '.join(missing)}: it must name {', '.join(CSV_COLUMNS)}",
                             field="file")
        rows = list(reader)
    except csv.Error as unreadable:  # a field past the reader's limit, a NUL, a quote left open
        raise CountError(f"line {reader.line_num}: not CSV the import can read ({unreadable})", field="file") from None
    if not rows:
        raise CountError("the file holds no count", field="file")
    if len(rows) > IMPORT_MOST_LINES:
        raise CountError(f"at most {IMPORT_MOST_LINES:,} lines at once", field="file")
    lines, errors = [], ErrorList()
    for number, row in enumerate(rows, start=2):
        if row.get(None):  # fields past the header's: a comma inside an amount ("1,000") shifts the rest
            errors.add(f"line {number}: file", f"{len(row[None])} field(s) more than the header names")
            continue
        try:
            lines.append(_checked(row.get("table") or "", row.get("gaming_day") or "",
                                  {name: row.get(name) for name in AMOUNTS}, row.get("note") or ""))
        except FieldErrors as refused:
            for field, problems in refused.errors.items():
                for problem in problems:
                    errors.add(f"line {number}: {field}", problem)
    if errors:
        raise CountError(errors)
    return _keep(lines, user=user, source=TableCount.Source.IMPORTED, request_id=request_id)


def _checked(table_code: str, gaming_day: date | str, amounts: Mapping[str, object], note: str) -> CountLine:
    errors = ErrorList()
    table = Table.objects.filter(code=str(table_code).strip()).first()
    if table is None:
        errors.add("table", f"no table {table_code!r}")
    day = _day(errors, gaming_day)
    checked = {name: money_check(errors, name, amounts.get(name), CENT, positive=False) for name in AMOUNTS}
    if errors:
        raise CountError(errors)
    return CountLine(table, day, checked, (note or "").strip())


def _keep(lines: list[CountLine], *, user, source: str, request_id: str) -> list[TableCount]:
    """The counts written in one transaction: their tables locked first, together (``infra.locks``),
    so that no two corrections replace one count; the trail's events last."""
    actor = Actor.of_user(user)
    kept, entries = [], []
    with transaction.atomic():
        pks = sorted({line.table.pk for line in lines})
        list(locks.rows_locked(Table.objects.filter(pk__in=pks), pks, no_key=True))
        for line in lines:
            last = TableCount.objects.filter(table=line.table, gaming_day=line.day, replaced_by__isnull=True).first()
            if last is not None and not line.note:
                raise CountError(f"{line.table.code} has a count of {line.day} already: a correction needs a note "
                                 "saying why", field="note")
            count = TableCount.objects.create(
                table=line.table, gaming_day=line.day, currency=table_currency(line.table, line.day),
                **line.amounts, source=source, note=line.note, replaces=last, entered_by=user,
                entered_by_name=actor.name)
            kept.append(count)
            entries.append(AuditEntry(actor=actor, action="count.corrected" if last else "count.entered", obj=count,
                                      before=count_figures(last) if last else None,
                                      after={**count_figures(count), "note": line.note}, request_id=request_id))
        audit_record_many(entries=entries)
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


def _day(errors: ErrorList, value: date | str) -> date | None:
    if isinstance(value, date):
        day = value
    else:
        text = str(value).strip()
        try:
            day = date.fromisoformat(text) if ISO_DAY.fullmatch(text) else None
        except ValueError:
            day = None
        if day is None:
            errors.add("gaming_day", f"{value!r} is not a day: write it as 2026-12-04")
            return None
    if day > gaming_day_of(timezone.now()):
        errors.add("gaming_day", f"{day} has not begun: a count follows the day it counts")
        return None
    if day < (opens := window_opens()):
        errors.add("gaming_day", f"{day} is before {opens:%Y-%m}, the earliest month the books hold open")
        return None
    return day


def count_figures(count: TableCount) -> dict[str, str]:
    return {"table": count.table.code, "gaming_day": count.gaming_day.isoformat(), "currency": count.currency,
            **{name: str(getattr(count, name)) for name in AMOUNTS}, "count_win": str(count.count_win)}
