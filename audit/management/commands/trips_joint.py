"""``python manage.py trips_joint``: two seats' hand categories on one board, counted exactly.

Counts, over every board and every two disjoint hole pairs, how often the
first seat's seven cards are of category ``i`` and the second's of ``j``
(``books.trips_joint``), prints the Trips seat–seat covariance of each shipped
Trips pay table from them, and with ``--write`` ships the counts as
``books/data/trips_joint.json``, from which the nightly report's bands take
the covariance for any Trips table (docs/VARIANCE.md). A quarter of an hour
on one core; it needs no database.
"""

from __future__ import annotations

import json
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand

from books import trips_joint as tj
from books.statistics import trips_math
from game.evaluator import CATEGORIES

from .derive_seat_covariance import shipped_tables

DATA = Path(tj.__file__).with_name("data") / "trips_joint.json"
PARTS = 64


def _part(index: int) -> np.ndarray:
    return tj.joint_of_boards(np.array_split(tj._boards(), PARTS)[index])


class Command(BaseCommand):
    help = "Count two seats' hand categories over every board exactly; print (and ship) the Trips covariance."
    requires_system_checks: list[str] = []  # nothing here touches the database

    def add_arguments(self, parser):
        parser.add_argument("--processes", type=int, default=1, help="worker processes")
        parser.add_argument("--write", action="store_true", help=f"write {DATA.name}")

    def handle(self, *args, processes: int, write: bool, **options):
        with Pool(processes) as pool:
            joint = sum(pool.imap_unordered(_part, range(PARTS)))
        if int(joint.sum()) != tj.DEALS:
            raise RuntimeError(f"counted {int(joint.sum())} deals, not {tj.DEALS}")
        for name, (_, trips, _) in sorted(shipped_tables().items()):
            covariance = tj.trips_covariance_exact(joint, trips)
            variance = tj.trips_variance_exact(joint, trips)
            self.stdout.write(
                f"{name}: c_TT {float(covariance):.9f} per unit², one seat's variance {float(variance):.9f} "
                f"(trips_math: {float(trips_math(trips).variance):.9f})"
            )
        if write:
            DATA.write_text(json.dumps({
                "what": "ordered pairs of disjoint hole pairs on one board, by the hand category of each "
                        "seat's seven cards, over every board (manage.py trips_joint)",
                "categories": list(CATEGORIES),
                "deals": tj.DEALS,
                "counts": joint.tolist(),
            }, indent=1) + "\n")
            self.stdout.write(f"wrote {DATA}")
