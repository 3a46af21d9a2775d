"""Import the cage's counts from a CSV file (``audit.counts``): all of its lines, or none.

The counts are entered in a person's name, so the person proves it is he who
runs the command: his password, typed at the prompt or, for a script, given on
standard input (``--password-stdin``), and, from a person who must prove a
second factor (``infra.second_factor``: a supervisor's role asks it), his
authenticator app's code, prompted for or read as the next line. Naming
someone is not enough.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit.counts import CSV_COLUMNS, CountError, counts_import
from infra.second_factor import code_matched, must_prove


class Command(BaseCommand):
    stealth_options = ("stdin",)  # what --password-stdin reads, where a caller gives one (as createsuperuser's)
    help = ("Keep the counts of a CSV file (header: " + ",".join(CSV_COLUMNS) + "), entered as --user, "
            "who proves it with his password (and his authenticator's code, where he must prove one).")

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--user", required=True, help="the person the counts are entered as: you")
        parser.add_argument("--password-stdin", action="store_true",
                            help="read the person's password from standard input instead of a prompt, and "
                                 "his authenticator's code from the next line where he must prove one")

    def handle(self, *args, file: Path, user: str, password_stdin: bool, **options):
        person = get_user_model().objects.filter(username=user, is_active=True).first()
        if person is None or not person.has_perm("audit.add_tablecount"):
            raise CommandError(f"{user!r} is no active user who may enter counts (audit.add_tablecount)")
        stdin = options.get("stdin") or sys.stdin
        if password_stdin:
            password = stdin.readline().rstrip("\r\n")
        else:
            password = getpass.getpass(f"{user}'s password: ")
        if not person.has_usable_password() or not person.check_password(password):
            raise CommandError(f"that is not {user}'s password: nothing was kept")
        if must_prove(person):
            given = stdin.readline().strip() if password_stdin else input(f"{user}'s authenticator code: ").strip()
            if code_matched(person, given) is None:
                raise CommandError(f"that is not the code {user}'s authenticator app shows now (one works once): "
                                   "nothing was kept")
        try:
            kept = counts_import(text=file.read_text(encoding="utf-8-sig"), user=person)
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{file}: {exc}") from None
        except CountError as refused:
            raise CommandError("nothing was kept:\n" + "\n".join(
                f"  {field}: {problem}" for field, problems in refused.errors.items() for problem in problems)) from None
        self.stdout.write(f"{len(kept)} count(s) kept")
