"""Import the cage's counts from a CSV file (``audit.counts``): all of its lines, or none."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit.counts import CSV_COLUMNS, CountError, counts_import


class Command(BaseCommand):
    help = "Keep the counts of a CSV file (header: " + ",".join(CSV_COLUMNS) + "), entered as --user."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--user", required=True, help="the person the counts are entered as")

    def handle(self, *args, file: Path, user: str, **options):
        person = get_user_model().objects.filter(username=user, is_active=True).first()
        if person is None or not person.has_perm("audit.add_tablecount"):
            raise CommandError(f"{user!r} is no active user who may enter counts (audit.add_tablecount)")
        try:
            kept = counts_import(text=file.read_text(encoding="utf-8-sig"), user=person)
        except OSError as exc:
            raise CommandError(f"{file}: {exc}") from None
        except CountError as refused:
            raise CommandError("nothing was kept:\n" + "\n".join(
                f"  {field}: {problem}" for field, problems in refused.errors.items() for problem in problems)) from None
        self.stdout.write(f"{len(kept)} count(s) kept")
