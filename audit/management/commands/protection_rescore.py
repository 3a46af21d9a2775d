"""``python manage.py protection_rescore --day YYYY-MM-DD [--to YYYY-MM-DD]``: score past days again.

Seats scored before audit 0026 carry no dealer card's verdicts, so the
hole-carding test takes no steps from them. This scores each day's such
seats again (``audit.protection.services.day_rescore``), oldest day first,
and raises each day's findings. The leak tests kept after the first day
are read again by the next night (docs/PROTECTION.md). Run it outside the
nightly run.
"""

from __future__ import annotations

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from audit.protection.services import day_rescore

from infra.gaming_day import gaming_day_argument


class Command(BaseCommand):
    help = "Score again the seats of past gaming days scored before they carried a dealer card's verdicts."

    def add_arguments(self, parser):
        parser.add_argument("--day", required=True, help="the first gaming day, YYYY-MM-DD")
        parser.add_argument("--to", help="the last day of a range, YYYY-MM-DD (default: --day)")

    def handle(self, *args, **options):
        day_from = gaming_day_argument(options["day"])
        day_to = gaming_day_argument(options["to"]) if options["to"] else day_from
        if day_to < day_from:
            raise CommandError("--to is before --day")
        day = day_from
        while day <= day_to:
            again, protected = day_rescore(day=day)
            raised = ", ".join(f"{n} {code}" for code, n in sorted(protected.raised.items())) or "no new findings"
            self.stdout.write(f"{day}: {again} seats scored again, {protected.seats_scored} scored in all on "
                              f"{protected.tables} tables; {raised}")
            day += timedelta(days=1)
