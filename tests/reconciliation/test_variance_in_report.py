"""The nightly report runs the enabled regulators' tests and raises their findings once."""

from __future__ import annotations

from decimal import Decimal

import pytest

from audit.models import VarianceFinding
from audit.reconciliation.services import report_run
from audit.reconciliation.variance_services import variance_test_configure
from trail.services import SYSTEM

from .days import DAY, post_day

pytestmark = pytest.mark.django_db


def _configure(code: str, enabled: bool, threshold: str | None = None, base_hold: str | None = None) -> None:
    variance_test_configure(code=code, enabled=enabled, threshold=threshold, base_hold=base_hold, actor=SYSTEM)


def test_the_day_trips_the_enabled_tests_and_a_rerun_raises_nothing_twice():
    post_day()
    _configure("comar", True)
    _configure("kansas", True, threshold="3")
    _configure("ohio", True, threshold="4")
    report = report_run(day_from=DAY)
    tests = report.figures["variance_tests"]
    assert tests["settings"]["kansas"] == {"enabled": True, "threshold": "3.0000", "base_hold": None}
    tripped = {(t["test"], t["scope"], t["key"], t["currency"], t["period"]) for t in tests["trips"]}
    # The worked rounds hold royal flushes: U01 wins far below its theoretical band, in dollars.
    assert ("comar", "table", "U01", "USD", "day") in tripped
    assert ("comar", "table", "U01", "USD", "month_to_date") in tripped
    assert {t[0] for t in tripped} <= {"comar", "kansas", "ohio"}
    # Every table's band is its own: none is judged in another table's currency.
    assert all(currency == ("USD" if key.startswith("U") else "SEK")
               for test, scope, key, currency, period in tripped if scope == "table")
    stored = VarianceFinding.objects.filter(report=report)
    assert stored.count() == len(tests["trips"]) and all(f.state == "open" for f in stored)
    u01 = stored.get(test="comar", key="U01", period="day")
    assert Decimal(u01.figures["win"]) < Decimal(u01.figures["low_95"]) and "USD" in u01.detail

    again = report_run(day_from=DAY)  # a rerun: a new version, the same trips, no new findings
    assert again.version == report.version + 1 and len(again.figures["variance_tests"]["trips"]) == len(tests["trips"])
    assert VarianceFinding.objects.count() == stored.count()


def test_no_test_enabled_raises_nothing():
    post_day(per_table=5)
    for code in ("comar", "kansas", "ohio"):
        _configure(code, False, threshold="4" if code != "comar" else None)
    report = report_run(day_from=DAY)
    assert report.figures["variance_tests"]["trips"] == [] and not VarianceFinding.objects.exists()
