"""Rows for the CSV exports: rounds (one row a seat), findings, the audit log and the
reconciliation reports, and the one CSV writer every CSV of the service goes through.

Each export is a list of columns (``Column``: its header, what it reads, how it is
written), kept here once, and a generator of its rows from any queryset of its
model: the API's exports give it a period's, the admin's "Download CSV" the list as
filtered, searched and ordered (``casino.admin_exports``). Every moment is written
in the casino's time zone with its UTC offset (ISO 8601,
``2026-11-30T23:15:02.123456+01:00``), and every amount has its currency beside it.

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
from datetime import date, datetime, time, timedelta, tzinfo
from functools import partial
from itertools import chain, islice
from typing import Any

from django.db import DEFAULT_DB_ALIAS
from django.db.models import Model, QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone

from audit.models import ProtectionFinding, ReconciliationReport
from infra import replicas
from rounds.engine.rules import BETS
from rounds.models import Finding, Round, Seat
from trail.models import AuditEvent

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

    ``zone`` is that time zone looked up once by a caller that writes many (``_formed``):
    looked up for each row, it costs half a second every 100,000 rows."""
    return "" if value is None else timezone.localtime(value, zone).isoformat(timespec="microseconds")


def _json(value) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True)


@dataclass(frozen=True, slots=True)
class Column:
    name: str  # the header
    field: str  # what ``values_list`` reads of the export's model
    form: Callable[[Any], Any] | None = None  # how the value is written, when not as it is


def _plain(*names: str) -> list[Column]:
    return [Column(name, name) for name in names]


def _header(columns: list[Column]) -> list[str]:
    return [column.name for column in columns]


def _formed(columns: list[Column], rows: Iterable[tuple], *, extra: int = 0) -> Iterator[list]:
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


# ---- the exports' columns, one list each ----------------------------------------

# A row a seat, read of the seat; the round's amounts are in its configuration's currency.
ROUND_COLUMNS: list[Column] = [
    Column("table", "round__table__code"), Column("round", "round__round_id"),
    Column("dealt_at", "round__dealt_at", moment), Column("gaming_day", "round__gaming_day"),
    Column("dealer", "round__dealer"), Column("status", "round__status"), Column("void", "round__void"),
    Column("config", "round__config_version__config__name"),
    Column("config_version", "round__config_version__version"),
    *_plain("seat", "player", "hole", "hand", "decision"),
    Column("currency", "round__config_version__currency"),
    *_plain(*BETS), *_plain(*[f"settled_{bet}" for bet in BETS]), *_plain(*[f"paid_{bet}" for bet in BETS]),
]

FINDING_COLUMNS: list[Column] = [
    Column("id", "id"), Column("created_at", "created_at", moment),
    Column("table", "round__table__code"), Column("round", "round__round_id"),
    Column("dealt_at", "round__dealt_at", moment), Column("gaming_day", "round__gaming_day"),
    Column("dealer", "round__dealer"), *_plain("code", "informational", "seat", "bet"),
    Column("currency", "round__config_version__currency"), *_plain("expected", "claimed", "detail", "state"),
    Column("state_changed_at", "state_changed_at", moment), Column("state_changed_by", "state_changed_by_name"),
    Column("state_note", "state_note"),
]

AUDIT_COLUMNS: list[Column] = [
    Column("seq", "seq"), Column("at", "at", moment),
    *_plain("actor_kind", "actor_id", "actor_name", "action", "object_type", "object_id", "object_repr"),
    Column("before", "before", _json), Column("after", "after", _json),
    *_plain("request_id", "prev_hash", "hash"),
]

# A game-protection finding; its evidence is the JSON its page renders (figures are the test's own).
PROTECTION_COLUMNS: list[Column] = [
    Column("id", "id"), Column("created_at", "created_at", moment),
    *_plain("code", "player", "dealer", "companion", "table", "currency", "day_from", "day_to", "figure",
            "threshold", "detail", "state"),
    Column("state_changed_at", "state_changed_at", moment), Column("state_changed_by", "state_changed_by_name"),
    Column("state_note", "state_note"), Column("evidence", "evidence", _json),
]

# A report's headline: its figures are the report's own CSV (/api/v1/reports/<id>.csv).
REPORT_COLUMNS: list[Column] = [
    *_plain("id", "day_from", "day_to", "version", "status", "rounds", "flags", "drift", "chain_ok",
            "requested_by"),
    Column("created_at", "created_at", moment), Column("finished_at", "finished_at", moment),
]


# ---- rows of any queryset of the export's model --------------------------------


def round_rows_of(rounds: QuerySet[Round]) -> Iterator[list]:
    """A row for each seat of ``rounds``, the rounds in the queryset's order, each round's
    seats by number. The rounds are read a chunk at a time, then their seats (with the
    chunk's gaming days too: on PostgreSQL only those days' partitions are read)."""
    yield _header(ROUND_COLUMNS)
    fields = [column.field for column in ROUND_COLUMNS]
    # About CHUNK seats a chunk: a round has three or four seats taken on average.
    per_chunk = max(1, CHUNK // 4)
    listed = rounds.values_list("pk", "gaming_day").iterator(chunk_size=CHUNK)
    while chunk := list(islice(listed, per_chunk)):
        seats: dict[int, list[tuple]] = {}
        read = (
            Seat.objects.using(rounds.db)
            .filter(round_id__in=[pk for pk, _ in chunk], gaming_day__in={day for _, day in chunk})
            .order_by("round_id", "seat")
            .values_list(*fields, "round_id")
        )
        for seat in read:
            seats.setdefault(seat[-1], []).append(seat)
        yield from _formed(ROUND_COLUMNS, chain.from_iterable(seats.get(pk, ()) for pk, _ in chunk), extra=1)


def finding_rows_of(findings: QuerySet[Finding]) -> Iterator[list]:
    yield _header(FINDING_COLUMNS)
    read = findings.values_list(*[column.field for column in FINDING_COLUMNS])
    yield from _formed(FINDING_COLUMNS, read.iterator(chunk_size=CHUNK))


def audit_rows_of(events: QuerySet[AuditEvent]) -> Iterator[list]:
    yield _header(AUDIT_COLUMNS)
    read = events.values_list(*[column.field for column in AUDIT_COLUMNS])
    yield from _formed(AUDIT_COLUMNS, read.iterator(chunk_size=CHUNK))


def protection_rows_of(findings: QuerySet[ProtectionFinding]) -> Iterator[list]:
    yield _header(PROTECTION_COLUMNS)
    read = findings.values_list(*[column.field for column in PROTECTION_COLUMNS])
    yield from _formed(PROTECTION_COLUMNS, read.iterator(chunk_size=CHUNK))


def report_rows_of(reports: QuerySet[ReconciliationReport]) -> Iterator[list]:
    yield _header(REPORT_COLUMNS)
    read = reports.values_list(*[column.field for column in REPORT_COLUMNS])
    yield from _formed(REPORT_COLUMNS, read.iterator(chunk_size=CHUNK))


# ---- the API's: a period of gaming days -----------------------------------------


def round_rows(period: Period, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[list]:
    rounds = Round.objects.using(using).filter(gaming_day__range=(period.first_day, period.last_day))
    return round_rows_of(rounds.order_by("gaming_day", "pk"))


def finding_rows(period: Period, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[list]:
    findings = Finding.objects.using(using).filter(round__gaming_day__range=(period.first_day, period.last_day))
    return finding_rows_of(findings.order_by("id"))


def audit_rows(period: Period, *, using: str = DEFAULT_DB_ALIAS) -> Iterator[list]:
    """Audit events whose moment falls in the period's calendar days, casino time."""
    # Bounds rather than ``at__date``: a moment's date is computed per row, which no index serves.
    zone = timezone.get_current_timezone()
    start = datetime.combine(period.first_day, time(), tzinfo=zone)
    end = datetime.combine(period.last_day + timedelta(days=1), time(), tzinfo=zone)
    events = AuditEvent.objects.using(using).filter(at__gte=start, at__lt=end)
    return audit_rows_of(events.order_by("seq"))


# ---- what may be exported, and by whom ------------------------------------------


@dataclass(frozen=True, slots=True)
class Export:
    name: str  # the file's name and the ``export.downloaded`` event's object id
    model: type[Model]
    permission: str  # what a person needs to download it, from the API or the admin
    rows: Callable[[QuerySet], Iterator[list]]


EXPORTS = {export.name: export for export in (
    Export("rounds", Round, "rounds.view_round", round_rows_of),
    Export("findings", Finding, "rounds.view_finding", finding_rows_of),
    Export("audit-log", AuditEvent, "trail.view_auditevent", audit_rows_of),
    Export("reports", ReconciliationReport, "audit.view_reconciliationreport", report_rows_of),
    Export("protection-findings", ProtectionFinding, "audit.view_protectionfinding", protection_rows_of),
)}


def export_of(model: type[Model]) -> Export:
    return next(export for export in EXPORTS.values() if export.model is model)


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
