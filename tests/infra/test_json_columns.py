"""Reading parts of a JSON column (infra.json_columns): the parts asked for, and only those."""

from __future__ import annotations

import pytest

from audit.models import ReconciliationReport
from infra.json_columns import KeysOf

pytestmark = pytest.mark.django_db


@pytest.fixture
def report():
    from datetime import date

    return ReconciliationReport.objects.create(
        day_from=date(2026, 11, 1), day_to=date(2026, 11, 1), version=1,
        figures={"alerts": ["a"], "tables": {"S01": {"SEK": {"rounds": 3}}}, "players": {"P": 1}, "n": 4})


def test_keys_of_reads_the_keys_asked_for_a_missing_one_as_null(report):
    parts = ReconciliationReport.objects.filter(pk=report.pk).values_list(
        KeysOf("figures", ["alerts", "tables", "absent"]), flat=True).get()
    assert parts == {"alerts": ["a"], "tables": {"S01": {"SEK": {"rounds": 3}}}, "absent": None}


def test_keys_of_figures_never_stored_is_all_null(report):
    ReconciliationReport.objects.filter(pk=report.pk).update(figures=None)
    parts = ReconciliationReport.objects.filter(pk=report.pk).values_list(
        KeysOf("figures", ["alerts"]), flat=True).get()
    assert parts == {"alerts": None}


def test_keys_of_refuses_a_key_that_is_not_plain():
    with pytest.raises(ValueError):
        list(ReconciliationReport.objects.values_list(KeysOf("figures", ["a' || 'b"]), flat=True))
