"""A table's link to the casino's video: only its named fields, filled and quoted, on its rounds and findings."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from rounds.models import Finding, Round, Table
from rounds.video import video_link, video_link_errors
from tests import examples
from trail.models import AuditEvent

MOMENT = {"table": "S 01", "round_id": "R/7", "dealt_at": datetime(2026, 12, 4, 21, 30, tzinfo=UTC),
          "gaming_day": date(2026, 12, 4), "seat": 3}


def test_the_fields_are_filled_in_and_quoted():
    template = "https://vms.example/play?camera={table}&seat={seat}&round={round}&at={dealt_at_utc}&day={gaming_day}"
    assert video_link(template, **MOMENT) == (
        "https://vms.example/play?camera=S%2001&seat=3&round=R%2F7&at=2026-12-04T21%3A30%3A00%2B00%3A00&day=2026-12-04")
    assert "22%3A30%3A00%2B01%3A00" in video_link("https://v/{dealt_at}", **MOMENT), "the casino's clock (Stockholm)"
    assert video_link("https://v/{table}/{seat}", **{**MOMENT, "seat": None}) == "https://v/S%2001/"
    assert video_link("", **MOMENT) == ""


@pytest.mark.parametrize(("template", "said"), [
    ("ftp://vms/{table}", "http:// or https://"),
    ("https://vms/{table.__class__}", "is not one of"),
    ("https://vms/{0}", "is not one of"),
    ("https://vms/{seat:>5}", "takes no format"),
    ("https://vms/{seat!r}", "takes no format"),
    ("https://vms/{table", "do not pair up"),
    ("https://vms/{camera}", "{camera} is not one of"),
])
def test_a_template_that_reaches_past_its_fields_is_refused(template, said):
    errors = video_link_errors(template)
    assert any(said in error for error in errors), errors
    assert video_link(template, **MOMENT) == "", "a template saved before the rules links nothing"


@pytest.mark.django_db
def test_the_table_page_sets_the_link_and_the_round_and_finding_pages_show_it(staff, table_client):
    client = table_client("S01", "se-50kr")
    flagged = next(e for e in examples.load("se-50kr.jsonl") if "payout_mismatch" in e["expect"]["codes"])
    client.post("/api/v1/rounds/", flagged["record"], format="json")
    table, round_ = Table.objects.get(code="S01"), Round.objects.get()
    finding = Finding.objects.filter(round=round_, seat__isnull=False).first()
    admin = staff("admin")
    url = f"/admin/rounds/table/{table.pk}/video/"
    refused = admin.post(url, {"video_link": "https://vms.example/{camera}"}, follow=True)
    assert "was not changed" in refused.content.decode() and Table.objects.get().video_link == ""
    assert staff("auditor", "a-reader").post(url, {"video_link": "https://v/{table}"}).status_code == 403
    admin.post(url, {"video_link": "https://vms.example/play?camera={table}&seat={seat}&round={round}"})
    assert Table.objects.get().video_link.endswith("&round={round}")
    event = AuditEvent.objects.get(action="table.video_link")
    assert event.before == {"video_link": ""} and event.actor_name == "admin-a"
    round_page = admin.get(f"/admin/rounds/round/{round_.pk}/change/").content.decode()
    assert f'href="https://vms.example/play?camera=S01&amp;seat=&amp;round={round_.round_id}"' in round_page
    finding_page = admin.get(f"/admin/rounds/finding/{finding.pk}/change/").content.decode()
    assert f"camera=S01&amp;seat={finding.seat}&amp;round={round_.round_id}" in finding_page
