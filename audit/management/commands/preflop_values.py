"""``python manage.py preflop_values``: every starting hand's preflop options, computed here.

For each of the 169 starting hands (``game.protection.preflop`` says what
is averaged and how), the command values ``--flops`` seeded flops exactly
over turn, river and dealer hand; a hand whose 4x and check lie within
``--close`` standard errors of one another is then valued exactly over every
flop (up to suit renamings). It prints each hand's values, its method and
error, and with ``--write`` ships them as ``game/protection/data/preflop_values.csv``.
The same arguments give the same file: the sample's seed is ``--seed`` and the
hand's cards. The shipped Blind pay table (seed 001, the one every shipped
configuration uses) and the dealer's pair qualifier are what it values.
"""

from __future__ import annotations

import time
from multiprocessing import Pool
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from game.evaluator import CATEGORY_INDEX
from game.protection import preflop
from game.protection.values import PayTable

from .derive_seat_covariance import shipped_tables


def _shipped_pays() -> PayTable:
    tables = {(tuple(sorted(blind.items())), qualifier) for blind, _, qualifier in shipped_tables().values()}
    if len(tables) != 1:
        raise CommandError("the shipped configurations pay the Blind differently; value each apart")
    (blind, qualifier), = tables
    return PayTable.from_pays(dict(blind), CATEGORY_INDEX[qualifier])


def _one(job: tuple[str, PayTable, int, int, float]) -> preflop.ClassValues:
    name, pays, flops, seed, close = job
    if close == float("inf"):  # --exact: every hand exactly, no sample needed to choose
        return preflop.compute_class(name, pays, exact=True)
    sampled = preflop.compute_class(name, pays, flops=flops, seed=seed)
    spread = abs(sampled.values[preflop.P4] - sampled.values[preflop.CHECK])
    if close and spread < close * sampled.se_4x_minus_check:
        return preflop.compute_class(name, pays, exact=True)
    return sampled


class Command(BaseCommand):
    help = "Compute every starting hand's preflop option values (4x, 3x, check) and their error."
    requires_system_checks: list[str] = []  # nothing here touches the database

    def add_arguments(self, parser):
        parser.add_argument("--flops", type=int, default=512, help="sampled flops per hand")
        parser.add_argument("--close", type=float, default=4.0,
                            help="standard errors within which a hand is valued exactly (0: never)")
        parser.add_argument("--exact", action="store_true", help="value every hand exactly")
        parser.add_argument("--seed", type=int, default=2185, help="the sample's seed")
        parser.add_argument("--hands", nargs="*", help="only these hands (e.g. AA K5o); printed, not written")
        parser.add_argument("--processes", type=int, default=1, help="worker processes")
        parser.add_argument("--write", action="store_true", help=f"write {preflop.DATA.name}")
        parser.add_argument("--output", default=str(preflop.DATA), help="where --write writes")

    def handle(self, *args, **options):
        if options["flops"] < 2:
            raise CommandError("--flops must be at least 2: the error needs two flops")
        names = options["hands"] or preflop.starting_hands()
        unknown = sorted(set(names) - set(preflop.starting_hands()))
        if unknown:
            raise CommandError(f"unknown starting hands: {' '.join(unknown)} (write them as AA, AKs, T9o)")
        if options["hands"] and options["write"]:
            raise CommandError("--write ships every hand: leave out --hands")
        pays = _shipped_pays()
        close = float("inf") if options["exact"] else options["close"]
        jobs = [(name, pays, options["flops"], options["seed"], close) for name in names]
        started = time.monotonic()
        with Pool(options["processes"]) as pool:
            classes = pool.map(_one, jobs, chunksize=1)
        seconds = time.monotonic() - started

        write = self.stdout.write
        write(f"{'hand':5} {'4x':>9} {'3x':>9} {'check':>9} {'se(4x-check)':>12} best   method")
        for c in classes:
            write(f"{c.name:5} {c.values[preflop.P4]:9.5f} {c.values[preflop.P3]:9.5f} "
                  f"{c.values[preflop.CHECK]:9.5f} {c.se_4x_minus_check:12.5f} {c.best:6} "
                  f"{c.method} ({c.flops} flops)")
        exact = sum(1 for c in classes if c.method == "exact")
        write(f"{len(classes)} hands in {seconds:.0f} s: {exact} exact, {len(classes) - exact} sampled")
        if options["write"]:
            header = [
                "Preflop option values in Antes (Ante = Blind = 1; Trips left out), by starting hand.",
                "Written by: python manage.py preflop_values --write "
                f"--flops {options['flops']} --close {options['close']:g} --seed {options['seed']}"
                + (" --exact" if options["exact"] else ""),
                "Method: each option averaged over flops of exact flop values (every turn, river and",
                "dealer hand, best river decision inside); 'sampled': seeded uniform flops, standard",
                "error of 4x - check beside; 'exact': every flop up to suit renamings (error 0).",
            ]
            preflop.write_table(Path(options["output"]), classes, pays, header)
            write(f"wrote {options['output']}")
