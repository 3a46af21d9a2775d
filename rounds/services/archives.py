"""Archiving a month of rounds: detached from the tables, dumped to files an operator keeps, attached again.

Rows of what happened are never deleted (audit migration 0010); detaching a
month's partitions is the one documented way for them to leave the tables the
service reads, and every step is an event in the audit chain:

1. detach (``partition.detached``): seats first, then rounds, in one short
   transaction holding both tables. The order is PostgreSQL's: a seat points
   at its round by (id, gaming day), and a partition of rounds cannot leave
   while any seat still points into it. The seats partition, once detached,
   keeps that key as its own, pointing at all of rounds, so it is moved to
   point at the detached rounds partition instead: the archived pair still
   holds each other to their word. The month is recorded as archived in the
   same transaction: from its commit, a row of it is refused (migration 0017).
2. dump (``partition.dumped``): each detached table copied to a CSV file
   (``COPY``, ordered by id, with a header), beside a manifest of the month,
   each file's rows and SHA-256; the event carries the hashes. Outside the
   detach's transaction, so that ingest waits for the detach only, never for a
   month being written out; nothing writes the detached tables meanwhile (a
   trigger refuses it), so the dump is the month as it was detached.
3. attach (``partition.attached``): rounds first, then seats, back under the
   tables, from the detached tables still present or from a dump restored
   into new ones (its hashes checked first), and the rows counted against
   the dump's. PostgreSQL checks every row against the month as it attaches.

A detached table is left in the database: dropping it once its dump is safe
is the operator's choice (``DROP TABLE``), never the service's.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from django.db import connection, transaction
from django.utils import timezone
from psycopg import sql

from infra import partitioning
from infra.gaming_day import gaming_day_of
from rounds import partitions
from rounds.models import ArchivedMonth
from trail.services import SYSTEM, Actor, audit_record

from .day_totals import day_totals_forget, day_totals_rebuild
from .work_tally import work_tally_forget, work_tally_rebuild

ROUNDS, SEATS = partitions.TABLES
MANIFEST = "manifest.json"
CHUNK = 1 << 20


class ArchiveError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Dumped:
    month: date
    directory: Path
    rows: dict[str, int]  # by table
    sha256: dict[str, str]  # each file's, by table
    manifest_sha256: str


def month_archive(*, month: date, out: Path, actor: Actor = SYSTEM, today: date | None = None) -> Dumped:
    """Detach ``month``'s rounds and seats (unless they are already) and dump them under ``out``.

    Run again for a month already detached, it dumps it again: a dump that
    failed half-way is retried by running the same command.
    """
    month = partitioning.month_of(month)
    if not ArchivedMonth.objects.filter(month=month).exists():
        month_detach(month=month, actor=actor, today=today)
    return month_dump(month=month, out=out, actor=actor)


def month_detach(*, month: date, actor: Actor = SYSTEM, today: date | None = None) -> ArchivedMonth:
    """Step 1: ``month``'s partitions of seats, then of rounds, detached; the month archived."""
    _partitioned()
    month = partitioning.month_of(month)
    today = today or gaming_day_of(timezone.now())
    # Yesterday's gaming day still takes rounds (the partitions made ahead start there).
    if month >= partitioning.month_of(today - timedelta(days=1)):
        raise ArchiveError(f"{month:%Y-%m} is not over: only a past month, one that ended before "
                           "yesterday's gaming day, can be archived")
    with transaction.atomic(), connection.cursor() as cursor:
        # The order writers take them in (rounds, then seats), so that an archive never deadlocks a round.
        cursor.execute(sql.SQL("LOCK TABLE {}, {} IN ACCESS EXCLUSIVE MODE").format(
            sql.Identifier(ROUNDS), sql.Identifier(SEATS)))
        for table in (ROUNDS, SEATS):
            if not partitioning.is_attached(cursor, table, partitioning.partition_name(table, month)):
                raise ArchiveError(f"{table} has no partition of {month:%Y-%m} to archive")
        seats = partitioning.partition_detach(cursor, SEATS, month)
        for key in partitioning.foreign_keys_between(cursor, seats, ROUNDS):
            cursor.execute(sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                sql.Identifier(seats), sql.Identifier(key)))
        rounds = partitioning.partition_detach(cursor, ROUNDS, month)
        cursor.execute(sql.SQL(
            "ALTER TABLE {} ADD CONSTRAINT {} FOREIGN KEY (round_id, gaming_day) REFERENCES {} (id, gaming_day)"
        ).format(sql.Identifier(seats), sql.Identifier(_archived_key(seats)), sql.Identifier(rounds)))
        for name in (rounds, seats):
            # The row triggers of 0010 left with the detach: an archived month is not changed at all.
            cursor.execute(sql.SQL(
                "CREATE TRIGGER {} BEFORE INSERT OR UPDATE OR DELETE ON {} "
                "FOR EACH ROW EXECUTE FUNCTION table_audit_refuse_change()"
            ).format(sql.Identifier(_archived_trigger(name)), sql.Identifier(name)))
        archived = ArchivedMonth.objects.create(month=month)
        audit_record(actor=actor, action="partition.detached", obj=archived,
                     after={"month": f"{month:%Y-%m}", "tables": [rounds, seats]})
        # What the month's rounds added to the pages goes with them (after the audit head, as
        # every write of a day's totals: infra.locks), and comes back with them.
        day_totals_forget(day_from=month, day_to=_month_end(month))
        work_tally_forget(day_from=month, day_to=_month_end(month))
    return archived


def month_dump(*, month: date, out: Path, actor: Actor = SYSTEM) -> Dumped:
    """Step 2: the detached tables of ``month`` written to ``out/YYYY-MM/``, with a manifest."""
    _partitioned()
    month = partitioning.month_of(month)
    archived = _archived(month)
    directory = Path(out) / f"{month:%Y-%m}"
    directory.mkdir(parents=True, exist_ok=True)
    rows, hashes, files = {}, {}, []
    with transaction.atomic(), connection.cursor() as cursor:
        for table in (ROUNDS, SEATS):
            name = partitioning.partition_name(table, month)
            if not _present(cursor, name):
                raise ArchiveError(f"{name} is no longer in the database: nothing to dump")
            rows[table] = partitioning.rows_counted(cursor, name)
            hashes[table] = _copy_out(cursor, name, directory / f"{name}.csv")
            files.append({"table": table, "partition": name, "file": f"{name}.csv",
                          "rows": rows[table], "sha256": hashes[table]})
        manifest = json.dumps({"month": f"{month:%Y-%m}", "detached_at": archived.detached_at.isoformat(),
                               "format": "PostgreSQL COPY, CSV with a header, ordered by id",
                               "files": files}, indent=2).encode()
        (directory / MANIFEST).write_bytes(manifest)
        manifest_sha256 = hashlib.sha256(manifest).hexdigest()
        archived.rounds, archived.seats = rows[ROUNDS], rows[SEATS]
        archived.manifest_sha256, archived.dumped_to = manifest_sha256, str(directory.resolve())
        archived.save(update_fields=["rounds", "seats", "manifest_sha256", "dumped_to"])
        audit_record(actor=actor, action="partition.dumped", obj=archived, after={
            "month": f"{month:%Y-%m}", "directory": archived.dumped_to, "manifest_sha256": manifest_sha256,
            "files": files,
        })
    return Dumped(month, directory, rows, hashes, manifest_sha256)


def month_attach(*, month: date, source: Path | None = None, actor: Actor = SYSTEM) -> dict[str, int]:
    """Step 3: ``month``'s rounds, then seats, attached again; the rows attached, by table.

    From the detached tables if they are still in the database, else from the
    dump in ``source`` (the directory ``month_dump`` wrote, ``.../YYYY-MM``),
    restored into new tables once its hashes match the manifest, and the
    manifest the hash the chain recorded.
    """
    _partitioned()
    month = partitioning.month_of(month)
    archived = _archived(month)
    restored = None
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql.SQL("LOCK TABLE {}, {} IN SHARE UPDATE EXCLUSIVE MODE").format(
            sql.Identifier(ROUNDS), sql.Identifier(SEATS)))
        names = {table: partitioning.partition_name(table, month) for table in (ROUNDS, SEATS)}
        missing = [table for table, name in names.items() if not _present(cursor, name)]
        if missing:
            if source is None:
                raise ArchiveError(f"{', '.join(names[t] for t in missing)} no longer in the database: "
                                   "attach from its dump (--from DIR)")
            restored = _restore(cursor, archived, Path(source), missing)
        for name in names.values():
            cursor.execute(sql.SQL("DROP TRIGGER IF EXISTS {} ON {}").format(
                sql.Identifier(_archived_trigger(name)), sql.Identifier(name)))
        partitioning.partition_attach(cursor, ROUNDS, month)
        cursor.execute(sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(
            sql.Identifier(names[SEATS]), sql.Identifier(_archived_key(names[SEATS]))))
        partitioning.partition_attach(cursor, SEATS, month)
        rows = {table: partitioning.rows_counted(cursor, name) for table, name in names.items()}
        dumped = {ROUNDS: archived.rounds, SEATS: archived.seats}
        if archived.rounds is not None and rows != dumped:
            raise ArchiveError(f"{month:%Y-%m} holds {rows} rows, its dump {dumped}: not attached")
        object_type, object_id = archived._meta.label_lower, str(archived.pk)
        archived.delete()  # its rows are read again, and taken again
        audit_record(actor=actor, action="partition.attached", object_type=object_type, object_id=object_id,
                     object_repr=f"{month:%Y-%m}", after={
                         "month": f"{month:%Y-%m}", "rows": rows, "restored_from": str(source) if restored else "",
                         "manifest_sha256": archived.manifest_sha256})
        day_totals_rebuild(day_from=month, day_to=_month_end(month))
        work_tally_rebuild(day_from=month, day_to=_month_end(month))
    return rows


def _month_end(month: date) -> date:
    return partitioning.month_of(month + timedelta(days=31)) - timedelta(days=1)


def _restore(cursor, archived: ArchivedMonth, source: Path, tables: list[str]) -> dict:
    """The dump in ``source`` checked and copied into new tables for ``tables``; its manifest."""
    manifest_bytes = (source / MANIFEST).read_bytes()
    if archived.manifest_sha256 and hashlib.sha256(manifest_bytes).hexdigest() != archived.manifest_sha256:
        raise ArchiveError(f"{source / MANIFEST} is not the manifest dumped for {archived}: its SHA-256 differs")
    manifest = json.loads(manifest_bytes)
    by_table = {entry["table"]: entry for entry in manifest["files"]}
    for table in tables:
        entry = by_table[table]
        path = source / entry["file"]
        if _sha256_of(path) != entry["sha256"]:
            raise ArchiveError(f"{path}: its SHA-256 differs from the manifest's")
        name = partitioning.partition_table_create(cursor, table, archived.month)
        _copy_in(cursor, name, path)
        if partitioning.rows_counted(cursor, name) != entry["rows"]:
            raise ArchiveError(f"{path}: not the {entry['rows']} rows of the manifest")
    return manifest


def _copy_out(cursor, name: str, path: Path) -> str:
    digest = hashlib.sha256()
    statement = sql.SQL("COPY (SELECT * FROM {} ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER true)").format(
        sql.Identifier(name))
    with open(path, "wb") as file, cursor.cursor.copy(statement) as copy:
        for data in copy:
            digest.update(data)
            file.write(data)
    return digest.hexdigest()


def _copy_in(cursor, name: str, path: Path) -> None:
    with open(path, "rb") as file:
        header = file.readline().decode().strip()
        columns = sql.SQL(", ").join(sql.Identifier(column) for column in header.split(","))
        statement = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT csv)").format(sql.Identifier(name), columns)
        with cursor.cursor.copy(statement) as copy:
            while data := file.read(CHUNK):
                copy.write(data)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while data := file.read(CHUNK):
            digest.update(data)
    return digest.hexdigest()


def _archived(month: date) -> ArchivedMonth:
    archived = ArchivedMonth.objects.filter(month=month).first()
    if archived is None:
        raise ArchiveError(f"{month:%Y-%m} is not archived")
    return archived


def _partitioned() -> None:
    if not partitions.partitioned():
        raise ArchiveError("rounds are not partitioned (PostgreSQL only): there are no months to archive")


def _present(cursor, name: str) -> bool:
    cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [name])
    return cursor.fetchone()[0]


def _archived_key(seats: str) -> str:
    return f"{seats}_archived_round_fk"


def _archived_trigger(name: str) -> str:
    return f"{name}_archived"
