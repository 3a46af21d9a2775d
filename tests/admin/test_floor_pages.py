"""A dealer's page and a table's: what was dealt week by week, the mismatches over and under per 1,000
hands and the money at stake, each held to the rounds, seats and findings; linked from the report."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from audit.reconciliation.services import report_run
from game.rules import BETS
from rounds.models import Finding, Seat
from rounds.services import table_register
from tests.admin.money import dealer_money
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


def test_a_dealers_week_is_his_rounds_seats_and_mismatches(last_day, staff):
    mismatches = Finding.objects.filter(code="payout_mismatch", informational=False, round__gaming_day=last_day)
    dealer = mismatches.values_list("round__dealer", flat=True).first()
    expected = dealer_money(dealer, last_day)
    over = [f for f in mismatches.filter(round__dealer=dealer) if f.claimed > f.expected]
    under = [f for f in mismatches.filter(round__dealer=dealer) if f.claimed < f.expected]

    page = staff("auditor").get(reverse("admin:audit_reconciliationreport_dealer", args=[dealer]))
    assert page.status_code == 200
    weeks = page.context["weeks"]
    monday = last_day - timedelta(days=last_day.weekday())
    week = next(w for w in weeks if w.week == monday and w.currency == "SEK")
    assert [week.hands, week.handle, week.win, week.win_paid] == expected["SEK"]
    assert (week.overpaid, week.underpaid) == (len(over), len(under)) and week.mismatches
    assert week.at_stake == sum(f.claimed - f.expected for f in over) + sum(f.expected - f.claimed for f in under)
    assert week.over_per_1000 == (Decimal(len(over)) * 1000 / week.hands).quantize(Decimal("0.01"))
    html = page.content.decode()
    assert f'data-week="{monday.isoformat()}" data-currency="SEK" data-hands="{week.hands}"' in html
    assert re.search(r'<svg[^>]*pygal-chart', html)  # his mismatches by week


def test_the_report_links_each_dealer_to_his_page_for_those_who_read_reports(last_day, staff, django_user_model):
    report = report_run(day_from=last_day)
    # Every dealer of the day, the table shown whole (a busy day's shows its first rows).
    html = staff("auditor").get(f"/admin/audit/reconciliationreport/{report.pk}/change/?whole=dealers").content.decode()
    for dealer in report.figures["dealers"]:
        if dealer:
            assert reverse("admin:audit_reconciliationreport_dealer", args=[dealer]) in html
    unread = Client()
    unread.force_login(django_user_model.objects.create_user("no-reports", is_staff=True))
    assert unread.get(reverse("admin:audit_reconciliationreport_dealer", args=["D001"])).status_code == 403


def test_a_tables_week_is_its_seats_with_its_versions_and_silences(last_day, staff):
    seats = Seat.objects.filter(round__table__code="S01", round__gaming_day=last_day, round__held=False)
    hands = sum(1 for s in seats.select_related("round") if not s.round.void and s.round.status != "void")
    win = -sum(getattr(s, f"settled_{bet}") for s in seats for bet in BETS)
    auditor = staff("auditor")
    page = auditor.get(reverse("admin:audit_reconciliationreport_table", args=["S01"]))
    assert page.status_code == 200
    monday = last_day - timedelta(days=last_day.weekday())
    week = next(w for w in page.context["weeks"] if w.week == monday and w.currency == "SEK")
    assert (week.hands, week.win) == (hands, win)
    html = page.content.decode()
    assert 'id="floor-versions"' in html and 'data-version="1"' in html
    # The configurations it was given, from the trail: registered under one, moved to another.
    assert [g.config for g in page.context["assignments"]] == ["se-50kr"]
    table_register(code="S01", config_name="us-30k", actor=SYSTEM)
    table_register(code="S01", config_name="us-30k", actor=SYSTEM)  # a new key only: no new configuration
    moved = auditor.get(reverse("admin:audit_reconciliationreport_table", args=["S01"]))
    assert [(g.config, g.action) for g in moved.context["assignments"]] == [
        ("se-50kr", "table.key_issued"), ("us-30k", "table.key_rotated")]
    assert 'id="floor-configs"' in moved.content.decode()
    assert auditor.get(reverse("admin:audit_reconciliationreport_table", args=["NOPE"])).status_code == 404
    report = report_run(day_from=last_day)
    html = auditor.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert reverse("admin:audit_reconciliationreport_table", args=["S01"]) in html


def test_a_dealer_of_two_stints_deals_at_his_table_s_pace_and_his_page_lists_them(table_client, staff):
    """D9 deals two stints of twenty rounds at S05, a round every three minutes (20 an hour), with a
    two-hour break between: his hands an hour count the stints' time, and his page lists both."""
    from tests import examples

    record = examples.post_two_stints(table_client, "S05", dealer="D9")
    page = staff("auditor").get(reverse("admin:audit_reconciliationreport_dealer", args=["D9"]))
    [week] = page.context["weeks"]
    seats = len(record["seats"])
    # 40 rounds over two stints of 57 minutes: not over the 3:57 h from his first round to his last.
    assert week.hours == Decimal(2 * 57) / 60
    assert week.hands_per_hour == (Decimal(40 * seats) / week.hours).quantize(Decimal(1))
    stints = page.context["stints"]
    assert [(s.table, s.rounds, s.span) for s in stints] == [("S05", 20, timedelta(minutes=57))] * 2
    html = page.content.decode()
    assert html.count('href="/admin/audit/reconciliationreport/tables/S05/"') >= 2


def test_a_hole_carder_s_finding_is_on_the_page_of_the_table_and_dealer_who_dealt_its_decisions(
        table_client, staff):
    """The finding names a player; its evidence's decisions were dealt at S06 by D8: both pages list it."""
    from audit.models import ProtectionFinding
    from rounds.models import Round
    from tests import examples
    from django.utils import timezone

    client = table_client("S06", "se-50kr")
    record = examples.load("se-50kr.jsonl")[0]["record"]
    body = examples.redated({**record, "table": "S06", "round": "hc-1", "dealer": "D8"},
                            examples.last_gaming_day_evening(timezone.now()))
    assert client.post("/api/v1/rounds/", body, format="json").status_code == 201
    stored = Round.objects.get(round_id="hc-1")
    finding = ProtectionFinding.objects.create(
        code="suspected_hole_carding", key="player:P-HC", player="P-HC", day_from=stored.gaming_day, day_to=stored.gaming_day,
        figure=Decimal(9), threshold=Decimal(4), detail="…",
        evidence={"steps": [{"round": stored.pk, "table": "S06", "round_id": "hc-1", "seat": 1}]})
    other = ProtectionFinding.objects.create(
        code="suspected_hole_carding", key="player:P-X", player="P-X", day_from=stored.gaming_day, day_to=stored.gaming_day,
        figure=Decimal(9), threshold=Decimal(4), detail="…", evidence={"steps": [{"round": 0, "table": "S07"}]})
    auditor = staff("auditor")
    for url in (reverse("admin:audit_reconciliationreport_table", args=["S06"]),
                reverse("admin:audit_reconciliationreport_dealer", args=["D8"])):
        page = auditor.get(url)
        listed = [f.pk for f in page.context["findings"]]
        assert listed == [finding.pk] and other.pk not in listed, url
        assert "its evidence's decisions were dealt" in page.content.decode()
