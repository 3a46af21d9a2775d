"""The progressive bets as the books read them: the meters are owed, a jackpot from them costs nothing then."""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.utils import timezone

from audit.admin_reports import amount
from audit.reconciliation.services import report_run
from books.figures import progressive_books
from books.report_figures import PoolFigures
from books.report_reader import read_figures
from infra.gaming_day import gaming_day_of
from progressive.models import MeterEvent
from progressive.services import pool_create
from rounds.models import Seat
from tests.progressive.records import lit_wagers, us_rounds
from trail.services import SYSTEM

from .days import DAY, figures_stored, moved

D = Decimal


def _pool(code: str, currency: str, opening: str, closing: str, awards: str = "0", fixed: str = "0",
          contributions: str = "0", overflow: str = "0") -> PoolFigures:
    return PoolFigures.model_validate({
        "pool": code, "currency": currency, "events": 1, "opening": opening, "contributions": contributions,
        "awards": awards, "fixed_awards": fixed, "reseeds": "0", "adjustments": "0", "overflow": "0",
        "in": contributions, "out": awards, "closing": closing, "closing_overflow": overflow, "checks": [],
        "balanced": True,
    })


def test_what_the_bets_put_in_the_meter_is_the_cost_and_a_jackpot_from_it_is_not():
    casino = {"USD": SimpleNamespace(handle={"progressive": D("1000")})}
    # A quiet day: 200 into the meter, a fixed award of 100.
    quiet = progressive_books(casino, {"P": _pool("P", "USD", "10000", "10200", fixed="100", contributions="200")})
    assert (quiet["USD"].paid_win, quiet["USD"].debt_change, quiet["USD"].win) == (D("900"), D("200"), D("700"))
    assert quiet["USD"].hold_percent == D("70.0000")
    # The same bets on the day the meter paid a jackpot of 5,000: the cash is down 4,000, the house's win is not.
    jackpot = progressive_books(casino, {"P": _pool("P", "USD", "10000", "5200", awards="5000", contributions="200")})
    assert (jackpot["USD"].paid_win, jackpot["USD"].debt_change, jackpot["USD"].win) == (D("-4000"), D("-4800"),
                                                                                         D("800"))
    # Overflow kept aside is owed too; each currency has its own books, and its own pools only.
    two = progressive_books({**casino, "SEK": SimpleNamespace(handle={"progressive": D("500")})}, {
        "P": _pool("P", "USD", "0", "150", contributions="200", overflow="50"),
        "S": _pool("S", "SEK", "0", "100", contributions="100"),
    })
    assert (two["USD"].debt_closing, two["USD"].win, two["USD"].pools) == (D("200"), D("800"), ["P"])
    assert (two["SEK"].wagers, two["SEK"].win, two["SEK"].pools) == (D("500"), D("400"), ["S"])
    assert progressive_books(casino, {}) == {}


@pytest.mark.django_db
def test_a_days_report_carries_the_books_of_its_pool(table_client):
    client = table_client("U01", "us-30k")
    records = [moved(r, hours=0, prefix="b-") for r in us_rounds("U01", "books", 12)]
    for record in records:
        assert client.post("/api/v1/rounds/", record, format="json").status_code == 201
    figures = read_figures(report_run(day_from=DAY).figures)
    (books,) = figures.progressive.values()
    pool = next(iter(figures.pools.values()))
    seats = Seat.objects.filter(round__gaming_day=DAY)
    # From the seats, not the ledger: the wagers the tables sent, and what the bets left after awards.
    assert books.wagers == sum((w for r in records for w in lit_wagers(r)), D(0)) > 0
    assert books.paid_win == -sum((s.settled_progressive or 0 for s in seats), D(0))
    assert books.awards_from_meter == pool.awards and books.fixed_awards == pool.fixed_awards
    assert books.debt_change == (pool.closing + pool.closing_overflow + pool.closing_reserve
                                 - pool.opening - pool.opening_overflow - pool.opening_reserve)
    assert books.win == books.paid_win - books.debt_change != books.paid_win


@pytest.mark.django_db
def test_the_report_page_shows_the_books_and_says_when_a_report_has_none(table_client, staff):
    client = table_client("U01", "us-30k")
    for record in us_rounds("U01", "page", 4):
        client.post("/api/v1/rounds/", moved(record, hours=0, prefix="p-"), format="json")
    report = report_run(day_from=DAY)
    reader = staff("auditor")
    page = reader.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert "the house&#x27;s win" in page or "the house's win" in page
    # The shipped pool's terms are in force from 2000: its books hold the opening on the report's day.
    shipped = report.figures["pools"]["us-progressive"]
    opening = MeterEvent.objects.get(pool__code="us-progressive", seq=1)
    assert opening.kind == "reseed" and opening.round_id is None and DAY < gaming_day_of(opening.created_at)
    assert D(shipped["opening"]) == opening.amount and "us-progressive was opened" not in page
    # A pool created today with its terms from today opens after the report's day: the page says so, and by how much.
    made = pool_create(code="side-pool", currency="USD", wager="5.00", rate="0.20", reseed="1000.00",
                       lines=[{"category": "royal_flush", "qualifier": "hole", "kind": "percent", "amount": "100"}],
                       actor=SYSTEM)
    report = report_run(day_from=DAY)
    side = report.figures["pools"]["side-pool"]
    assert (D(side["opening"]), D(side["closing"]), side["balanced"]) == (0, 0, True)
    page = reader.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    said = f"side-pool was opened on gaming day {gaming_day_of(timezone.now())} with {amount(made.meter, 'USD')}"
    assert said in page and "us-progressive was opened" not in page
    stored = dict(report.figures)
    stored.pop("progressive")
    figures_stored(report, stored)
    page = reader.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert "were not recorded by this version of the report" in page
