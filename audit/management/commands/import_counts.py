"""Import the cage's counts from a CSV file (``audit.counts``): all of its lines, or none.

The counts are entered in a person's name, so the person proves it is he who
runs the command: his password, typed at the prompt or, for a script, given on
standard input (``--password-stdin``). Naming someone is not enough.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit.counts import CSV_COLUMNS, CountError, counts_import


class Command(BaseCommand):
    stealth_options = ("stdin",)  # what --password-stdin reads, where a caller gives one (as createsuperuser's)
    help = ("Keep the counts of a CSV file (header: " + ",".join(CSV_COLUMNS) + "), entered as --user, "
            "who proves it with his password.")

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--user", required=True, help="the person the counts are entered as: you")
        parser.add_argument("--password-stdin", action="store_true",
                            help="read the person's password from standard input instead of a prompt")

    def handle(self, *args, file: Path, user: str, password_stdin: bool, **options):
        person = get_user_model().objects.filter(username=user, is_active=True).first()
        if person is None or not person.has_perm("audit.add_tablecount"):
            raise CommandError(f"{user!r} is no active user who may enter counts (audit.add_tablecount)")
        if password_stdin:
            password = (options.get("stdin") or sys.stdin).readline().rstrip("\r\n")
        else:
            password = getpass.getpass(f"{user}'s password: ")
        if not person.has_usable_password() or not person.check_password(password):
            raise CommandError(f"that is not {user}'s password: nothing was kept")
        try:
            kept = counts_import(text=file.read_text(encoding="utf-8-sig"), user=person)
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{file}: {exc}") from None
        except CountError as refused:
            raise CommandError("nothing was kept:\n" + "\n".join(
                f"  {field}: {problem}" for field, problems in refused.errors.items() for problem in problems)) from None
        self.stdout.write(f"{len(kept)} count(s) kept")
