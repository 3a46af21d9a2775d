"""``python manage.py derive_seat_covariance``: how much two seats of one round move together.

Simulates rounds of two seats under the basic strategy (``books.seat_covariance``
says exactly what is simulated, ``game.strategy`` the strategy) and prints each figure with its standard
error: the single-seat base mean and variance, the seat-seat base covariance
and its ratio to the variance, the Trips covariance of each shipped pay table
and the base-Trips cross covariances. ``--write`` ships the result as
``books/data/seat_covariance.json``; docs/VARIANCE.md says how it is used.

The shipped configurations' pay tables are read from the migration that ships
them (``rounds/migrations/0002_shipped_configs.py``, which gives every one the
dealer qualifier "pair"), never from the database: the command needs none.
One derivation is made for each distinct Blind table and qualifier.
"""

from __future__ import annotations

import importlib
import math
import sys
import time
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from books import seat_covariance as sc
from books.statistics import trips_math
from game import strategy
from game.rules import pay_table

SHIPPED_MIGRATION = "rounds.migrations.0002_shipped_configs"
SHIPPED_QUALIFIER = "pair"  # what ship_configs writes for every configuration


def shipped_tables() -> dict[str, tuple[dict, dict, str]]:
    """Configuration name -> (Blind pays, Trips pays, dealer qualifier), as the migration ships them."""
    shipped = importlib.import_module(SHIPPED_MIGRATION)
    return {
        spec["name"]: (pay_table(shipped.BLIND), pay_table(shipped.TRIPS), SHIPPED_QUALIFIER)
        for spec in shipped.SHIPPED
    }


def shown(estimate: sc.Estimate, extra: int = 1) -> str:
    """A figure to the digits its standard error supports (two significant digits of the error)."""
    if not estimate.se:
        return str(estimate.value)
    places = max(0, -math.floor(math.log10(estimate.se)) + extra)
    step = Decimal(1).scaleb(-places)
    return f"{estimate.value.quantize(step)} ± {estimate.se.quantize(step)}"


class Command(BaseCommand):
    help = "Derive the covariance between two seats of one round (base game and Trips) by simulation."
    requires_system_checks: list[str] = []  # nothing here touches the database

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=10_000_000, help="rounds of two seats")
        parser.add_argument("--seed", type=int, default=20261201, help="the run's seed")
        parser.add_argument("--processes", type=int, default=1, help="worker processes")
        parser.add_argument("--write", action="store_true", help=f"write {sc.DATA_PATH.name}")
        parser.add_argument("--output", default=str(sc.DATA_PATH), help="where --write writes")

    def handle(self, *args, **options):
        rounds, seed, processes = options["rounds"], options["seed"], options["processes"]
        if rounds < 2 * sc.CHUNK_ROUNDS:
            raise CommandError(f"--rounds must be at least {2 * sc.CHUNK_ROUNDS} (two chunks)")
        if processes < 1:
            raise CommandError("--processes must be at least 1")
        write = self.stdout.write

        games: dict[str, tuple[sc.Game, list[str], dict[str, dict]]] = {}
        for name, (blind, trips, qualifier) in shipped_tables().items():
            game = sc.Game.of(blind, qualifier)
            entry = games.setdefault(game.fingerprint, (game, [], {}))
            entry[1].append(name)
            entry[2][name] = trips

        chunks = len(sc.chunk_sizes(rounds))
        write(f"seat covariance v{sc.VERSION}: {rounds:,} rounds of two seats, seed {seed}, "
              f"{processes} process(es), {chunks} chunks of {sc.CHUNK_ROUNDS:,} rounds "
              f"in {min(sc.BATCHES, chunks)} batches")
        write(f"method: {sc.METHOD}")
        write(f"strategy: {sc.STRATEGY} (game/strategy.py states it rule by rule)")

        derived = []
        for game, configs, trips_tables in games.values():
            started = time.monotonic()
            derivation = sc.derive(game, rounds=rounds, seed=seed, processes=processes,
                                   progress=self._progress(chunks))
            elapsed = time.monotonic() - started
            derived.append((derivation, configs, trips_tables))
            self._report(derivation, configs, trips_tables, elapsed)

        if options["write"]:
            document = sc.data_document(derived, default=derived[0][0].game.fingerprint)
            path = sc.write_data(document, Path(options["output"]))
            loaded = sc.load_seat_covariance(path=path)
            write(f"wrote {path} ({loaded.fingerprint}, version {loaded.version})")

    def _progress(self, chunks: int):
        step = max(1, chunks // 10)

        def progress(done: int, total: int) -> None:
            if done % step == 0 or done == total:
                sys.stderr.write(f"  {done}/{total} chunks\n")

        return progress

    def _report(self, derivation: sc.Derivation, configs, trips_tables, elapsed: float) -> None:
        write = self.stdout.write
        # The configured figures for optimal play, printed beside the simulation's for comparison.
        optimal_edge = Decimal(str(settings.BASE_GAME_HOUSE_EDGE))
        optimal_sd = Decimal(str(settings.BASE_GAME_SD))
        game = derivation.game
        described = game.describe()
        blind = ", ".join(f"{k} {v}" for k, v in described["blind_pays"].items())
        write(f"game {game.fingerprint} ({', '.join(configs)}): Blind {blind}; "
              f"the dealer qualifies with {described['dealer_qualifier']} or better")
        total = derivation.total
        seats = sum(total.decisions)
        share = {m: Decimal(100 * total.decisions[m]) / seats for m in (4, 2, 1, 0)}
        write("  decisions per seat: " + ", ".join(
            f"{strategy.DECISION_OF_MULTIPLE[m]} {share[m]:.2f} %" for m in (4, 2, 1, 0)))
        base = sc.base_figures(derivation)
        write(f"  base mean per Ante (player's view)     {shown(base['base_mean'])}"
              f"   [optimal play, published: {-optimal_edge}]")
        write(f"  base variance per Ante², one seat       {shown(base['base_variance'])}"
              f"   [published sd {optimal_sd} for optimal play: {optimal_sd ** 2}]")
        write(f"  base covariance per Ante², seat-seat    {shown(base['base_covariance'])}")
        write(f"  its ratio to the variance (correlation) {shown(base['base_correlation'])}"
              f"   [to {optimal_sd}²: {base['base_covariance'].value / optimal_sd ** 2:.4f}]")
        by_table: dict[str, tuple[list[str], dict]] = {}
        for name, pays in trips_tables.items():
            by_table.setdefault(str(sc.pays_json(pays)), ([], pays))[0].append(name)
        for names, pays in by_table.values():
            trips = sc.trips_figures(derivation, pays)
            exact = trips_math(pays)
            exact_variance = Decimal(exact.variance.numerator) / Decimal(exact.variance.denominator)
            table = ", ".join(f"{k} {v}" for k, v in sc.pays_json(pays).items())
            write(f"  Trips of {', '.join(names)} ({table}):")
            write(f"    variance per unit², one seat          {exact_variance:.6f} exact "
                  f"(simulated {shown(trips['trips_variance_simulated'])})")
            covariance = trips["trips_covariance"]
            write(f"    covariance per unit², seat-seat       {shown(covariance)}"
                  f"   (ratio to the exact variance {covariance.value / exact_variance:.4f})")
            write(f"    Cov(base, Trips) of one seat          "
                  f"{shown(trips['base_trips_covariance_same_seat'])}")
            write(f"    Cov(base of one seat, Trips of another) "
                  f"{shown(trips['base_trips_covariance_other_seat'])}")
        write(f"  simulated in {elapsed:.1f} s")
