"""``python manage.py flop_values``: every flop's option values, for the shipped table of flops.

For each starting hand's canonical flops (``game.protection.flop_table``
says which), the flop's two options valued exactly by the scoring's own code
(``values.outcomes``: every turn, river and dealer hand, the best river
decision inside). Each hand's values are kept in ``--work`` as soon as they
are done, so a run that stops is resumed where it stopped; ``--write``
gathers them into ``game/protection/data/flop_values.npz``. All 169 hands
take hours of CPU (``--processes`` spreads them; docs/SCALING.md has the
figure); ``--hands`` and ``--limit`` value a part, to look at or to test,
never shipped. The shipped
Blind pay table and the dealer's pair qualifier are what it values, as
``preflop_values``.
"""

from __future__ import annotations

import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from game.protection import flop_table, preflop
from game.protection.values import PayTable, outcomes

from .preflop_values import _shipped_pays


def _kept(work: Path, name: str, limit: int | None) -> Path:
    return work / (f"{name}-first-{limit}.npz" if limit else f"{name}.npz")


def _one(job: tuple[str, PayTable, int | None, str]) -> tuple[str, int, float]:
    name, pays, limit, work = job
    kept = _kept(Path(work), name, limit)
    if kept.exists():
        return name, 0, 0.0
    started = time.process_time()
    hole = preflop.representative(name)
    flops = [flop for flop, _ in preflop.canonical_flops(hole)][:limit]
    keys, bets, checks = [], [], []
    for flop in flops:
        found = outcomes(hole, flop, pays)
        keys.append(flop_table.key_of_canonical(name, flop))
        bets.append(found.play(2).mean())
        checks.append(found.river_best().mean())
    partial = kept.with_suffix(".part.npz")
    np.savez(partial, keys=np.array(keys, dtype=np.int64), flop_2x=np.array(bets), check=np.array(checks))
    partial.rename(kept)  # a hand is kept whole or not at all
    return name, len(flops), time.process_time() - started


class Command(BaseCommand):
    help = "Value every starting hand's canonical flops exactly (2x and check), for the shipped flop table."
    requires_system_checks: list[str] = []  # nothing here touches the database

    def add_arguments(self, parser):
        parser.add_argument("--hands", nargs="*", help="only these hands (e.g. AA K5o)")
        parser.add_argument("--limit", type=int, help="only each hand's first flops (a part: never shipped)")
        parser.add_argument("--work", default="var/flop_values", help="where each hand's values are kept")
        parser.add_argument("--processes", type=int, default=1, help="worker processes")
        parser.add_argument("--write", action="store_true", help=f"gather the kept hands into {flop_table.DATA.name}")
        parser.add_argument("--output", default=str(flop_table.DATA), help="where --write writes")

    def handle(self, *args, **options):
        names = options["hands"] or preflop.starting_hands()
        unknown = sorted(set(names) - set(preflop.starting_hands()))
        if unknown:
            raise CommandError(f"unknown starting hands: {' '.join(unknown)} (write them as AA, AKs, T9o)")
        partial = bool(options["hands"] or options["limit"])
        if partial and options["write"] and options["output"] == str(flop_table.DATA):
            raise CommandError("a part of the table is never shipped: give --output elsewhere")
        work = Path(options["work"])
        work.mkdir(parents=True, exist_ok=True)
        pays = _shipped_pays()
        jobs = [(name, pays, options["limit"], str(work)) for name in names]
        started = time.monotonic()
        with Pool(options["processes"]) as pool:
            for name, flops, cpu in pool.imap_unordered(_one, jobs):
                note = f"{flops} flops, {cpu:.0f} s CPU" if flops else "kept before"
                self.stdout.write(f"{name}: {note}")
        self.stdout.write(f"{len(names)} hands in {time.monotonic() - started:.0f} s")
        if options["write"]:
            parts = [np.load(_kept(work, name, options["limit"])) for name in names]
            header = ("Flop option values in Antes by (hole, flop) up to suit renaming; written by "
                      "python manage.py flop_values --write"
                      + (f" --hands {' '.join(names)}" if options["hands"] else "")
                      + (f" --limit {options['limit']}" if options["limit"] else "")
                      + "; each value exact over every turn, river and dealer hand.")
            flop_table.write_table(
                Path(options["output"]), pays,
                np.concatenate([p["keys"] for p in parts]), np.concatenate([p["flop_2x"] for p in parts]),
                np.concatenate([p["check"] for p in parts]), header,
            )
            self.stdout.write(f"wrote {options['output']}: {sum(len(p['keys']) for p in parts)} flops")
