"""Rounds' and seats' partitions by gaming day: list them, make the coming days' now, or archive a month."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import ProgrammingError

from rounds import partitions
from rounds.services.archives import ArchiveError, month_archive, month_attach


INSUFFICIENT_PRIVILEGE = "42501"


def _month(text: str) -> date:
    try:
        year, month = text.split("-")
        return date(int(year), int(month), 1)
    except ValueError:
        raise CommandError(f"--month {text!r}: a month as YYYY-MM") from None


class Command(BaseCommand):
    help = ("List the partitions of rounds and seats by gaming day (PostgreSQL), make them ahead, "
            "archive a month (detach and dump it) or attach an archived month again.")

    def add_arguments(self, parser):
        parser.add_argument("action", nargs="?", choices=["list", "archive", "attach"], default="list")
        parser.add_argument("--ahead", type=int, metavar="DAYS",
                            help="make partitions from yesterday to DAYS ahead of today's gaming day")
        parser.add_argument("--month", metavar="YYYY-MM", help="the month to archive or attach")
        parser.add_argument("--out", metavar="DIR", type=Path,
                            help="archive: where to write the dump (DIR/YYYY-MM/)")
        parser.add_argument("--from", dest="source", metavar="DIR", type=Path,
                            help="attach: restore from this dump (DIR/YYYY-MM) if the detached tables are gone")

    def handle(self, *args, action="list", ahead=None, month=None, out=None, source=None, **options):
        if not partitions.partitioned():
            self.stdout.write("Not partitioned: rounds are partitioned by gaming day on PostgreSQL only.")
            return
        try:
            if action == "archive":
                self._archive(month, out)
            elif action == "attach":
                self._attach(month, source)
        except ProgrammingError as error:
            if getattr(error.__cause__, "sqlstate", None) != INSUFFICIENT_PRIVILEGE:
                raise
            raise CommandError(f"{action} detaches or attaches tables, which only the database's owner may: "
                               f"run it with the owner's DATABASE_URL ({error})") from None
        if ahead is not None:
            made = partitions.partitions_ahead(ahead=ahead)
            self.stdout.write(f"made: {', '.join(f'{m:%Y-%m}' for m in made.made) or 'none'}")
            if made.refused:
                self.stderr.write(f"refused (the default partition holds rows of): "
                                  f"{', '.join(f'{m:%Y-%m}' for m in made.refused)}")
        self._list()

    def _archive(self, month, out) -> None:
        if month is None or out is None:
            raise CommandError("archive needs --month YYYY-MM and --out DIR")
        try:
            dumped = month_archive(month=_month(month), out=out)
        except ArchiveError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"archived {dumped.month:%Y-%m}: detached, dumped to {dumped.directory}")
        for table, rows in dumped.rows.items():
            self.stdout.write(f"  {table}: {rows:,} rows, sha256 {dumped.sha256[table]}")
        self.stdout.write(f"  manifest sha256 {dumped.manifest_sha256}")

    def _attach(self, month, source) -> None:
        if month is None:
            raise CommandError("attach needs --month YYYY-MM")
        try:
            rows = month_attach(month=_month(month), source=source)
        except ArchiveError as error:
            raise CommandError(str(error)) from None
        counted = ", ".join(f"{table} {n:,}" for table, n in rows.items())
        self.stdout.write(f"attached {month}: {counted} rows")

    def _list(self) -> None:
        listed = partitions.partitions_list()
        for table in partitions.TABLES:
            mine = [p for p in listed if p.table == table]
            months = [p.month for p in mine if p.month is not None]
            span = f"{min(months):%Y-%m} to {max(months):%Y-%m}" if months else "none"
            default = sum(p.rows for p in mine if p.month is None)
            self.stdout.write(f"{table}: {len(months)} monthly partitions ({span}) and a default; "
                              f"{sum(p.rows for p in mine):,} rows (counted), {default:,} in the default")
            stray = partitions.days_in_default(table)
            if stray:
                self.stderr.write(f"{table}: rows in the default partition for: {', '.join(map(str, stray))}")
        for archived in partitions.months_archived():
            dumped = (f"{archived.rounds:,} rounds, {archived.seats:,} seats dumped to {archived.dumped_to}"
                      if archived.manifest_sha256 else "not dumped yet: run archive again")
            self.stdout.write(f"archived (detached) {archived}: {dumped}")
