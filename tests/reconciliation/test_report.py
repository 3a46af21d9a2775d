"""The report of a gaming day adds up to what the posted rounds say, by table, dealer, shift, player."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import transaction

from audit.models import ReconciliationReport
from audit.reconciliation.services import report_run
from books.statistics import trips_math
from rounds.models import TableConfigVersion
from tests.rollback import rolled_back_block

from .days import BETS, DAY, NEXT_DAY, Group, post_day

pytestmark = pytest.mark.django_db


def assert_groups(figures: dict, expected: dict, where: str) -> None:
    """``{key: {currency: figures}}`` against ``{key: {currency: Group}}``: the same keys and currencies."""
    assert {k: set(v) for k, v in figures.items()} == {k: set(v) for k, v in expected.items()}, where
    for key, by_currency in expected.items():
        for currency, group in by_currency.items():
            assert figures[key][currency]["currency"] == currency
            assert_group(figures[key][currency], group, f"{where} {key} {currency}")


def assert_group(figures: dict, group: Group, where: str) -> None:
    assert figures["rounds"] == group.rounds, where
    assert figures["void_rounds"] == group.void_rounds, where
    assert figures["hands"] == group.hands, where
    for bet in BETS:
        assert Decimal(figures["handle"][bet]) == group.handle[bet], (where, bet)
        assert Decimal(figures["win"][bet]) == group.win[bet], (where, bet)
    assert figures["mismatches"] == group.mismatches, where
    assert Decimal(figures["overpaid"]) == group.overpaid, where
    assert Decimal(figures["underpaid"]) == group.underpaid, where


@pytest.fixture(scope="module")
def reported(django_db_setup, django_db_blocker):
    """One posted day and its reports, shared by this module's tests, rolled back after them."""
    with django_db_blocker.unblock(), rolled_back_block():
        expected = post_day()
        reports = {
            "day": report_run(day_from=DAY),
            "next": report_run(day_from=NEXT_DAY),
            "range": report_run(day_from=DAY, day_to=NEXT_DAY),
        }
        yield expected, reports
        transaction.set_rollback(True)


@pytest.fixture
def day(reported):
    return reported[0]


@pytest.fixture
def report(reported):
    return reported[1]["day"]


def test_the_day_adds_up_by_table_dealer_shift_and_casino(day, report):
    assert report.status == ReconciliationReport.Status.COMPLETE
    figures = report.figures
    assert report.rounds == sum(g.rounds for g in day.casino.values())
    assert figures["currencies"] == ["SEK", "USD"]
    assert_groups({"casino": figures["casino"]}, {"casino": day.casino}, "casino")
    assert set(figures["tables"]) == {"S01", "S02", "U01"}
    assert_groups(figures["tables"], day.tables, "table")
    assert_groups(figures["dealers"], day.dealers, "dealer")
    assert set(figures["shifts"]) == {"14:00-22:00", "22:00-06:00"}
    assert_groups(figures["shifts"], day.shifts, "shift")


def test_players_are_rated_where_tables_send_their_ids(day, report):
    figures = report.figures
    assert {p: set(c) for p, c in figures["players"].items()} == {p: set(c) for p, c in day.players.items()}
    for player, by_currency in day.players.items():
        for currency, group in by_currency.items():
            got = figures["players"][player][currency]
            assert got["hands"] == group.hands, player
            for bet in BETS:
                assert Decimal(got["handle"][bet]) == group.handle[bet], (player, bet)
                assert Decimal(got["win"][bet]) == group.win[bet], (player, bet)


def test_theoretical_win_uses_the_exact_trips_edge_and_the_configured_base_edge(day, report):
    figures = report.figures
    trips_pays = TableConfigVersion.objects.get(config__name="se-50kr").rules().trips_pays
    edge = trips_math(trips_pays).edge
    s01 = figures["tables"]["S01"]["SEK"]
    trips_handle = day.tables["S01"]["SEK"].handle["trips"]
    assert Decimal(s01["bands"]["trips"]["expected"]) == (edge * trips_handle).quantize(Decimal("0.01"))
    assert Decimal(s01["bands"]["base"]["expected"]) == (
        Decimal("0.02185") * day.tables["S01"]["SEK"].handle["ante"]).quantize(Decimal("0.01"))
    band = s01["bands"]["total"]
    assert Decimal(band["low_997"]) < Decimal(band["low_95"]) < Decimal(band["expected"]) < Decimal(band["high_95"])
    win = day.tables["S01"]["SEK"].win
    assert Decimal(s01["hold_percent"]["trips"]) == (win["trips"] * 100 / trips_handle).quantize(Decimal("0.0001"))


def test_the_pool_balances_against_its_ledger(day, report):
    figures = report.figures
    pool = figures["pools"]["us-progressive"]
    # The pool's opening reseed was recorded today, after the day's rounds were dealt,
    # but the shipped pool's books open in 2000: the old day opens at it.
    assert Decimal(pool["opening"]) == Decimal("10000.00") and pool["events_after"] == 0
    assert Decimal(pool["contributions"]) == day.lit_wagers * Decimal("1.00")
    assert (Decimal(pool["opening"]) + Decimal(pool["in"]) - Decimal(pool["out"])
            == Decimal(pool["closing"]))
    assert pool["currency"] == "USD"
    assert pool["balanced"] is True
    assert {c["check"] for c in pool["checks"]} == {
        "kinds", "ledger", "running_meter", "pool_row", "days", "ledger_turn", "readings", "continuity"}


def test_every_round_is_judged_again_without_drift_and_the_chain_holds(day, report):
    assert report.figures["reverification"]["rounds"] == sum(g.rounds for g in day.casino.values())
    assert report.drift == 0
    assert report.chain_ok is True
    chain = report.figures["chain"]
    # The rounds were posted today: no audit event was written on their (past) gaming day.
    assert chain["day_events"] == 0 and chain["day_last_hash"] is None and report.day_last_hash == ""
    assert chain["head_at_report"]["seq"] > 0 and len(chain["head_at_report"]["hash"]) == 64


def test_the_next_day_holds_only_its_own_rounds(reported):
    report = reported[1]["next"]
    assert report.rounds == 5
    assert set(report.figures["tables"]) == {"S02"}
    assert report.figures["shifts"].keys() == {"06:00-14:00"}


def test_both_ways_of_streaming_stored_rounds_agree(reported):
    from audit.reconciliation.selectors import stored_rounds, stored_rounds_portable
    from rounds.models import Table

    for table in Table.objects.filter(code__in=["S02", "U01"]):
        span = {"table_id": table.pk, "day_from": DAY, "day_to": DAY}
        fast = list(stored_rounds(**span))
        assert fast and fast == list(stored_rounds_portable(**span))
        assert any(r.events for r in fast) == (table.code == "U01")


def test_a_range_is_reconciled_whole_and_the_stored_days_roll_up_to_it(reported):
    from books.report_figures import figures_json
    from audit.reconciliation.selectors import month_to_date, report_rollup

    reports = reported[1]
    whole = reports["range"].figures
    assert sum(c["rounds"] for c in whole["casino"].values()) == reports["day"].rounds + reports["next"].rounds
    rolled = figures_json(report_rollup(day_from=DAY, day_to=NEXT_DAY))
    assert rolled["days"] == [str(DAY), str(NEXT_DAY)] and rolled["missing_days"] == []
    assert rolled["casino"] == whole["casino"]
    for scope in ("tables", "dealers", "shifts", "players"):
        assert rolled[scope] == whole[scope], scope
    pool, at_once = rolled["pools"]["us-progressive"], whole["pools"]["us-progressive"]
    for name in ("opening", "closing", "in", "out", "contributions", "awards", "fixed_awards", "reseeds",
                 "adjustments", "events"):
        assert pool[name] == at_once[name], name
    assert pool["balanced"] and at_once["balanced"]

    month = figures_json(month_to_date(day=NEXT_DAY))
    assert month["days"] == [str(DAY), str(NEXT_DAY)]
    assert len(month["missing_days"]) == NEXT_DAY.day - 2
