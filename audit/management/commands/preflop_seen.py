"""``python manage.py preflop_seen``: every starting hand's equity with one dealer card known.

The table the preflop test of hole-carding reads (``game.protection.seen_table``
says what it holds and why its sampling error costs the test power, never its
validity). ``--write`` ships it as ``game/protection/data/preflop_seen_equity.npz``;
the same ``--deals`` and ``--seed`` give the same file.
"""

from __future__ import annotations

import time
from multiprocessing import Pool
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from game.protection import seen_table


class Command(BaseCommand):
    help = "Compute every starting hand's equity with one dealer card known (the preflop hole-carding table)."
    requires_system_checks: list[str] = []  # nothing here touches the database

    def add_arguments(self, parser):
        parser.add_argument("--deals", type=int, default=seen_table.DEALS, help="sampled deals a class")
        parser.add_argument("--seed", type=int, default=seen_table.SEED, help="the sample's seed")
        parser.add_argument("--processes", type=int, default=1, help="worker processes")
        parser.add_argument("--write", action="store_true", help=f"write {seen_table.DATA.name}")
        parser.add_argument("--output", default=str(seen_table.DATA), help="where --write writes")

    def handle(self, *args, **options):
        if options["deals"] < 100:
            raise CommandError("--deals must be at least 100")
        started = time.monotonic()
        found = seen_table.classes()
        with Pool(options["processes"]) as pool:
            table = seen_table.compute(
                options["deals"], options["seed"], lambda f, jobs: pool.imap(f, jobs, chunksize=16), found,
            )
        seconds = time.monotonic() - started
        self.stdout.write(
            f"{len(found)} classes, {options['deals']} deals each, seed {options['seed']}: "
            f"{seconds:.0f} s"
        )
        if options["write"]:
            seen_table.write(Path(options["output"]), table, options["deals"], options["seed"])
            self.stdout.write(f"wrote {options['output']}")
