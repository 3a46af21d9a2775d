"""The nightly report names the day's meter adjustments and versions with who asked and who
approved, and flags those no second person approved (issue 27, items 7 and 9)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from audit.reconciliation.config import reconciliation_settings
from audit.reconciliation.services import report_run
from infra.gaming_day import gaming_day_of
from progressive.models import Pool
from progressive.services import adjustment_approve, meter_adjust, pool_version_approve, pool_version_create
from rounds.models import TableConfig
from rounds.services import config_version_approve, config_version_create
from tests.reconciliation.days import figures_stored
from tests.security.people import person
from trail.services import SYSTEM, Actor

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _amounts(settings):
    settings.METER_SECOND_APPROVAL_ABOVE = {"USD": Decimal("10000")}


def _today():
    clock = reconciliation_settings()
    return gaming_day_of(timezone.now(), time_zone=clock.time_zone, cutoff_hour=clock.cutoff_hour)


def test_the_days_changes_are_listed_and_those_made_alone_flagged():
    pool = Pool.objects.get(code="us-progressive")
    asker, second = person("supervisor", "asker"), person("supervisor", "second")
    meter_adjust(pool=pool, delta=Decimal("10000"), actor=Actor.of_user(asker), reason="count")
    asked = meter_adjust(pool=pool, delta=Decimal("90000"), actor=Actor.of_user(asker), reason="count")
    adjustment_approve(asked=asked, actor=Actor.of_user(second))
    meter_adjust(pool=pool, delta=Decimal("5000"), actor=SYSTEM, reason="opening correction")
    config = TableConfig.objects.get(name="se-50kr")
    first = config.versions.get(version=1)
    numbers = {name: getattr(first, name) for name in (
        "currency", "minor_unit", "unit", "ante_min", "ante_max", "trips_min", "trips_max", "blind_pays",
        "trips_pays", "aggregate_limit", "dealer_qualifier", "one_hand_per_player")}
    requested = config_version_create(config=config, effective_from=timezone.now(), actor=Actor.of_user(asker),
                                      note="flush 2:1", **dict(numbers, blind_pays=dict(first.blind_pays, flush="2")))
    config_version_approve(asked=requested, actor=Actor.of_user(second))
    latest = pool.versions.get(version=1)
    pool_asked = pool_version_create(
        pool=pool, effective_from=timezone.now(), actor=Actor.of_user(asker), note="flush 200",
        lines=[dict(line, amount="200") if line["category"] == "flush" else line for line in latest.lines],
        **{name: getattr(latest, name) for name in ("wager", "rate", "reseed", "ceiling", "reserve_rate")})
    pool_version_approve(asked=pool_asked, actor=Actor.of_user(second))

    report = report_run(day_from=_today())
    section = report.figures["dual_control"]
    rows = {(c["kind"], c["what"]): c for c in section["changes"]}
    alone = rows[("meter_adjustment", "us-progressive +10000.00 USD")]
    assert (alone["asked_by"], alone["approved_by"], alone["alone"]) == ("asker", None, True)
    approved = rows[("meter_adjustment", "us-progressive +90000.00 USD")]
    assert (approved["asked_by"], approved["approved_by"], approved["alone"]) == ("asker", "second", False)
    by_system = rows[("meter_adjustment", "us-progressive +5000.00 USD")]
    assert (by_system["asked_by"], by_system["alone"]) == ("system", True)
    version = rows[("config_version", "se-50kr v2")]
    assert (version["asked_by"], version["approved_by"], version["alone"]) == ("asker", "second", False)
    pool_version = rows[("pool_version", "us-progressive v2")]
    assert (pool_version["asked_by"], pool_version["approved_by"], pool_version["alone"]) == (
        "asker", "second", False)
    assert section["alone_by_a_person"] == 1
    [alert] = [a for a in report.figures["alerts"] if a.startswith("DUAL CONTROL")]
    assert "us-progressive +10000.00 USD by asker" in alert and "90000" not in alert

    client = Client()
    client.force_login(person("auditor", "reader"))
    page = client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert "Dual control" in page and "one person alone" in page and "second" in page


def test_a_report_made_before_the_section_still_shows():
    report = report_run(day_from=_today())
    figures = dict(report.figures)
    figures.pop("dual_control")
    figures_stored(report, figures)
    client = Client()
    client.force_login(person("auditor", "reader"))
    page = client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/")
    assert page.status_code == 200 and "not recorded" in page.content.decode()


def _numbers(version) -> dict:
    return {name: getattr(version, name) for name in (
        "currency", "minor_unit", "unit", "ante_min", "ante_max", "trips_min", "trips_max", "blind_pays",
        "trips_pays", "aggregate_limit", "dealer_qualifier", "one_hand_per_player")}


def test_a_version_the_system_makes_that_changes_what_is_paid_is_an_alert():
    """Issue 45, item 3: a Blind flush paying 100:1 made as "system" was listed alone, with no alert."""
    config = TableConfig.objects.get(name="se-50kr")
    first = config.versions.get(version=1)
    config_version_create(config=config, effective_from=timezone.now(), actor=SYSTEM, note="quiet",
                          **dict(_numbers(first), blind_pays=dict(first.blind_pays, flush="100")))
    config_version_create(config=config, effective_from=timezone.now(), actor=SYSTEM, note="a note only",
                          **dict(_numbers(first), blind_pays=dict(first.blind_pays, flush="100")))

    report = report_run(day_from=_today())
    rows = {c["what"]: c for c in report.figures["dual_control"]["changes"]}
    assert rows["se-50kr v2"]["unsound"] == "made by the system, changing what v1 paid, with no second person"
    assert rows["se-50kr v3"]["unsound"] == ""  # pays as v2 did
    [alert] = [a for a in report.figures["alerts"] if "no sound second person" in a]
    assert alert.startswith("DUAL CONTROL: 1 change(s)") and "se-50kr v2: made by the system" in alert


def test_an_approval_by_a_person_not_independent_is_an_alert(monkeypatch):
    """An approval the decision's check let through (taken before the graph, or past it) is still
    judged by the graph as the trail stood then."""
    from casino.services import user_roles_set
    from trail import approvals

    pool = Pool.objects.get(code="us-progressive")
    asker, second = person("supervisor", "asker"), person("supervisor", "second")
    user_roles_set(user=second, roles=["supervisor"], actor=Actor.of_user(asker))  # the asker's hand on him
    asked = meter_adjust(pool=pool, delta=Decimal("90000"), actor=Actor.of_user(asker), reason="count")
    monkeypatch.setattr(approvals, "approver_tie", lambda **_: None)  # as the check before the graph
    adjustment_approve(asked=asked, actor=Actor.of_user(second))
    monkeypatch.undo()

    report = report_run(day_from=_today())
    [alert] = [a for a in report.figures["alerts"] if "no sound second person" in a]
    assert "us-progressive +90000.00 USD: approved by second, not independent of asker: asker changed the user second" in alert
