"""A pool's day read from the mark of the day before says what reading the whole ledger says, and
a mark changed after the fact, or an old ledger row, fails a check.

Each report keeps where it left the pool's ledger (its mark); the next
day's report reads only the events from there. These tests build days with
a round stored late and an adjustment, chain their reports, and hold every
figure against the same day read from the ledger's first event; then they
change a kept mark and an old ledger row behind the service's back.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from decimal import Decimal

import pytest

from audit.models import ReconciliationReport
from audit.reconciliation.chain import segment_in_turn
from audit.reconciliation.config import reconciliation_settings
from audit.reconciliation.pool_ledger import pool_ledger_figures, pool_mark_reported
from audit.reconciliation.selectors import window_of
from audit.reconciliation.services import report_run
from books.report_figures import figures_json
from progressive.models import MeterEvent, Pool
from progressive.services import meter_adjust
from tests.progressive.records import us_rounds
from trail.services import SYSTEM

from .days import DAY, figures_stored, moved
from .test_pool_days import POOL, _check, _pool, _post, _tamper, _today

pytestmark = pytest.mark.django_db
DAYS = [DAY - timedelta(days=3 - i) for i in range(4)]


def _post_day(client, i: int, prefix: str, count: int = 3) -> None:
    hours = -24 * (DAY - DAYS[i]).days
    _post(client, [moved(r, hours=hours, prefix=prefix) for r in us_rounds("U01", f"{prefix}{i}", count, start=3 * i)])


def _read_whole(day_from, day_to=None) -> dict:
    """The range's pool figures read from the ledger's first event, as a report without a mark reads them."""
    day_to = day_to or day_from
    start, end = window_of(day_from=day_from, day_to=day_to, clock=reconciliation_settings())
    reported_closing, _ = pool_mark_reported(pool_code=POOL, day=day_from - timedelta(days=1))
    return figures_json(pool_ledger_figures(pool=Pool.objects.get(code=POOL), day_from=day_from, day_to=day_to,
                                            start=start, end=end, reported_closing=reported_closing))


def _same_figures(chained: dict, whole: dict) -> None:
    skip = {"checks", "read", "balanced"}
    assert {k: v for k, v in chained.items() if k not in skip} == {k: v for k, v in whole.items() if k not in skip}
    assert [(c["check"], c["ok"]) for c in chained["checks"]] == [(c["check"], c["ok"]) for c in whole["checks"]]


@pytest.fixture
def u01(table_client):
    return table_client("U01", "us-30k")


def _opened_before_the_days() -> None:
    """The pool's opening reseed moved to before the first day: a pool opened today would be an event
    after every old day, so each report would read from it."""
    opened = datetime.combine(DAYS[0] - timedelta(days=2), time(12), tzinfo=UTC)
    _tamper("UPDATE progressive_meterevent SET created_at = %s "
            "WHERE pool_id = (SELECT id FROM progressive_pool WHERE code = %s)", [opened, POOL])


@pytest.fixture
def chained(u01):
    """Four days reported in order, a late round of the second day stored after it was reported; each
    report beside the same day read from the ledger's first event when it was made."""
    _opened_before_the_days()
    for i in range(4):
        _post_day(u01, i, "p")
    made = []

    def report(day):
        made.append((report_run(day_from=day), _read_whole(day)))

    report(DAYS[0])
    report(DAYS[1])
    _post_day(u01, 1, "late", count=2)
    meter_adjust(pool=Pool.objects.get(code=POOL), delta=Decimal("-25.00"), actor=SYSTEM, reason="display reset")
    report(DAYS[2])
    report(DAYS[3])
    return made


def test_each_day_read_from_the_mark_says_what_the_whole_ledger_says(chained):
    for i, (report, whole) in enumerate(chained):
        pool = _pool(report)
        # The first report had none to start from; each later one starts where the one before left off.
        if i == 0:
            assert pool["read"]["from_report"] is None and pool["read"]["events_from"] == 1
        else:
            previous = chained[i - 1][0]
            assert pool["read"]["from_report"] == previous.pk
            assert pool["read"]["events_from"] == _pool(previous)["mark"]["after_from"] > 1
        _same_figures(pool, whole)
    # The late round fails the third day's continuity, read either way; the adjustment is today's.
    third = _pool(chained[2][0])
    assert _failed(third) == {"continuity"}
    assert all(_pool(r)["adjustments"] == "0" for r, _ in chained)
    today = _pool(report_run(day_from=DAYS[3] + timedelta(days=1), day_to=_today()))
    assert today["balanced"], today["checks"]
    assert Decimal(today["adjustments"]) == Decimal("-25.00")
    assert Decimal(today["closing"]) == Pool.objects.get(code=POOL).meter == Decimal(today["mark"]["sum"])
    assert today["mark"]["n"] == today["mark"]["top"] == MeterEvent.objects.filter(pool__code=POOL).count()


def test_a_range_read_from_a_mark_says_what_the_whole_ledger_says(chained):
    both = _pool(report_run(day_from=DAYS[2], day_to=DAYS[3]))
    assert both["read"]["from_report"] == chained[1][0].pk
    _same_figures(both, _read_whole(DAYS[2], DAYS[3]))
    assert both["events"] == _pool(chained[2][0])["events"] + _pool(chained[3][0])["events"]


def _edit_mark(report: ReconciliationReport, **changes) -> None:
    """The report's kept figures changed behind the service's back (a report row is not append-only)."""
    figures = report.figures
    pool = figures["pools"][POOL]
    for name, value in changes.items():
        if name in pool["mark"]:
            pool["mark"][name] = value
        else:
            pool[name] = value
    figures_stored(report, figures)


def _failed(pool: dict) -> set[str]:
    return {c["check"] for c in pool["checks"] if not c["ok"]}


def test_a_closing_changed_in_the_report_before_fails_the_days_check(u01):
    _opened_before_the_days()
    _post_day(u01, 0, "c")
    _post_day(u01, 1, "c")
    first = report_run(day_from=DAYS[0])
    assert _pool(report_run(day_from=DAYS[1]))["balanced"]
    # The opening follows the changed closing, so continuity agrees with it: the whole ledger does not.
    _edit_mark(first, closing=str(Decimal(_pool(first)["closing"]) + 100))
    pool = _pool(report_run(day_from=DAYS[1]))
    assert _failed(pool) == {"days"}
    assert f"the report of {DAYS[0]}" in _check(pool, "days")["problems"][0]


@pytest.mark.parametrize("name, change", [("sum", Decimal("0.50")), ("n", 1), ("top", -1)])
def test_a_mark_changed_in_the_report_before_fails_the_pool_row_check(u01, name, change):
    _opened_before_the_days()
    _post_day(u01, 0, "m")
    _post_day(u01, 1, "m")
    first = report_run(day_from=DAYS[0])
    kept = _pool(first)["mark"][name]
    _edit_mark(first, **{name: str(Decimal(kept) + change) if name == "sum" else kept + change})
    pool = _pool(report_run(day_from=DAYS[1]))
    assert "pool_row" in _failed(pool) and pool["balanced"] is False


def test_an_old_ledger_row_changed_fails_the_turn_walk_only_the_whole_read_would_see(u01):
    _opened_before_the_days()
    _post_day(u01, 0, "o")
    _post_day(u01, 1, "o")
    first = _pool(report_run(day_from=DAYS[0]))
    assert first["mark"]["after_from"] > 2
    # An event of the first day, before where the next day's read starts.
    target = MeterEvent.objects.get(pool__code=POOL, seq=first["mark"]["after_from"] - 1)
    _tamper("UPDATE progressive_meterevent SET amount = amount + 1, delta = delta + 1 WHERE id = %s", [target.pk])
    pool = _pool(report_run(day_from=DAYS[1]))
    assert pool["read"]["turn"] == [1, first["mark"]["after_from"] - 1]
    assert _failed(pool) == {"ledger_turn"}
    assert any(f"event {target.seq + 1}" in p or f"event {target.seq}" in p
               for p in _check(pool, "ledger_turn")["problems"])
    # Read from the first event, the sum of the ledger no longer meets the meter either.
    assert "pool_row" in _failed(_read_whole(DAYS[1]))


def test_the_turn_walks_every_earlier_segment_in_as_many_nights():
    assert segment_in_turn(last=0, day=DAY, size=10) is None
    assert segment_in_turn(last=7, day=DAY, size=10) == (1, 7)
    nights = [segment_in_turn(last=25, day=DAY + timedelta(days=i), size=10) for i in range(3)]
    assert sorted(nights) == [(1, 10), (11, 20), (21, 25)]
    assert segment_in_turn(last=25, day=DAY + timedelta(days=3), size=10) == nights[0]


@pytest.mark.parametrize("change", [{"mark": {"top": "x"}}, {"mark": "gone"}, {"closing_reserve": None}])
def test_a_mark_not_in_its_shape_reads_every_event(u01, change):
    _opened_before_the_days()
    _post_day(u01, 0, "s")
    _post_day(u01, 1, "s")
    first = report_run(day_from=DAYS[0])
    _edit_mark(first, **change)
    pool = _pool(report_run(day_from=DAYS[1]))
    assert pool["read"]["from_report"] is None and pool["read"]["events_from"] == 1
    assert pool["balanced"], pool["checks"]


def test_a_closing_that_is_not_an_amount_fails_continuity(u01):
    _opened_before_the_days()
    _post_day(u01, 0, "z")
    first = report_run(day_from=DAYS[0])
    _edit_mark(first, closing="NaN")
    pool = _pool(report_run(day_from=DAYS[1]))
    assert _failed(pool) == {"continuity"} and "not an amount" in _check(pool, "continuity")["problems"][0]
