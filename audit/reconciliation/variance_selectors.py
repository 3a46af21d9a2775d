"""Reads of the regulators' variance tests: the settings a report runs them with."""

from __future__ import annotations

from audit.models import VarianceTestSetting

from books.variance_tests import DEFAULTS, VarianceSetting, VarianceSettings, VarianceTest


def variance_test_settings() -> VarianceSettings:
    """The three tests as configured; a test without a row runs with its defaults (``DEFAULTS``)."""
    rows = {row.code: row for row in VarianceTestSetting.objects.all()}

    def setting(test: VarianceTest) -> VarianceSetting:
        row = rows.get(test.value)
        if row is None:
            return DEFAULTS[test]
        return VarianceSetting(
            test, enabled=row.enabled, threshold=row.threshold, base_hold=row.base_hold
        )

    return VarianceSettings(**{test.value: setting(test) for test in VarianceTest})
