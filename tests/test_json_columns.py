"""Reading parts of a JSON column (infra.json_columns): the parts asked for, and only those."""

from __future__ import annotations

import pytest

from audit.models import ReconciliationReport
from infra.json_columns import KeysOf, Without

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


def test_without_leaves_out_those_parts_only(report):
    figures = ReconciliationReport.objects.filter(pk=report.pk).values_list(
        Without("figures", "players"), flat=True).get()
    assert figures == {"alerts": ["a"], "tables": {"S01": {"SEK": {"rounds": 3}}}, "n": 4}
    nested = ReconciliationReport.objects.filter(pk=report.pk).values_list(
        Without("figures", "players", "tables.S01", "absent.deeper"), flat=True).get()
    assert nested == {"alerts": ["a"], "tables": {}, "n": 4}


def test_keys_of_trims_the_objects_it_is_told_and_leaves_other_values(report):
    parts = ReconciliationReport.objects.filter(pk=report.pk).values_list(
        KeysOf("figures", ["tables", "alerts", "n"], trimmed={"tables": ["S01"], "alerts": ["a"], "n": ["x"]}),
        flat=True).get()
    assert parts == {"tables": {}, "alerts": ["a"], "n": 4}  # a list and a number are not objects
    with pytest.raises(ValueError):
        KeysOf("figures", ["tables"], trimmed={"players": ["P"]})
    with pytest.raises(ValueError):
        list(ReconciliationReport.objects.values_list(KeysOf("figures", ["tables"], trimmed={"tables": ["a'b"]})))


@pytest.mark.parametrize("paths", [(), ("players'--",), ("tables..S01",), ("a b",)])
def test_without_refuses_a_path_that_is_not_plain(paths):
    with pytest.raises(ValueError):
        Without("figures", *paths)
