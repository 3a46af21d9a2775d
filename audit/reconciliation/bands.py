"""Each table's and dealer's total bands, copied out of a completed single-day report's figures.

The charts of a group's days read these rows (``audit.models.ReportBand``,
``audit.selectors.report_band_series``): a few small rows by index, where
reading the bands out of each day's figures decompressed every day's whole
report once for each group charted.
"""

from __future__ import annotations

from collections.abc import Iterator

from audit.models import ReconciliationReport, ReportBand
from audit.selectors import BAND_PERIODS

from books.report_figures import ReportFigures, figures_json
from .to_date import PERIOD_SCOPES


def bands_of(figures: ReportFigures) -> Iterator[tuple[str, str, str, str, dict]]:
    """``(scope, key, currency, period, band)`` of every group's total band in ``figures``, as stored."""
    for period in BAND_PERIODS:
        source = figures if period == "day" else figures.period(period)
        if source is None:
            continue
        for scope in PERIOD_SCOPES:
            for key, by_currency in source.groups(scope).items():
                for currency, group in by_currency.items():
                    yield scope, key, currency, period, figures_json(group.bands.total)


def report_bands_write(report: ReconciliationReport, figures: ReportFigures) -> int:
    """Keep the bands of a completed single-day report (its ``figures``, as just made); how many
    rows were written."""
    if report.day_from != report.day_to:
        return 0
    rows = [
        ReportBand(report=report, day=report.day_from, scope=scope, key=key, currency=currency, period=period,
                   band=band)
        for scope, key, currency, period, band in bands_of(figures)
    ]
    ReportBand.objects.bulk_create(rows, batch_size=1000)
    return len(rows)
