"""The auditors' first page and queue on whichever database the suite runs on: scripts/test runs
this file on PostgreSQL and again on a SQLite file, the embedded default's, where the tonight
page's window query and date arithmetic are SQLite's own."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from audit.tonight import tonight
from casino.services import user_roles_set
from infra.gaming_day import gaming_day_of
from rounds.models import Finding, Round
from tests import examples, mistakes
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


def test_the_tonight_page_and_the_queue(table_client, django_user_model, settings):
    start = examples.last_gaming_day_evening(timezone.now())
    examples.post_all_on(table_client, start)
    day = gaming_day_of(start)
    user = django_user_model.objects.create_user("embedded-auditor", password="pw-for-tests-only")
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)
    client = Client()
    client.force_login(user)

    page = client.get("/admin/")
    assert page.status_code == 200
    figures = next(d for d in page.context["tonight"].days if d.day == day)
    assert sum(d.rounds for d in figures.dealt) == Round.objects.filter(gaming_day=day).count()
    work = Finding.objects.filter(round__gaming_day=day, state__in=("open", "acknowledged"), informational=False)
    # A seat's off-unit bets are one mistake: counted once, as the queue lists them.
    assert sum(f.count for f in figures.findings) == len(mistakes.firsts(work.order_by("pk"))) > 0
    assert work.count() > len(mistakes.firsts(work.order_by("pk")))
    # No gap of 20 minutes between rounds 75 seconds apart; one appears when the gap is shorter.
    assert figures.silent == []
    settings.TABLE_SILENT_AFTER = timedelta(seconds=60)
    assert {s.table for s in next(d for d in tonight().days if d.day == day).silent} == {"S01", "U01"}

    queue = client.get("/admin/rounds/finding/").context["cl"].result_list
    assert {f.pk for f in queue} == set(mistakes.keys(Finding.objects.filter(state="open", informational=False).order_by("pk")))
