"""A pool's day holds exactly its own events, adds up across days, and its balance check can fail.

Every ledger event belongs to one gaming day: a round's event to its round's
day, however late the round was stored; a pool's opening reseed to the moment
its books open (``progressive.selectors.books_opened``), which may be before it
was recorded; any other event a person made (an adjustment) to the day it was
recorded. These tests post rounds of an old day, late rounds after that day was
reported, pools opened with their terms dated back and not, an adjustment today,
and a ledger row changed behind the service's back.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.utils import timezone

from audit.reconciliation.config import reconciliation_settings
from audit.reconciliation.selectors import report_rollup
from audit.reconciliation.services import report_run
from books.report_figures import figures_json
from infra.gaming_day import gaming_day_of
from progressive.models import MeterEvent, Pool
from progressive.services import meter_adjust, pool_create
from tests.insider import as_owner
from tests.progressive.records import contribution, lit_wagers, us_rounds
from trail.services import SYSTEM

from .days import DAY, moved

pytestmark = pytest.mark.django_db
POOL = "us-progressive"
TRIGGER = "progressive_meterevent_append_only"
STOCKHOLM = ZoneInfo("Europe/Stockholm")


def _post(client, records) -> None:
    for record in records:
        response = client.post("/api/v1/rounds/", record, format="json")
        assert response.status_code == 201, response.json()


def _contributed(records) -> Decimal:
    return sum((contribution(w) for r in records for w in lit_wagers(r)), Decimal(0))


def _pool(report) -> dict:
    return report.figures["pools"][POOL]


def _check(pool: dict, name: str) -> dict:
    return next(c for c in pool["checks"] if c["check"] == name)


def _today():
    clock = reconciliation_settings()
    return gaming_day_of(timezone.now(), time_zone=clock.time_zone, cutoff_hour=clock.cutoff_hour)


@pytest.fixture
def u01(table_client):
    return table_client("U01", "us-30k")


def test_days_of_old_rounds_posted_today_hold_only_their_own_events(u01):
    """Four old days posted on one day: each day opens where the days before it closed."""
    days = [DAY - timedelta(days=3 - i) for i in range(4)]
    posted = {}
    for i, day in enumerate(days):
        records = [moved(r, hours=-24 * (3 - i), prefix=f"d{i}-") for r in us_rounds("U01", "old", 3, start=3 * i)]
        # Keep to the rounds that award nothing, so that each day's meter moves by its contributions alone.
        records = [r for r in records if not any(s.get("paid", {}).get("progressive") for s in r["seats"])]
        _post(u01, records)
        posted[day] = records
    reports = [report_run(day_from=day) for day in days]
    # The opening reseed was recorded today, but the shipped pool's terms are in force from 2000:
    # its books hold the opening from then, so every old day starts from it.
    opening = Decimal("10000.00")
    for day, report in zip(days, reports):
        pool = _pool(report)
        assert pool["balanced"], pool["checks"]
        assert Decimal(pool["opening"]) == opening, day
        assert Decimal(pool["contributions"]) == _contributed(posted[day]), day
        assert Decimal(pool["closing"]) == opening + Decimal(pool["in"]) - Decimal(pool["out"])
        opening = Decimal(pool["closing"])
    rolled = figures_json(report_rollup(day_from=days[0], day_to=days[-1]))["pools"][POOL]
    whole = _pool(report_run(day_from=days[0], day_to=days[-1]))
    for name in ("opening", "closing", "contributions", "awards", "fixed_awards", "reseeds", "in", "out", "events"):
        assert rolled[name] == whole[name], name
    assert rolled["balanced"] and whole["balanced"]
    # Every day up to today adds up to the meter now.
    today = _pool(report_run(day_from=days[-1] + timedelta(days=1), day_to=_today()))
    assert Decimal(today["closing"]) == Pool.objects.get(code=POOL).meter
    assert Decimal(today["reseeds"]) == 0 and today["balanced"]


def _pool_opened(code: str, **terms) -> Pool:
    return pool_create(code=code, currency="USD", wager="5.00", rate="0.20", reseed="1000.00", actor=SYSTEM,
                       lines=[{"category": "royal_flush", "qualifier": "hole", "kind": "percent", "amount": "100"}],
                       **terms)


def test_a_pools_opening_belongs_to_the_day_its_books_open():
    """Recorded today, the opening of a pool with its terms from DAY is DAY's; one with terms from now, today's."""
    dated = _pool_opened("dated", effective_from=datetime(DAY.year, DAY.month, DAY.day, 12, tzinfo=STOCKHOLM))
    plain = _pool_opened("plain")
    assert gaming_day_of(MeterEvent.objects.get(pool=dated, seq=1).created_at) == _today() > DAY
    pools = {day: report_run(day_from=day).figures["pools"] for day in (DAY - timedelta(days=1), DAY, _today())}
    figures = {(code, day): tuple(Decimal(pools[day][code][name]) for name in ("opening", "reseeds", "closing"))
               for code in ("dated", "plain") for day in pools}
    assert figures == {
        ("dated", DAY - timedelta(days=1)): (0, 0, 0),
        ("dated", DAY): (0, 1000, 1000),
        ("dated", _today()): (1000, 0, 1000),
        ("plain", DAY - timedelta(days=1)): (0, 0, 0),
        ("plain", DAY): (0, 0, 0),
        ("plain", _today()): (0, 1000, 1000),
    }
    assert all(pools[day][code]["balanced"] for day in pools for code in ("dated", "plain"))


def test_a_round_stored_late_moves_its_own_day_and_the_next_report_says_so(u01):
    early = [moved(r, hours=0, prefix="e-") for r in us_rounds("U01", "x", 2)]
    _post(u01, early)
    first = report_run(day_from=DAY)
    late = [moved(r, hours=0, prefix="late-") for r in us_rounds("U01", "y", 2, start=2)]
    _post(u01, late)  # dealt on DAY, stored after DAY was reported

    following = _pool(report_run(day_from=DAY + timedelta(days=1)))
    assert following["balanced"] is False
    continuity = _check(following, "continuity")
    assert not continuity["ok"] and str(DAY) in continuity["problems"][0]
    assert Decimal(following["contributions"]) == 0  # the late contributions are not the next day's

    again = _pool(report_run(day_from=DAY))  # a new version of DAY takes them in
    assert again["balanced"], again["checks"]
    assert Decimal(again["contributions"]) == Decimal(_pool(first)["contributions"]) + _contributed(late)
    # A roll-up over the stale next-day report no longer balances either.
    rolled = figures_json(report_rollup(day_from=DAY, day_to=DAY + timedelta(days=1)))["pools"][POOL]
    assert rolled["balanced"] is False and rolled["problems"]


def test_an_adjustment_belongs_to_the_day_it_was_made(u01):
    _post(u01, us_rounds("U01", "a", 2))
    pool = Pool.objects.get(code=POOL)
    meter_adjust(pool=pool, delta=Decimal("-25.00"), actor=SYSTEM, reason="display reset by the vendor")
    old = _pool(report_run(day_from=DAY))
    assert old["adjustments"] == "0" and old["balanced"]
    today = _pool(report_run(day_from=_today()))
    assert Decimal(today["adjustments"]) == Decimal("-25.00") and today["balanced"], today["checks"]
    assert Decimal(today["closing"]) == Pool.objects.get(code=POOL).meter


def _tamper(sql: str, params) -> None:
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"ALTER TABLE progressive_meterevent DISABLE TRIGGER {TRIGGER}")
        cursor.execute(sql, params)
        cursor.execute(f"ALTER TABLE progressive_meterevent ENABLE TRIGGER {TRIGGER}")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def test_a_changed_ledger_row_fails_the_balance(u01):
    _post(u01, us_rounds("U01", "t", 4))
    assert _pool(report_run(day_from=DAY))["balanced"]
    target = MeterEvent.objects.filter(pool__code=POOL, kind="contribution").order_by("seq")[1]
    # A contribution made larger, its amount and delta together: the row still agrees with its kind.
    _tamper("UPDATE progressive_meterevent SET amount = amount + 1, delta = delta + 1 WHERE id = %s", [target.pk])
    pool = _pool(report_run(day_from=DAY))
    assert pool["balanced"] is False
    failed = {c["check"] for c in pool["checks"] if not c["ok"]}
    assert {"ledger", "running_meter", "pool_row"} <= failed
    assert any(f"event {target.seq}" in p for p in _check(pool, "ledger")["problems"])


def test_a_delta_that_disagrees_with_its_kind_fails_the_kinds_check(u01):
    _post(u01, us_rounds("U01", "k", 3))
    target = MeterEvent.objects.filter(pool__code=POOL, kind="contribution").order_by("seq")[0]
    _tamper("UPDATE progressive_meterevent SET amount = amount + 5 WHERE id = %s", [target.pk])
    pool = _pool(report_run(day_from=DAY))
    assert not _check(pool, "kinds")["ok"] and pool["balanced"] is False


def test_a_reading_the_ledger_no_longer_agrees_with_fails_the_readings_check(u01):
    from progressive.models import MeterReading

    _post(u01, us_rounds("U01", "r", 3))
    pool = Pool.objects.get(code=POOL)
    response = u01.post("/api/v1/meter-readings/", {
        "displayed": str(pool.meter), "reported_at": timezone.now().isoformat()}, format="json")
    assert response.status_code == 201, response.json()
    reading = MeterReading.objects.get()
    today = _today()
    assert _check(_pool(report_run(day_from=today)), "readings")["ok"]
    _tamper("UPDATE progressive_meterevent SET meter_after = meter_after + 7 WHERE pool_id = %s AND seq = %s",
            [pool.pk, reading.meter_seq])
    checked = _pool(report_run(day_from=today))
    assert not _check(checked, "readings")["ok"] and checked["balanced"] is False


def test_a_day_with_audit_events_names_its_last_and_the_head(u01):
    _post(u01, [moved(r, hours=0, prefix="now-") | {"dealt_at": timezone.now().isoformat()}
                for r in us_rounds("U01", "c", 1)])
    report = report_run(day_from=_today())
    chain = report.figures["chain"]
    assert chain["day_events"] >= 1 and len(chain["day_last_hash"]) == 64 == len(report.day_last_hash)
    assert chain["head_at_report"]["seq"] >= chain["day_last_seq"]


def test_a_report_made_when_the_opening_was_dated_by_its_recording_is_flagged_until_made_again(u01, monkeypatch):
    """docs/OPERATIONS.md, "Upgrading": a day reported by the code that dated the opening reseed when it
    was recorded (today) said the pool opened at nothing; the next day's report flags it, and a new
    version of that day mends it."""
    _post(u01, [r for r in us_rounds("U01", "up", 3)
                if not any(s.get("paid", {}).get("progressive") for s in r["seats"])])
    recorded = MeterEvent.objects.get(pool__code=POOL, seq=1).created_at
    with monkeypatch.context() as old:
        old.setattr("audit.reconciliation.pool_ledger.books_opened", lambda **_: recorded)
        assert Decimal(_pool(report_run(day_from=DAY))["opening"]) == 0
    following = _pool(report_run(day_from=DAY + timedelta(days=1)))
    assert following["balanced"] is False and not _check(following, "days")["ok"]
    assert Decimal(_pool(report_run(day_from=DAY))["opening"]) == Decimal("10000.00")
    mended = _pool(report_run(day_from=DAY + timedelta(days=1)))
    assert mended["balanced"], mended["checks"]
