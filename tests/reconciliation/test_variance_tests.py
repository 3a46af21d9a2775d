"""The regulators' variance tests: each tripped just outside its band or threshold, never just inside."""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from decimal import Decimal as D

import pytest

from books.variance_tests import (
    DEFAULTS,
    Period,
    PeriodFigures,
    Scope,
    VarianceSetting,
    VarianceSettings,
    VarianceTest,
    comar,
    kansas,
    ohio,
    variance_trips,
)

DAY = date(2026, 11, 28)
FIRST = {Period.DAY: DAY, Period.MONTH_TO_DATE: date(2026, 11, 1), Period.YEAR_TO_DATE: date(2026, 1, 1),
         Period.MONTH: date(2026, 11, 1), Period.ROLLING_30: date(2026, 10, 30),
         Period.LIFETIME: date(2024, 3, 1)}
# The 95 % interval written out by hand, not through the module's constant.
Z = D("1.959963984540054")


def group(*, win, handle="10000.00", theoretical="100.00", sd="100", period=Period.DAY,
          scope=Scope.TABLE, key="S01", currency="SEK") -> PeriodFigures:
    return PeriodFigures(
        scope=scope, key=key, currency=currency, period=period, day_from=FIRST[period], day_to=DAY,
        handle=D(handle), win=D(win), theoretical=D(theoretical), sd=D(sd),
    )


# ---- COMAR: the 95 % interval of the theoretical win ---------------------------------

HIGH = D(100) + Z * D(100)  # 295.9963984540054
LOW = D(100) - Z * D(100)  # -95.9963984540054


@pytest.mark.parametrize("win", ["295.99", "-95.99", "100.00", str(HIGH), str(LOW)])
def test_comar_a_win_inside_the_interval_or_on_its_limit_does_not_trip(win):
    assert comar([group(win=win)]) == []


@pytest.mark.parametrize("win,side", [("296.00", "above"), ("-96.00", "below"), ("5000.00", "above")])
def test_comar_a_win_just_outside_the_interval_trips_either_side(win, side):
    [trip] = comar([group(win=win)])
    assert (trip.test, trip.scope, trip.key, trip.currency, trip.period) == ("comar", "table", "S01", "SEK", "day")
    assert (trip.day_from, trip.day_to) == (DAY, DAY)
    assert trip.figures["win"] == win and trip.figures["theoretical"] == "100.00"
    assert trip.figures["sd"] == "100" and trip.figures["handle"] == "10000.00"
    assert D(trip.figures["low_95"]) == LOW.quantize(D("0.000001"))
    assert D(trip.figures["high_95"]) == HIGH.quantize(D("0.000001"))
    assert trip.figures["z"] == str(((D(win) - 100) / 100).quantize(D("0.0001")))
    assert side in trip.detail and "SEK" in trip.detail and "S01" in trip.detail


@pytest.mark.parametrize("period", [Period.DAY, Period.MONTH_TO_DATE, Period.YEAR_TO_DATE])
@pytest.mark.parametrize("scope", [Scope.TABLE, Scope.DEALER])
def test_comar_judges_tables_and_dealers_for_each_of_its_periods(period, scope):
    [trip] = comar([group(win="296.00", period=period, scope=scope, key="D007")])
    assert (trip.scope, trip.key, trip.period, trip.day_from) == (scope, "D007", period, FIRST[period])
    assert type(trip.scope) is str and type(trip.period) is str  # plain text, as the finding stores it


def test_comar_passes_over_periods_it_does_not_judge():
    assert comar([group(win="5000.00", period=Period.ROLLING_30), group(win="5000.00", period=Period.MONTH)]) == []


def test_comar_never_trips_a_group_with_zero_handle_or_no_spread():
    assert comar([group(win="5000.00", handle="0")]) == []
    assert comar([group(win="5000.00", sd="0")]) == []


def test_comar_judges_each_group_on_its_own():
    trips = comar([group(win="0.00", key="S01"), group(win="-500.00", key="S02"), group(win="900.00", key="S03")])
    assert [t.key for t in trips] == ["S02", "S03"]


# ---- Kansas: the month's hold against its base ------------------------------------------

# Handle 10,000.00 and theoretical 218.50: a theoretical hold of 2.1850 %.
def month(win, *, scope=Scope.TABLE, period=Period.MONTH_TO_DATE, handle="10000.00") -> PeriodFigures:
    return group(win=win, theoretical="218.50", handle=handle, scope=scope, period=period)


@pytest.mark.parametrize("win", ["518.50", "-81.50", "218.50"])  # 5.1850 %, −0.8150 %: exactly 3 points off
def test_kansas_a_hold_at_most_threshold_points_from_the_theoretical_does_not_trip(win):
    assert kansas([month(win)], threshold=D(3), base_hold=None) == []


@pytest.mark.parametrize("win,hold,deviation,side", [
    ("518.51", "5.1851", "3.0001", "above"),
    ("-81.51", "-0.8151", "-3.0001", "below"),
])
def test_kansas_a_hold_just_beyond_the_threshold_trips_either_side(win, hold, deviation, side):
    [trip] = kansas([month(win)], threshold=D(3), base_hold=None)
    assert trip.test == "kansas" and trip.period == "month_to_date"
    assert trip.figures["hold_percent"] == hold
    assert trip.figures["base_percent"] == "2.1850" and trip.figures["base"] == "theoretical"
    assert trip.figures["deviation"] == deviation and trip.figures["threshold"] == "3"
    # The hold the finding shows, computed again from its own figures.
    shown = D(trip.figures["win"]) / D(trip.figures["handle"]) * 100
    assert shown.quantize(D("0.0001")) == D(hold)
    assert side in trip.detail and "SEK" in trip.detail and "theoretical hold" in trip.detail


def test_kansas_a_fixed_base_replaces_the_theoretical_hold():
    base = D("20")
    assert kansas([month("2300.00")], threshold=D(3), base_hold=base) == []  # 23.0000 %
    [trip] = kansas([month("2300.01")], threshold=D(3), base_hold=base)  # 23.0001 %
    assert trip.figures["base_percent"] == "20.0000" and trip.figures["base"] == "fixed"
    # The theoretical hold (2.1850 %) would have tripped this one; the fixed base does not.
    assert kansas([month("1900.00")], threshold=D(3), base_hold=base) == []


def test_kansas_a_half_ten_thousandth_rounds_up_before_it_is_compared():
    # 518.505 / 10,000 = 5.18505 %, shown and judged as 5.1851 %: 3.0001 points off.
    [trip] = kansas([month("518.505")], threshold=D(3), base_hold=None)
    assert trip.figures["hold_percent"] == "5.1851" and trip.figures["deviation"] == "3.0001"


def test_kansas_judges_tables_months_only_and_never_zero_handle():
    assert kansas([month("5000.00", scope=Scope.DEALER)], threshold=D(3), base_hold=None) == []
    assert kansas([month("5000.00", period=Period.DAY)], threshold=D(3), base_hold=None) == []
    assert kansas([month("5000.00", handle="0")], threshold=D(3), base_hold=None) == []
    assert len(kansas([month("5000.00", period=Period.MONTH)], threshold=D(3), base_hold=None)) == 1


def test_kansas_refuses_a_negative_or_float_threshold():
    with pytest.raises(ValueError, match="negative"):
        kansas([month("0")], threshold=D(-1), base_hold=None)
    with pytest.raises(TypeError):
        kansas([month("0")], threshold=3.0, base_hold=None)


# ---- Ohio: the last 30 days' payout against the lifetime's ---------------------------------

# Lifetime: 1,000,000.00 wagered, 10,000.00 won: a payout of 99.0000 %.
def pair(win, *, handle="10000.00", lifetime_handle="1000000.00", key="S01"):
    recent = group(win=win, handle=handle, period=Period.ROLLING_30, key=key)
    lifetime = group(win="10000.00", handle=lifetime_handle, period=Period.LIFETIME, key=key)
    return recent, lifetime


@pytest.mark.parametrize("win", ["500.00", "-300.00", "100.00"])  # 95.0000 %, 103.0000 %: 4 points off
def test_ohio_a_payout_at_most_threshold_points_from_the_lifetime_does_not_trip(win):
    assert ohio([pair(win)], threshold=D(4)) == []


@pytest.mark.parametrize("win,payout,deviation,side", [
    ("500.01", "94.9999", "-4.0001", "below"),
    ("-300.01", "103.0001", "4.0001", "above"),
])
def test_ohio_a_payout_just_beyond_the_threshold_trips_either_side(win, payout, deviation, side):
    [trip] = ohio([pair(win)], threshold=D(4))
    assert (trip.test, trip.period, trip.day_from, trip.day_to) == ("ohio", "rolling_30", FIRST[Period.ROLLING_30], DAY)
    assert trip.figures["payout_percent"] == payout
    assert trip.figures["lifetime_payout_percent"] == "99.0000"
    assert trip.figures["deviation"] == deviation and trip.figures["threshold"] == "4"
    assert trip.figures["lifetime_day_from"] == "2024-03-01"
    # The payout computed again from the finding's own figures.
    handle, won = D(trip.figures["handle"]), D(trip.figures["win"])
    assert ((handle - won) / handle * 100).quantize(D("0.0001")) == D(payout)
    assert side in trip.detail and "SEK" in trip.detail


def test_ohio_never_trips_a_table_with_zero_handle_in_either_period():
    assert ohio([pair("5000.00", handle="0")], threshold=D(4)) == []
    assert ohio([pair("5000.00", lifetime_handle="0")], threshold=D(4)) == []


def test_ohio_refuses_pairs_that_are_not_one_tables_30_days_and_lifetime():
    recent, lifetime = pair("0")
    with pytest.raises(ValueError, match="rolling_30, lifetime"):
        ohio([(lifetime, recent)], threshold=D(4))
    other = group(win="0", period=Period.LIFETIME, key="S02")
    with pytest.raises(ValueError, match="one group's"):
        ohio([(recent, other)], threshold=D(4))
    dealer = group(win="0", period=Period.ROLLING_30, scope=Scope.DEALER)
    dealer_life = group(win="0", period=Period.LIFETIME, scope=Scope.DEALER)
    with pytest.raises(ValueError, match="table"):
        ohio([(dealer, dealer_life)], threshold=D(4))
    with pytest.raises(ValueError, match="negative"):
        ohio([pair("0")], threshold=D("-0.0001"))


# ---- the pieces together --------------------------------------------------------------------


def test_only_the_enabled_tests_run():
    groups, months, pairs = [group(win="5000.00")], [month("5000.00")], [pair("5000.00")]
    everything = VarianceSettings(
        comar=VarianceSetting(VarianceTest.COMAR, enabled=True),
        kansas=VarianceSetting(VarianceTest.KANSAS, enabled=True, threshold=D(3)),
        ohio=VarianceSetting(VarianceTest.OHIO, enabled=True, threshold=D(4)),
    )
    trips = variance_trips(settings=everything, groups=groups, months=months, pairs=pairs)
    assert sorted(t.test for t in trips) == ["comar", "kansas", "ohio"]
    defaults = VarianceSettings(**{t.value: DEFAULTS[t] for t in VarianceTest})
    trips = variance_trips(settings=defaults, groups=groups, months=months, pairs=pairs)
    assert [t.test for t in trips] == ["comar"]


def test_the_settings_as_json_name_every_test():
    settings = VarianceSettings(**{t.value: DEFAULTS[t] for t in VarianceTest})
    assert settings.as_json() == {
        "comar": {"enabled": True, "threshold": None, "base_hold": None},
        "kansas": {"enabled": False, "threshold": "3", "base_hold": None},
        "ohio": {"enabled": False, "threshold": "4", "base_hold": None},
    }


def test_figures_are_decimals_of_known_scopes_and_periods():
    with pytest.raises(TypeError, match="win"):
        PeriodFigures(scope="table", key="S01", currency="SEK", period="day", day_from=DAY, day_to=DAY,
                      handle=D(1), win=1.5, theoretical=D(0), sd=D(1))
    fields = dict(key="S01", currency="SEK", day_from=DAY, day_to=DAY, handle=D(1), win=D(0),
                  theoretical=D(0), sd=D(1))
    with pytest.raises(ValueError):
        PeriodFigures(scope="table", period="week", **fields)
    with pytest.raises(ValueError):
        PeriodFigures(scope="shift", period="day", **fields)


def test_the_module_imports_nothing_of_django():
    code = ("import sys, books.variance_tests; "
            "sys.exit(any(m == 'django' or m.startswith('django.') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
