"""One unit per count (issue 46): every count the tonight page shows beside a link is the length of
the list that link opens, on a busy day with work left from earlier days, cases and a stale report."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from audit.reconciliation import services, staleness
from infra.gaming_day import gaming_day_of
from rounds.models import Finding
from rounds.services.cases import case_change
from tests import examples

pytestmark = pytest.mark.django_db
# A link whose text is a count ("12 rounds", "3 reports stale", a case tile's "2"), and a row that
# carries its count beside its link.
COUNTED_LINK = re.compile(r'<a href="([^"]+)"[^>]*>\s*([0-9][0-9,]*)(?:\s+([^<]*))?</a>')
COUNTED_ROW = re.compile(r'<tr [^>]*data-count="([0-9]+)"[^>]*>\s*<td><a href="([^"]+)">')


def _listed(client, url: str) -> int:
    answer = client.get(html.unescape(url))
    assert answer.status_code == 200, url
    return answer.context["cl"].result_count


@pytest.fixture
def busy(table_client, staff, monkeypatch, settings):
    monkeypatch.setattr(staleness, "COMMIT_MARGIN", timedelta(0))
    start = examples.last_gaming_day_evening(timezone.now())
    settings.ROUND_WINDOW_OPENS = (start - timedelta(days=40)).date()
    examples.post_all_on(table_client, start)
    # Work left from three days before: a mistake raised on three bets, and a mismatch.
    earlier = start - timedelta(days=3)
    s02 = table_client("S02", "se-50kr")
    for n, codes in enumerate((["bet_off_unit"], ["payout_mismatch"])):
        found = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == codes)
        body = examples.redated({**found["record"], "table": "S02", "round": f"early-{n}"}, earlier)
        assert s02.post("/api/v1/rounds/", body, format="json").status_code == 201
    # Its day reported, then a round of it comes late: the report is stale.
    report = services.report_run(day_from=gaming_day_of(earlier))
    late = examples.redated({**examples.load("se-50kr.jsonl")[0]["record"], "table": "S02", "round": "late-1"},
                            earlier + timedelta(minutes=5))
    assert s02.post("/api/v1/rounds/", late, format="json").status_code == 201
    assert staleness.late_rounds_of(report)
    auditor = staff("auditor")
    mine = Finding.objects.filter(informational=False).order_by("pk")[:3]
    for finding in mine:
        case_change(model=Finding, finding_id=finding.pk, user=auditor.user, assignee=auditor.user,
                    due_at=timezone.now() - timedelta(hours=1))
    return auditor


def test_every_count_on_the_tonight_page_is_the_length_of_the_list_it_opens(busy):
    page = busy.get("/admin/").content.decode()
    counted = [(url, int(n.replace(",", "")), (what or "").strip()) for url, n, what in COUNTED_LINK.findall(page)]
    counted += [(url, int(n), "a row's count") for n, url in COUNTED_ROW.findall(page)]
    assert len(counted) >= 8, counted  # rounds, findings by code, work left, stale reports, the cases
    for url, n, what in counted:
        assert _listed(busy, url) == n, (what, url)
    said = {what for _, _, what in counted}
    assert any("still to work from earlier days" in w for w in said) and any("stale" in w for w in said)


def test_every_count_on_the_demo_s_tonight_page_is_the_length_of_the_list_it_opens(staff, settings):
    from io import StringIO

    from django.core.management import call_command

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command("load_demo", rounds=10, history=2, stdout=StringIO(), stderr=StringIO())
    auditor = staff("auditor")
    page = auditor.get("/admin/").content.decode()
    counted = [(url, int(n.replace(",", ""))) for url, n, _ in COUNTED_LINK.findall(page)]
    counted += [(url, int(n)) for n, url in COUNTED_ROW.findall(page)]
    assert len(counted) >= 4, counted
    for url, n in counted:
        assert _listed(auditor, url) == n, url
    # A fresh demo is reconciled within a minute of its rounds: nothing is stale, and every day
    # it dealt has its report.
    assert "stale" not in page and "without a current report" not in page
