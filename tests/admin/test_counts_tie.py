"""One unit per count (issue 46): every count the tonight page shows beside a link is the length of
the list that link opens, on a busy day with work left from earlier days, cases and a stale report."""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin
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


# A list's own filters ("100 or more") and its dates ("2 December") are choices, not counts.
# A link that says which count it stands for, where the count is not its text ("rounds" beside it).
DATA_COUNT = re.compile(r'<a href="([^"]+)"[^>]*data-count="([0-9]+)"')
CHOICES = re.compile(r'<search id="changelist-filter".*?</search>|<nav class="toplinks">.*?</nav>', re.S)


def _content(page: str) -> str:
    return CHOICES.sub("", page)


def _workspace_pages(day) -> list[str]:
    """Every page of the workspace over ``day`` (reported): lists, a case, a report, the floor's pages."""
    from audit.models import ReconciliationReport
    from progressive.models import Pool
    from rounds.models import Round

    report = ReconciliationReport.objects.filter(day_from=day, day_to=day).order_by("-pk").first()
    round_ = Round.objects.filter(gaming_day=day).order_by("pk").first()
    finding = Finding.objects.filter(informational=False).order_by("pk").first()
    return [
        "/admin/", "/admin/rounds/round/", f"/admin/rounds/round/{round_.pk}/change/",
        "/admin/rounds/finding/", "/admin/rounds/finding/?case=mine", f"/admin/rounds/finding/{finding.pk}/change/",
        "/admin/audit/reconciliationreport/", f"/admin/audit/reconciliationreport/{report.pk}/change/",
        f"/admin/audit/reconciliationreport/tables/{round_.table.code}/",
        f"/admin/audit/reconciliationreport/dealers/{round_.dealer}/",
        "/admin/audit/protectionfinding/", "/admin/audit/protectionfinding/players/",
        f"/admin/progressive/pool/{Pool.objects.get(code='us-progressive').pk}/change/",
        "/admin/trail/auditevent/", "/admin/audit/tablecount/",
    ]


def _counts_held(client, pages: list[str]) -> dict[str, int]:
    """Wherever a count links a list on ``pages`` (a tile, a table's rounds, a week's rounds), the
    list it opens holds that many rows: the counts held, by page. Links to a page that is not a
    list (a report, a round) carry no count to hold."""
    checked: dict[str, int] = {}
    for page_url in pages:
        page = client.get(page_url)
        assert page.status_code == 200, page_url
        content = _content(page.content.decode())
        counted = COUNTED_LINK.findall(content) + [(url, n, "data-count") for url, n in DATA_COUNT.findall(content)]
        for url, n, what in counted:
            if what.split()[:1] in (["%"], ["min"], ["h"], ["s"]):
                continue  # a share ("95 %" outside its band) or a silence ("58 min"), not a count
            opened = client.get(urljoin(page_url, html.unescape(url)))
            if opened.status_code != 200 or "cl" not in (opened.context or {}):
                assert what != "data-count", (page_url, url)  # a count said to open a list opens one
                continue
            assert opened.context["cl"].result_count == int(n.replace(",", "")), (page_url, url, n, what)
            checked[page_url] = checked.get(page_url, 0) + 1
    return checked


def test_every_count_on_every_workspace_page_is_the_length_of_the_list_it_opens(busy):
    day = gaming_day_of(examples.last_gaming_day_evening(timezone.now()))
    services.report_run(day_from=day)
    checked = _counts_held(busy, _workspace_pages(day))
    # The tonight page's, the report's (each table's rounds) and the floor pages' (each week's).
    assert "/admin/" in checked and any("/tables/" in page for page in checked), checked
    assert any("/change/" in page for page in checked) and sum(checked.values()) >= 20, checked


def test_every_count_on_every_workspace_page_of_the_demo_is_the_length_of_the_list_it_opens(staff, settings):
    from io import StringIO

    from django.core.management import call_command

    from audit.models import ReconciliationReport

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    call_command("load_demo", rounds=10, history=2, stdout=StringIO(), stderr=StringIO())
    auditor = staff("auditor")
    day = ReconciliationReport.objects.order_by("-day_from").values_list("day_from", flat=True).first()
    checked = _counts_held(auditor, _workspace_pages(day))
    assert "/admin/" in checked and any("/change/" in page for page in checked), checked
    assert any("/tables/" in page for page in checked), checked


def test_a_stale_report_s_counts_fall_short_of_its_lists_by_the_rounds_it_says_came_after_it(busy):
    """A stale report counted what was stored when it ran; its page says how many rounds of which
    table came after it, and each table's list holds exactly that many more."""
    from audit.models import ReconciliationReport
    from rounds.models import Table

    stale = next(r for r in ReconciliationReport.objects.order_by("pk") if staleness.late_rounds_of(r))
    late = staleness.late_rounds_of(stale)
    page = busy.get(f"/admin/audit/reconciliationreport/{stale.pk}/change/").content.decode()
    rows = DATA_COUNT.findall(page)
    assert rows
    for url, n in rows:
        opened = busy.get(html.unescape(url)).context["cl"]
        code = Table.objects.get(pk=opened.get_filters_params()["table__id__exact"][0]).code
        assert opened.result_count == int(n) + late.get(code, 0), (url, late)
    assert sum(late.values()) == 1
