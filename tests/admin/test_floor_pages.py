"""A dealer's page and a table's: what was dealt week by week, the mismatches over and under per 1,000
hands and the money at stake, each held to the rounds, seats and findings; linked from the report."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from audit.reconciliation.services import report_run
from game.rules import BETS
from rounds.models import Finding, Seat

pytestmark = pytest.mark.django_db


def test_a_dealers_week_is_his_rounds_seats_and_mismatches(last_day, staff):
    mismatches = Finding.objects.filter(code="payout_mismatch", informational=False, round__gaming_day=last_day)
    dealer = mismatches.values_list("round__dealer", flat=True).first()
    seats = Seat.objects.filter(round__dealer=dealer, round__gaming_day=last_day, round__held=False).select_related(
        "round__config_version")
    expected = defaultdict(lambda: {"hands": 0, "handle": Decimal(0), "win": Decimal(0), "paid": Decimal(0)})
    for seat in seats:
        row = expected[seat.round.config_version.currency]
        live = not seat.round.void and seat.round.status != "void"
        row["hands"] += live
        for bet in BETS:
            row["handle"] += getattr(seat, bet) if live and (bet != "progressive" or seat.progressive_lit) else 0
            row["win"] -= getattr(seat, f"settled_{bet}")
            row["paid"] -= getattr(seat, f"paid_{bet}") if seat.paid_reported else getattr(seat, f"settled_{bet}")
    over = [f for f in mismatches.filter(round__dealer=dealer) if f.claimed > f.expected]
    under = [f for f in mismatches.filter(round__dealer=dealer) if f.claimed < f.expected]

    page = staff("auditor").get(reverse("admin:audit_reconciliationreport_dealer", args=[dealer]))
    assert page.status_code == 200
    weeks = page.context["weeks"]
    monday = last_day - timedelta(days=last_day.weekday())
    week = next(w for w in weeks if w.week == monday and w.currency == "SEK")
    assert (week.hands, week.handle, week.win, week.win_paid) == tuple(expected["SEK"].values())
    assert (week.overpaid, week.underpaid) == (len(over), len(under)) and week.mismatches
    assert week.at_stake == sum(f.claimed - f.expected for f in over) + sum(f.expected - f.claimed for f in under)
    assert week.over_per_1000 == (Decimal(len(over)) * 1000 / week.hands).quantize(Decimal("0.01"))
    html = page.content.decode()
    assert f'data-week="{monday.isoformat()}" data-currency="SEK" data-hands="{week.hands}"' in html
    assert re.search(r'<svg[^>]*pygal-chart', html)  # his mismatches by week


def test_the_report_links_each_dealer_to_his_page_for_those_who_read_reports(last_day, staff, django_user_model):
    report = report_run(day_from=last_day)
    html = staff("auditor").get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
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
    assert auditor.get(reverse("admin:audit_reconciliationreport_table", args=["NOPE"])).status_code == 404
    report = report_run(day_from=last_day)
    html = auditor.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert reverse("admin:audit_reconciliationreport_table", args=["S01"]) in html
