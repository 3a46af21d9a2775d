"""``python manage.py reconcile --day YYYY-MM-DD``: reconcile a gaming day here and now.

Scores the day's decisions and raises its game-protection findings
(``audit.protection``), then runs every part of the report in this process
(no worker needed) with a progress bar, and prints the report's headline figures. ``--to`` makes it a range. A day that
already has a current report gets a new version that supersedes it; an
unfinished one with the same inputs is resumed.
"""

from __future__ import annotations

import sys
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from audit.models import ReconciliationReport
from audit.protection.services import day_protect
from audit.reconciliation.services import day_to_reconcile, report_run
from books.report_reader import read_figures
from infra.gaming_day import gaming_day_argument
from infra.money_display import money, percent

BAR = 30


class Command(BaseCommand):
    help = "Reconcile a gaming day (or a range of days) synchronously and print the report."

    def add_arguments(self, parser):
        parser.add_argument("--day", help="the gaming day, YYYY-MM-DD (default: the day that ended last)")
        parser.add_argument("--to", help="the last day of a range, YYYY-MM-DD")
        parser.add_argument("--no-progress", action="store_true", help="print no progress bar")

    def handle(self, *args, **options):
        day_from = gaming_day_argument(options["day"]) if options["day"] else day_to_reconcile()
        day_to = gaming_day_argument(options["to"]) if options["to"] else day_from
        if day_to < day_from:
            raise CommandError("--to is before --day")
        live = not options["no_progress"] and self.stdout.isatty()

        def progress(done: int, total: int, label: str) -> None:
            filled = BAR * done // total if total else BAR
            line = f"[{'#' * filled}{'.' * (BAR - filled)}] {done}/{total} {label}"
            if live:
                self.stdout.write(f"\r{line[:100]:<100}", ending="")
                self.stdout.flush()
            elif not options["no_progress"]:
                self.stdout.write(line)

        day = day_from
        while day <= day_to:
            # Scored first: the report reads the day's scores (its theoretical win at actual play).
            protected = day_protect(day=day, progress=progress)
            if live:
                self.stdout.write("")
            raised = ", ".join(f"{n} {code}" for code, n in sorted(protected.raised.items())) or "no new findings"
            self.stdout.write(f"game protection {day}: {protected.seats_scored} seats scored on "
                              f"{protected.tables} tables; {raised}")
            day += timedelta(days=1)
        report = report_run(day_from=day_from, day_to=day_to, requested_by="manage.py reconcile",
                            progress=progress)
        if live:
            self.stdout.write("")
        self._summary(report)
        if report.status != ReconciliationReport.Status.COMPLETE:
            raise CommandError(f"{report} did not become current")

    def _summary(self, report: ReconciliationReport) -> None:
        figures = read_figures(report.figures)
        write = self.stdout.write
        write(f"{report}  engine {report.engine_version}")
        if not figures:
            write(getattr(figures, "reason", "no figures"))
            return
        if not figures.currencies:
            write("no rounds were dealt in the range")
        for currency, casino in figures.casino.items():
            write(f"{currency}: rounds {casino.rounds} (void {casino.void_rounds}), hands {casino.hands}, "
                  f"handle {money(casino.handle_total, currency)}, house win {money(casino.win_total, currency)}, "
                  f"hold {percent(casino.hold_percent['total'])}")
            if casino.win_paid_total is not None:
                difference = casino.dealer_difference
                write(f"{currency}: house win by what the dealers paid {money(casino.win_paid_total, currency)} "
                      f"(dealer difference {'+' if difference >= 0 else '−'}{money(abs(difference), currency)})")
            write(f"{currency}: payout mismatches {casino.mismatches} "
                  f"({casino.mismatches_per_1000} per 1,000 hands), "
                  f"overpaid {money(casino.overpaid, currency)}, underpaid {money(casino.underpaid, currency)}")
        for code, pool in figures.pools.items():
            failed = [c.check for c in pool.checks if not c.ok]
            write(f"pool {code}: opening {money(pool.opening)} + in {money(pool.inflow)} - out {money(pool.outflow)} "
                  f"= closing {money(pool.closing, pool.currency)} "
                  f"({'balanced' if pool.balanced else 'DOES NOT BALANCE: ' + ', '.join(failed)})")
        write(f"re-verified {figures.reverification.rounds} rounds, drift {report.drift}")
        chain = figures.chain
        day = (f"the range's last event #{chain.day_last_seq} {chain.day_last_hash}"
               if chain.day_events else "no audit events in the range")
        write(f"audit chain {'intact' if report.chain_ok else 'BROKEN'}, {day}; walked "
              f"{', '.join(chain.walked) or 'nothing'}, {chain.anchors_held} anchor(s) held")
        write(f"flags {report.flags}")
        for alert in figures.alerts:
            sys.stderr.write(f"ALERT {alert}\n")
