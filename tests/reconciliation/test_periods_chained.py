"""A day's month and year to date are the day before's, as its report kept them, plus the day: the
same figures as adding up every day's report again, which they fall back to when a day of the period
was reconciled again since."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from audit.reconciliation import selectors
from audit.reconciliation.services import report_run
from books.report_figures import figures_json
from tests import examples

from .days import DAY, moved

pytestmark = pytest.mark.django_db
DAYS = [DAY - timedelta(days=2 - i) for i in range(4)]
PERIODS = {"month_to_date": DAY.replace(day=1), "year_to_date": DAY.replace(month=1, day=1)}


@pytest.fixture
def posted(table_client):
    client = table_client("S01", "se-50kr")
    swedish = examples.load("se-50kr.jsonl")
    for i, day in enumerate(DAYS):
        hours = 24 * (day - DAY).days
        for example in swedish[3 * i: 3 * i + 3]:
            response = client.post("/api/v1/rounds/", moved(example["record"], hours=hours, prefix=f"p{i}-"),
                                   format="json")
            assert response.status_code == 201, response.json()


@pytest.fixture
def reads(monkeypatch):
    """The ranges of days whose reports were read, in order."""
    read = []
    original = selectors._rollup_rows

    def recorded(*, day_from, day_to, scopes):
        read.append((day_from, day_to))
        return original(day_from=day_from, day_to=day_to, scopes=scopes)

    monkeypatch.setattr(selectors, "_rollup_rows", recorded)
    return read


def _whole(period: str, day) -> dict:
    from audit.reconciliation.to_date import PERIOD_SCOPES

    return figures_json(selectors.report_rollup(day_from=PERIODS[period], day_to=day, scopes=PERIOD_SCOPES))


def test_each_day_adds_itself_to_the_day_befores_periods(posted, reads):
    for day in DAYS:
        reads.clear()
        report = report_run(day_from=day)
        for period in PERIODS:
            assert report.figures[period] == _whole(period, day), (day, period)
        if day == DAYS[0]:
            # No report before it: every day of each period is read.
            assert (PERIODS["month_to_date"], day) in reads and (PERIODS["year_to_date"], day) in reads
        else:
            # The day's own report alone, once for each period.
            assert reads[:2] == [(day, day), (day, day)]
    assert len(report.figures["month_to_date"]["reports"]) == len(DAYS)


def test_a_day_reconciled_again_since_makes_the_next_read_every_day(posted, reads):
    for day in DAYS[:3]:
        report_run(day_from=day)
    again = report_run(day_from=DAYS[1])  # a new version of a day the kept periods added up
    assert again.version == 2
    reads.clear()
    last = report_run(day_from=DAYS[3])
    assert reads[:2] == [(PERIODS["month_to_date"], DAYS[3]), (PERIODS["year_to_date"], DAYS[3])]
    for period in PERIODS:
        assert last.figures[period] == _whole(period, DAYS[3])
        assert again.pk in last.figures[period]["reports"]


def test_a_kept_period_that_does_not_fit_is_not_taken(reads):
    month = DAY.replace(day=1)
    fits = {"day_from": str(month), "day_to": str(DAY - timedelta(days=1)), "reports": [], "drift": 0,
            "casino": {}, "tables": {}, "dealers": {}, "pools": {}, "days": [],
            "days_dealt": {"tables": {}, "dealers": {}}}
    selectors.report_rollup_on(kept=fits, day_from=month, day_to=DAY, scopes=("tables", "dealers"))
    assert reads == [(DAY, DAY)]
    unfits = [{**fits, "day_to": str(DAY - timedelta(days=2))}, {**fits, "reports": [12345]},
              {**fits, "day_from": str(month - timedelta(days=1))},
              {k: v for k, v in fits.items() if k != "reports"}, None,
              {k: v for k, v in fits.items() if k != "pools"}, {**fits, "casino": {"SEK": "x"}},
              {**fits, "days": ["not a day"]},
              # kept before it counted each group's days dealt
              {k: v for k, v in fits.items() if k != "days_dealt"}]
    for unfit in unfits:
        reads.clear()
        selectors.report_rollup_on(kept=unfit, day_from=month, day_to=DAY, scopes=("tables", "dealers"))
        assert reads == [(month, DAY)], unfit


def test_a_table_s_days_to_date_are_the_days_it_dealt(table_client, admin_client):
    """Four days reported, and S02 dealt on only one of them: its month to date says 1 day dealt, on
    the rolled-on figures and on the report's page."""
    s01 = table_client("S01", "se-50kr")
    s02 = table_client("S02", "se-50kr")
    swedish = examples.load("se-50kr.jsonl")
    for i, day in enumerate(DAYS):
        hours = 24 * (day - DAY).days
        posts = [(s01, "S01")] + ([(s02, "S02")] if day == DAYS[1] else [])
        for client, code in posts:
            record = dict(moved(swedish[i]["record"], hours=hours, prefix=f"{code}-{i}-"), table=code)
            assert client.post("/api/v1/rounds/", record, format="json").status_code == 201
    for day in DAYS:
        report = report_run(day_from=day)
    month = report.figures["month_to_date"]
    assert len(month["days"]) == 4
    assert month["days_dealt"]["tables"] == {"S01": {"SEK": 4}, "S02": {"SEK": 1}}
    assert _whole("month_to_date", DAYS[-1])["days_dealt"] == month["days_dealt"]
    page = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    to_date = page.split("days dealt", 1)[1]
    assert re.search(r"<td>month to date</td>\s*<td>S02</td>\s*<td>1</td>", to_date), to_date[:2000]
