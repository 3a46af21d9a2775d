"""Each dealer's figures and each flag of a finished report, copied into rows of their own
(``audit.models.ReportDealer``, ``audit.models.ReportFlag``).

A busy casino's report carries thousands of dealers and flags: its page showed
25 of each and decoded all at every view. The rows carry each dealer's place in the
two orders the page shows them in, computed here by the same functions that
order the tables (``figures.dealer_order``, ``figures.chart_order``), so the
page reads the ones it shows by index (``audit.selectors.report_dealers``).
"""

from __future__ import annotations

from audit.models import ReconciliationReport, ReportDealer, ReportFlag
from books.figures import chart_order, dealer_order
from books.report_figures import ReportFigures, figures_json


def report_dealers_write(report: ReconciliationReport, figures: ReportFigures) -> int:
    """Keep the dealers of a finished report (its ``figures``, as just saved); how many rows were written."""
    pairs = [(dealer, currency, group) for dealer, by_currency in figures.dealers.items()
             for currency, group in by_currency.items()]
    accuracy = sorted(pairs, key=lambda p: dealer_order(overpaid=p[2].overpaid, underpaid=p[2].underpaid,
                                                        mismatches=p[2].mismatches, dealer=p[0], currency=p[1]))
    charted = {(p[0], p[1]): n for n, p in enumerate(sorted(
        pairs, key=lambda p: chart_order(outside=p[2].bands.total.outside, handle=p[2].handle_total,
                                         key=p[0], currency=p[1])))}
    rows = [
        ReportDealer(report=report, dealer=dealer, currency=currency, accuracy_rank=n,
                     chart_rank=charted[dealer, currency], per_1000=group.mismatches_per_1000,
                     tables=figures.dealer_tables.get(dealer, []), figures=figures_json(group))
        for n, (dealer, currency, group) in enumerate(accuracy)
    ]
    ReportDealer.objects.bulk_create(rows, batch_size=500)
    return len(rows)


def report_flags_write(report: ReconciliationReport, figures: ReportFigures) -> int:
    """Keep the flags of a finished report (its ``figures``, as just saved) in their order; how many
    rows were written."""
    rows = [ReportFlag(report=report, rank=n, scope=flag.scope, key=flag.key, currency=flag.currency,
                       figures=figures_json(flag)) for n, flag in enumerate(figures.flags)]
    ReportFlag.objects.bulk_create(rows, batch_size=500)
    return len(rows)
