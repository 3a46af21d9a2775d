"""The CSV exports' common part: columns, how a value is written, who may download, and the
one CSV writer every CSV of the service goes through.

Each export is a list of columns (``Column``: its header, what it reads, how it is
written), kept once by the app that owns the model (``rounds.exports``,
``trail.exports``, ``audit.exports``), and a generator of its rows from any
queryset of its model: the API's exports give it a period's, the admin's
"Download CSV" the list as filtered, searched and ordered
(``trail.admin_exports``). Every moment is written in the casino's time zone
with its UTC offset (ISO 8601, ``2026-11-30T23:15:02.123456+01:00``), and every
amount has its currency beside it.

Each export streams: rows come from a server-side cursor in chunks, so a
million rows cost the memory of one chunk. The writer makes every text cell
inert for spreadsheets (``spreadsheet_text``), whichever column it is in: a
column added later, or text that did not look as if a table could send it,
needs no one to remember.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from functools import partial
from itertools import chain, islice
from typing import Any

from django.db.models import Model, QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone

from infra import replicas

CHUNK = 2000
# A spreadsheet runs a cell that starts with one of these as a formula.
_FORMULA_LEAD = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[-+]?[0-9]+(\.[0-9]+)?")


@dataclass(frozen=True, slots=True)
class Period:
    first_day: date
    last_day: date  # inclusive, gaming days


def spreadsheet_text(value) -> str:
    """Text made inert for spreadsheets: a cell a spreadsheet would run as a formula gets a
    leading apostrophe, which it shows as text. A plain signed number (a loss, "-25.00") is
    a number to a spreadsheet, never a formula, and stays one."""
    text = "" if value is None else str(value)
    if text.startswith(_FORMULA_LEAD) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def _cells(row: Iterable) -> list:
    # Numbers (a negative amount) are written by csv as they are: only text can be a formula.
    return [spreadsheet_text(cell) if isinstance(cell, str) else cell for cell in row]


# ---- how a value is written ---------------------------------------------------


def moment(value: datetime | None, zone: tzinfo | None = None) -> str:
    """A moment in the casino's time zone (``TIME_ZONE``) with its UTC offset, ISO 8601, always
    to the microsecond so that a column has one form: ``2026-11-30T23:15:02.123456+01:00``.

    ``zone`` is that time zone looked up once by a caller that writes many (``formed``):
    looked up for each row, it would cost more than writing the moment (docs/SCALING.md)."""
    return "" if value is None else timezone.localtime(value, zone).isoformat(timespec="microseconds")


def json_text(value) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True)


@dataclass(frozen=True, slots=True)
class Column:
    name: str  # the header
    field: str  # what ``values_list`` reads of the export's model
    form: Callable[[Any], Any] | None = None  # how the value is written, when not as it is


def plain(*names: str) -> list[Column]:
    return [Column(name, name) for name in names]


def header(columns: list[Column]) -> list[str]:
    return [column.name for column in columns]


def formed(columns: list[Column], rows: Iterable[tuple], *, extra: int = 0) -> Iterator[list]:
    """``rows`` as written; each row's last ``extra`` values (what the query needed, not the
    file) are dropped. Only the columns with a form are touched: the rest pass as read."""
    zone = timezone.get_current_timezone()
    forms = [(i, partial(moment, zone=zone) if column.form is moment else column.form)
             for i, column in enumerate(columns) if column.form is not None]
    for values in rows:
        row = list(values)
        for i, form in forms:
            row[i] = form(row[i])
        if extra:
            del row[-extra:]
        yield row


def rows_of(columns: list[Column], queryset: QuerySet) -> Iterator[list]:
    """The header, then a row for each of ``queryset``'s rows, read a chunk at a time."""
    yield header(columns)
    read = queryset.values_list(*[column.field for column in columns])
    yield from formed(columns, read.iterator(chunk_size=CHUNK))


# ---- what may be exported, and by whom ------------------------------------------


@dataclass(frozen=True, slots=True)
class Export:
    name: str  # the file's name and the ``export.downloaded`` event's object id
    model: type[Model]
    permission: str  # what a person needs to download it, from the API or the admin
    rows: Callable[[QuerySet], Iterator[list]]


def export_allowed(user, export: Export) -> bool:
    """Whether ``user`` may download ``export``: casino staff holding its permission, never a table."""
    if user is None or not getattr(user, "is_authenticated", False) or getattr(user, "is_table", False):
        return False
    return user.has_perm(export.permission)


# ---- the writer ---------------------------------------------------------------


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_lines(rows: Iterable[list]) -> Iterator[str]:
    """Each row as a line of CSV, every text cell made inert for spreadsheets."""
    writer = csv.writer(_Echo())
    for row in rows:
        yield writer.writerow(_cells(row))


def csv_text(rows: Iterable[list]) -> str:
    """``csv_lines`` joined, for a CSV small enough to answer at once."""
    return "".join(csv_lines(rows))


def csv_download(rows_at: Callable[[str], Iterable[list]], filename: str) -> StreamingHttpResponse:
    """``rows_at(alias)`` streamed as a CSV attachment, read where a replica may serve them.

    The query is begun here (the header and first row read), so that a replica failing
    at the start is read again on the primary, not a broken stream. Whoever calls this
    writes the download's audit event first, on the primary.
    """
    lines = replicas.read(lambda alias: _begun(csv_lines(rows_at(alias))))
    response = StreamingHttpResponse(lines, content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _begun(lines: Iterator[str]) -> Iterator[str]:
    """``lines`` with its header and first row already read: the query has begun."""
    first = list(islice(lines, 2))
    return chain(first, lines)
