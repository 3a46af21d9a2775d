"""The days' totals the workspace's pages read, and their findings still to work: recounted from the
seats and the findings, or written again from them."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Max, Min

from infra.gaming_day import gaming_day_argument
from rounds.models import Round
from rounds.services.day_totals import day_totals_differences, day_totals_rewritten
from rounds.services.work_tally import work_tally_differences
from trail.services import Actor


class Command(BaseCommand):
    help = ("Check the day totals (rounds.DayTotal) against what their seats count and the findings still "
            "to work (rounds.WorkTally) against the findings, or write both again (--rebuild); every stored "
            "day unless --day / --to narrow it.")

    def add_arguments(self, parser):
        parser.add_argument("--day", type=gaming_day_argument, help="the first gaming day (YYYY-MM-DD)")
        parser.add_argument("--to", type=gaming_day_argument, help="the last gaming day (default: --day, or the last stored)")
        parser.add_argument("--rebuild", action="store_true", help="write them again from the seats")

    def handle(self, *args, day=None, to=None, rebuild=False, **options):
        stored = Round.objects.aggregate(first=Min("gaming_day"), last=Max("gaming_day"))
        if stored["first"] is None:
            self.stdout.write("No rounds are stored: no totals to check.")
            return
        day_from = day or stored["first"]
        day_to = to or day or stored["last"]
        if day_to < day_from:
            raise CommandError(f"--to {day_to} is before --day {day_from}")
        if rebuild:
            rows = day_totals_rewritten(day_from=day_from, day_to=day_to, actor=Actor.of_command("day_totals"))
            self.stdout.write(f"{day_from}…{day_to}: {rows} total(s) written again from the seats, "
                              "the findings still to work from the findings")
            return
        differences = [*day_totals_differences(day_from=day_from, day_to=day_to),
                       *work_tally_differences(day_from=day_from, day_to=day_to)]
        for line in differences:
            self.stdout.write(line)
        if differences:
            raise CommandError(f"{len(differences)} total(s) differ from their seats or findings: "
                               "manage.py day_totals --rebuild writes them again")
        self.stdout.write(f"{day_from}…{day_to}: every total is what its seats and findings count")
