"""A report's figures have one declaration (``books.report_figures``): what is stored is
what it writes, every reader reads through it, and the shapes earlier versions stored are upgraded in
its one reader, not in the pages."""

from __future__ import annotations

import copy
import csv
import io
from datetime import date

from decimal import Decimal

import pytest
from pydantic import ValidationError

from audit.reconciliation.services import report_run
from books.report_figures import FIGURES_VERSION, GroupFigures, ReportFigures, figures_json
from books.report_reader import UNREADABLE, read_figures
from game.rules import BETS
from rounds.models import Seat
from tests import examples
from tests.reconciliation.days import figures_stored

pytestmark = pytest.mark.django_db
DAY = date(2026, 11, 28)
# What a group lacked before its decisions were scored (version 1 of the figures).
SCORED = ("skill", "scored_hands", "scored_percent", "fully_scored", "theoretical", "theo_base_actual",
          "theoretical_actual", "theoretical_optimal", "bands_optimal")


@pytest.fixture
def report(table_client):
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl")[:12]:
        client.post("/api/v1/rounds/", example["record"], format="json")
    return report_run(day_from=DAY)


def _version_two(figures: dict) -> dict:
    """The figures as a report made before what the dealers paid was kept stored them."""
    old = copy.deepcopy(figures)
    old["version"] = 2
    for source in (old, old["month_to_date"], old["year_to_date"]):
        groups = [*source["casino"].values()]
        for scope in ("tables", "dealers", "shifts", "players"):
            groups += [g for by in source.get(scope, {}).values() for g in by.values()]
        for group in groups:
            del group["win_paid"], group["win_paid_total"], group["dealer_difference"]
    return old


def _version_one(figures: dict) -> dict:
    """The figures as a report made before decisions were scored stored them."""
    old = _version_two(figures)
    del old["version"], old["scoring"], old["dual_control"]
    groups = [*old["casino"].values()]
    for source in (old, old["month_to_date"], old["year_to_date"]):
        for scope in ("tables", "dealers", "shifts", "players"):
            groups += [g for by in source.get(scope, {}).values() for g in by.values()]
    for group in groups:
        for name in SCORED:
            group.pop(name, None)
        for band in group["bands"].values():
            band.pop("theoretical")
    for pool in old["pools"].values():
        pool.pop("reversals")
    return old


def _csv(client, report) -> list[dict]:
    response = client.get(f"/api/v1/reports/{report.pk}.csv")
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_what_is_stored_is_what_the_declaration_writes(report):
    stored = report.figures
    assert stored["version"] == FIGURES_VERSION
    figures = read_figures(stored)
    assert isinstance(figures, ReportFigures)
    assert figures_json(figures) == stored  # nothing stored that the declaration does not name
    group = figures.tables["S01"]["SEK"]
    assert isinstance(group, GroupFigures) and group.rounds == 12 and group.bands.total.theoretical == "optimal"
    assert figures.month_to_date.tables["S01"]["SEK"].rounds == 12


def test_an_undeclared_or_misspelt_figure_is_refused_when_written(report):
    stored = report.figures
    with pytest.raises(ValidationError, match="hands_total"):
        ReportFigures.model_validate({**stored, "hands_total": 3})
    with pytest.raises(ValidationError, match="bands"):
        GroupFigures.model_validate({k: v for k, v in stored["casino"]["SEK"].items() if k != "bands"})


def test_a_report_of_version_one_is_upgraded_in_the_reader_and_read_everywhere(report, auditor_client,
                                                                                  admin_client):
    today = _csv(auditor_client, report)
    old = _version_one(report.figures)
    figures_stored(report, old)
    report.refresh_from_db()

    figures = read_figures(report.figures)
    assert isinstance(figures, ReportFigures) and figures.scoring is None and figures.dual_control is None
    for group in [*figures.casino.values(), *(g for by in figures.tables.values() for g in by.values())]:
        assert group.theoretical == "optimal" and not group.fully_scored and group.skill == 0
        assert group.bands_optimal.total == group.bands.total and group.bands.trips.theoretical == "optimal"
        assert group.theoretical_optimal == group.bands.total.expected == group.theoretical_actual
    assert all(pool.reversals == 0 for pool in figures.pools.values())

    # The CSV, the API and the page read the upgraded figures: the same rows, judged at optimal play.
    rows = _csv(auditor_client, report)
    assert [(r["scope"], r["key"], r["bet"], r["win"]) for r in rows] == [
        (r["scope"], r["key"], r["bet"], r["win"]) for r in today]
    assert {r["theoretical"] for r in rows if r["bet"] == "total"} == {"optimal"}
    detail = auditor_client.get(f"/api/v1/reports/{report.pk}/").json()
    assert detail["figures"]["version"] == FIGURES_VERSION and detail["figures_unreadable"] == ""
    assert detail["figures"]["tables"]["S01"]["SEK"]["bands_optimal"]["total"]["theoretical"] == "optimal"
    page = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert "made before decisions were scored: every band judged at optimal play" in page
    assert "not recorded (a report made before this section)" in page


def test_figures_before_currencies_or_out_of_any_shape_are_said_to_be_unreadable(report, auditor_client,
                                                                                    admin_client):
    before = {"casino": {"rounds": 5, "handle": {"ante": "100"}}, "tables": {"S01": {"rounds": 5}}}
    assert read_figures(before) is UNREADABLE and not read_figures(before)
    edited = copy.deepcopy(report.figures)
    edited["tables"]["S01"]["SEK"]["win_total"] = "a lot"
    for stored, says in ((before, "reconcile the range again"), (edited, "tables.S01.SEK.win_total")):
        figures_stored(report, stored)
        detail = auditor_client.get(f"/api/v1/reports/{report.pk}/")
        assert detail.status_code == 200 and detail.json()["figures"] is None
        assert says in detail.json()["figures_unreadable"]
        page = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/")
        assert page.status_code == 200 and says in page.content.decode()
        assert len(_csv(auditor_client, report)) == 0


def test_a_report_of_version_two_reads_what_was_paid_as_not_known(report, auditor_client, admin_client):
    figures_stored(report, _version_two(report.figures))
    report.refresh_from_db()
    figures = read_figures(report.figures)
    table = figures.tables["S01"]["SEK"]
    assert table.win_paid is None and table.win_paid_total is None and table.dealer_difference is None
    assert table.win_total == Decimal(report.figures["tables"]["S01"]["SEK"]["win_total"])
    assert {(r["win_paid"], r["dealer_difference"]) for r in _csv(auditor_client, report)} == {("", "")}
    page = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/")
    assert page.status_code == 200


@pytest.mark.django_db
def test_house_win_settled_and_paid_tie_to_the_rows_and_to_the_findings(table_client, auditor_client):
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl"):
        client.post("/api/v1/rounds/", example["record"], format="json")
    report = report_run(day_from=DAY)
    seats = Seat.objects.filter(round__gaming_day=DAY, round__held=False, round__table__code="S01")
    settled = -sum(sum(getattr(s, f"settled_{b}") for b in BETS) for s in seats)
    paid = -sum(sum(getattr(s, f"paid_{b}") if s.paid_reported else getattr(s, f"settled_{b}") for b in BETS)
                for s in seats)
    assert paid != settled  # the examples hold dealers' errors
    group = read_figures(report.figures).tables["S01"]["SEK"]
    assert (group.win_total, group.win_paid_total, group.dealer_difference) == (settled, paid, paid - settled)
    # Counted two ways: seat by seat, and by the payout mismatches the rounds were flagged with.
    assert group.dealer_difference == group.underpaid - group.overpaid
    total = next(r for r in _csv(auditor_client, report) if (r["scope"], r["bet"]) == ("table", "total"))
    assert Decimal(total["win_paid"]) == paid and Decimal(total["dealer_difference"]) == paid - settled


def test_a_rate_an_hour_is_exact_and_not_shown_over_a_few_minutes():
    from datetime import timedelta

    from books.figures import hours_of, per_hour

    assert hours_of(timedelta(hours=1, minutes=30, microseconds=36)) == Decimal("1.50000001")
    assert per_hour(301, Decimal("1.5")) == 201
    assert per_hour(30, hours_of(timedelta(minutes=14, seconds=59))) is None
    assert per_hour(30, hours_of(timedelta(minutes=15))) == 120


def test_the_apis_report_reads_its_figures_once(report, auditor_client, monkeypatch):
    from api.audit import reports

    calls = []
    monkeypatch.setattr(reports, "read_figures", lambda stored: calls.append(1) or read_figures(stored))
    assert auditor_client.get(f"/api/v1/reports/{report.pk}/").status_code == 200
    assert len(calls) == 1
