"""Rows for the CSV exports: rounds (one row a seat), findings, and the audit log,
and the one CSV writer every CSV of the service goes through.

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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date

from django.db import DEFAULT_DB_ALIAS

from audit.models import AuditEvent
from rounds.engine.rules import BETS
from rounds.models import Finding, Seat

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


ROUND_COLUMNS = (
    ["table", "round", "dealt_at", "gaming_day", "dealer", "status", "void", "config", "config_version",
     "seat", "player", "hole", "hand", "decision", *BETS]
    + [f"settled_{bet}" for bet in BETS]
    + [f"paid_{bet}" for bet in BETS]
)


def round_rows(period: Period, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[list]:
    yield ROUND_COLUMNS
    seats = (
        # The seats' own gaming day too: on PostgreSQL only those days' partitions are read.
        Seat.objects.using(using).filter(round__gaming_day__range=(period.first_day, period.last_day),
                            gaming_day__range=(period.first_day, period.last_day))
        .order_by("gaming_day", "round_id", "seat")
        .values_list(
            "round__table__code", "round__round_id", "round__dealt_at", "round__gaming_day",
            "round__dealer", "round__status", "round__void", "round__config_version__config__name",
            "round__config_version__version", "seat", "player", "hole", "hand", "decision",
            *BETS, *[f"settled_{b}" for b in BETS], *[f"paid_{b}" for b in BETS],
        )
    )
    for row in seats.iterator(chunk_size=CHUNK):
        row = list(row)
        row[2] = row[2].isoformat()
        yield row


FINDING_COLUMNS = [
    "id", "table", "round", "dealt_at", "gaming_day", "dealer", "code", "informational", "seat",
    "bet", "expected", "claimed", "detail", "state", "state_changed_at", "state_changed_by", "state_note",
]


def finding_rows(period: Period, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[list]:
    yield FINDING_COLUMNS
    findings = (
        Finding.objects.using(using).filter(round__gaming_day__range=(period.first_day, period.last_day))
        .order_by("id")
        .values_list(
            "id", "round__table__code", "round__round_id", "round__dealt_at", "round__gaming_day",
            "round__dealer", "code", "informational", "seat", "bet", "expected", "claimed", "detail",
            "state", "state_changed_at", "state_changed_by_name", "state_note",
        )
    )
    for row in findings.iterator(chunk_size=CHUNK):
        row = list(row)
        row[3] = row[3].isoformat()
        row[14] = row[14].isoformat() if row[14] else ""
        yield row


AUDIT_COLUMNS = [
    "seq", "at", "actor_kind", "actor_id", "actor_name", "action", "object_type", "object_id",
    "object_repr", "before", "after", "request_id", "prev_hash", "hash",
]


def audit_rows(period: Period, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[list]:
    """Audit events whose moment falls in the period's calendar days, casino time."""
    yield AUDIT_COLUMNS
    events = (
        AuditEvent.objects.using(using).filter(at__date__range=(period.first_day, period.last_day))
        .order_by("seq")
        .values_list(*AUDIT_COLUMNS)
    )
    for row in events.iterator(chunk_size=CHUNK):
        row = list(row)
        row[1] = row[1].isoformat()
        for json_column in (9, 10):
            row[json_column] = "" if row[json_column] is None else json.dumps(row[json_column], sort_keys=True)
        yield row


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
