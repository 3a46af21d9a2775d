"""One clock (issue 46): every moment a person reads, on a page, in a trail or a message, is on the
casino's clock and written one way, "2026-12-05 21:59": no UTC offset, no ISO "T", no second
format. A body a table sent is shown as it was sent, and a form's field keeps its own format."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from audit.reconciliation.services import report_run
from progressive.models import Pool
from rounds.models import Finding
from rounds.services.cases import case_change
from tests import examples
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
# What a second clock or a second way of writing a moment leaves in a page's text.
STRANGERS = {
    "an ISO moment": re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}"),
    "a UTC offset": re.compile(r"[+-]\d{2}:\d{2}\b(?!\d)|\bUTC\b"),
    "seconds": re.compile(r"\b\d{2}:\d{2}:\d{2}\b"),
    "a gaming day beside a time": re.compile(r"\d{4}-\d{2}-\d{2} · \d{2}:\d{2}"),
}


def visible(html: str) -> str:
    """The page's text as a person reads it: no markup, no attribute, no script; the kept body a table
    sent (shown as sent) left out."""
    html = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", html)
    html = re.sub(r"(?s)The stored record \(canonical JSON\).*?</details>", " ", html)
    return re.sub(r"<[^>]+>", " ", html)


@pytest.fixture
def worked(table_client, staff):
    client = table_client("S01", "se-50kr")
    start = examples.last_gaming_day_evening(timezone.now())
    flagged = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == ["payout_mismatch"])
    assert client.post("/api/v1/rounds/", examples.redated(flagged["record"], start), format="json").status_code == 201
    finding = Finding.objects.get(code="payout_mismatch")
    auditor = staff("auditor")
    due = datetime(start.year, start.month, start.day, 21, 59, tzinfo=ZoneInfo("Europe/Stockholm"))
    case_change(model=Finding, finding_id=finding.pk, user=auditor.user, due_at=due)
    report_run(day_from=finding.round.gaming_day)
    return finding, auditor, due


def test_every_moment_read_is_on_the_casino_s_clock_and_written_one_way(worked):
    finding, auditor, due = worked
    event = AuditEvent.objects.filter(action="finding.case").latest("seq")
    pool = Pool.objects.get(code="us-progressive")
    pages = ["/admin/", "/admin/rounds/round/", f"/admin/rounds/round/{finding.round_id}/change/",
             "/admin/rounds/finding/", f"/admin/rounds/finding/{finding.pk}/change/",
             "/admin/trail/auditevent/", f"/admin/trail/auditevent/{event.pk}/change/",
             f"/admin/progressive/pool/{pool.pk}/change/", "/admin/audit/reconciliationreport/"]
    for url in pages:
        answer = auditor.get(url)
        assert answer.status_code == 200, url
        text = visible(answer.content.decode())
        for what, pattern in STRANGERS.items():
            found = pattern.search(text)
            assert found is None, f"{url}: {what}: …{text[max(0, found.start() - 80):found.end() + 40]}…"
    # The due time typed as 21:59 reads 21:59 on the case and in its trail.
    shown = f"{due:%Y-%m-%d} 21:59"
    assert shown in visible(auditor.get(f"/admin/rounds/finding/{finding.pk}/change/").content.decode())
    assert shown in visible(auditor.get(f"/admin/trail/auditevent/{event.pk}/change/").content.decode())
    # The round reads the same day and minute in the rounds list and in the findings queue.
    dealt = f"{timezone.localtime(finding.round.dealt_at):%Y-%m-%d %H:%M}"
    assert dealt in visible(auditor.get("/admin/rounds/round/").content.decode())
    assert dealt in visible(auditor.get("/admin/rounds/finding/").content.decode())
