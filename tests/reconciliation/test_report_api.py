"""Reports through the API: list, JSON and CSV, for casino staff only."""

from __future__ import annotations

import csv
import io
from datetime import date
from decimal import Decimal

import pytest

from audit.protection.services import day_protect
from audit.reconciliation.services import report_run
from tests import examples

pytestmark = pytest.mark.django_db
DAY = date(2026, 11, 28)


@pytest.fixture
def report(table_client):
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl")[:10]:
        client.post("/api/v1/rounds/", example["record"], format="json")
    return report_run(day_from=DAY)


def test_the_report_as_json_and_in_the_list(report, auditor_client):
    listed = auditor_client.get("/api/v1/reports/", {"day": DAY.isoformat(), "status": "complete"})
    assert listed.status_code == 200
    assert [r["id"] for r in listed.json()["results"]] == [report.pk]
    detail = auditor_client.get(f"/api/v1/reports/{report.pk}/").json()
    assert detail["figures"]["tables"]["S01"]["SEK"]["rounds"] == 10
    # The rounds were posted today: no audit event was written on their gaming day, and it says so.
    assert detail["chain_ok"] is True and detail["day_last_hash"] == ""
    assert detail["figures"]["chain"]["day_events"] == 0


def test_the_report_as_csv_matches_its_figures(report, auditor_client):
    response = auditor_client.get(f"/api/v1/reports/{report.pk}.csv")
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    s01 = {row["bet"]: row for row in rows
           if (row["period"], row["scope"], row["key"]) == ("range", "table", "S01")}
    table = report.figures["tables"]["S01"]["SEK"]
    assert {row["currency"] for row in s01.values()} == {"SEK"}
    assert s01["ante"]["win"] == table["win"]["ante"]
    assert s01["total"]["hold_percent"] == table["hold_percent"]["total"]
    assert s01["total"]["handle"] == table["handle_total"]
    assert s01["trips"]["expected"] == table["bands"]["trips"]["expected"]
    assert {row["scope"] for row in rows} >= {"casino", "table", "dealer", "shift"}
    assert {row["period"] for row in rows} == {"range", "month_to_date", "year_to_date"}
    month = [row for row in rows if (row["period"], row["scope"], row["key"], row["bet"])
             == ("month_to_date", "table", "S01", "total")]
    assert len(month) == 1 and month[0]["currency"] == "SEK" and month[0]["handle"] == table["handle_total"]


def _table_rows(report, client) -> dict[str, dict]:
    rows = csv.DictReader(io.StringIO(client.get(f"/api/v1/reports/{report.pk}.csv").content.decode()))
    return {row["bet"]: row for row in rows if (row["period"], row["scope"], row["key"]) == ("range", "table", "S01")}


def test_the_csv_says_which_theoretical_win_judged_and_carries_the_other(report, auditor_client):
    # Not scored yet: judged at optimal play, no skill to add.
    s01 = _table_rows(report, auditor_client)
    assert s01["total"]["theoretical"] == "optimal" and Decimal(s01["total"]["scored_percent"]) == 0
    assert s01["total"]["skill"] == report.figures["tables"]["S01"]["SEK"]["skill"]
    hands = report.figures["casino"]["SEK"]["hands"]  # one of the ten rounds is void
    assert hands == 9 and [a for a in report.figures["alerts"] if a.startswith("SCORING")] == [
        f"SCORING: {hands} of {hands} live hand(s) (SEK) were not scored by game protection when the report "
        'ran; the groups they belong to were judged at optimal play (docs/VARIANCE.md, "Which band judges")'
    ]
    assert s01["total"]["expected"] == s01["total"]["expected_optimal"]
    assert s01["ante"]["theoretical"] == "" and s01["ante"]["expected_optimal"] == ""

    day_protect(day=DAY)
    scored = report_run(day_from=DAY)
    s01 = _table_rows(scored, auditor_client)
    table = scored.figures["tables"]["S01"]["SEK"]
    assert not [a for a in scored.figures["alerts"] if a.startswith("SCORING")]
    assert s01["total"]["theoretical"] == s01["base_game"]["theoretical"] == s01["trips"]["theoretical"] == "actual"
    assert Decimal(s01["total"]["scored_percent"]) == 100 and s01["total"]["skill"] == table["skill"]
    assert s01["total"]["expected"] == table["bands"]["total"]["expected"]
    assert s01["total"]["expected_optimal"] == table["bands_optimal"]["total"]["expected"]
    # The examples' players do not all play the best option: the two theoretical wins differ.
    assert Decimal(table["skill"]) > 0
    assert s01["total"]["expected"] != s01["total"]["expected_optimal"]


def test_ids_a_table_sent_cannot_become_spreadsheet_formulas(table_client, auditor_client):
    client = table_client("S01", "se-50kr")
    record = dict(examples.load("se-50kr.jsonl")[0]["record"], dealer="=cmd|'/C calc'!A0")
    assert client.post("/api/v1/rounds/", record, format="json").status_code == 201
    report = report_run(day_from=DAY)
    rows = list(csv.DictReader(io.StringIO(auditor_client.get(f"/api/v1/reports/{report.pk}.csv").content.decode())))
    dealers = {row["key"] for row in rows if row["scope"] == "dealer"}
    assert dealers == {"'=cmd|'/C calc'!A0"}


def test_tables_cannot_read_reports(report, table_client):
    assert table_client("S01", "se-50kr").get("/api/v1/reports/").status_code == 403
    assert table_client("S01", "se-50kr").get(f"/api/v1/reports/{report.pk}.csv").status_code == 403
