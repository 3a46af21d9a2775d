"""Rounds' and seats' partitions by gaming day: list them, or make the coming days' now."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from rounds import partitions


class Command(BaseCommand):
    help = "List the partitions of rounds and seats by gaming day (PostgreSQL), or make them ahead."

    def add_arguments(self, parser):
        parser.add_argument("--ahead", type=int, metavar="DAYS",
                            help="make partitions from yesterday to DAYS ahead of today's gaming day")

    def handle(self, *args, ahead=None, **options):
        if not partitions.partitioned():
            self.stdout.write("Not partitioned: rounds are partitioned by gaming day on PostgreSQL only.")
            return
        if ahead is not None:
            made = partitions.partitions_ahead(ahead=ahead)
            self.stdout.write(f"made: {', '.join(f'{m:%Y-%m}' for m in made.made) or 'none'}")
            if made.refused:
                self.stderr.write(f"refused (the default partition holds rows of): "
                                  f"{', '.join(f'{m:%Y-%m}' for m in made.refused)}")
        listed = partitions.partitions_list()
        for table in partitions.TABLES:
            mine = [p for p in listed if p.table == table]
            months = [p.month for p in mine if p.month is not None]
            rows = sum(p.rows for p in mine)
            span = f"{min(months):%Y-%m} to {max(months):%Y-%m}" if months else "none"
            self.stdout.write(f"{table}: {len(months)} monthly partitions ({span}) and a default; "
                              f"about {rows:,} rows")
        stray = partitions.days_in_default()
        if stray:
            self.stderr.write(f"rounds in the default partition for: {', '.join(map(str, stray))}")
        else:
            self.stdout.write("the default partition holds no rounds")
