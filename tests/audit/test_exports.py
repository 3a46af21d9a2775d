"""CSV exports stream rounds, findings and the audit log for a period: every moment in the
casino's time with its UTC offset, every amount beside its currency."""

from __future__ import annotations

import copy
import csv
import io
import re
from datetime import date

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from infra.exports import Period, csv_lines, moment
from rounds.exports import round_rows
from rounds.models import Finding
from tests import examples
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
DAY = "2026-11-28"
MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d\d:\d\d")


@pytest.fixture
def posted(table_client):
    client = table_client("S01", "se-50kr")
    rounds = examples.load("se-50kr.jsonl")
    for example in rounds:
        client.post("/api/v1/rounds/", example["record"], format="json")
    return rounds


def _csv(response) -> list[dict]:
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def test_rounds_export_has_a_row_per_seat_with_settled_and_paid(posted, auditor_client):
    response = auditor_client.get("/api/v1/exports/rounds.csv", {"first_day": DAY, "last_day": DAY})
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    rows = _csv(response)
    assert len(rows) == sum(len(e["record"]["seats"]) for e in posted)
    first = next(r for r in rows if r["round"] == "c-se-01")
    assert (first["seat"], first["hand"], first["settled_blind"], first["paid_play"]) == (
        "3", "straight", "100.00", "400.00"
    )
    # Dealt at 20:00 Stockholm time (19:00 UTC), in winter; the amounts are kronor.
    assert (first["dealt_at"], first["currency"]) == ("2026-11-28T20:00:00.000000+01:00", "SEK")
    assert list(rows[0])[9:16] == ["seat", "player", "hole", "hand", "decision", "currency", "ante"]
    assert AuditEvent.objects.filter(action="export.downloaded", object_id="rounds").exists()


def test_findings_and_audit_log_exports(posted, auditor_client):
    findings = _csv(auditor_client.get("/api/v1/exports/findings.csv", {"first_day": DAY, "last_day": DAY}))
    codes = {row["code"] for row in findings}
    assert {"payout_mismatch", "bet_off_unit", "play_mismatch", "ante_blind_unequal"} <= codes
    for row in findings:
        finding = Finding.objects.select_related("round__config_version").get(pk=row["id"])
        assert row["currency"] == finding.round.config_version.currency == "SEK"
        assert row["dealt_at"] == moment(finding.round.dealt_at) and row["dealt_at"].endswith("+01:00")
        assert row["created_at"] == moment(finding.created_at) and MOMENT.fullmatch(row["created_at"])
        assert row["state_changed_at"] == ""
    # The export's days are the casino's calendar days: an hour after midnight there is
    # still the day before in UTC.
    today = timezone.localtime(AuditEvent.objects.order_by("-seq").first().at).date().isoformat()
    log = _csv(auditor_client.get("/api/v1/exports/audit-log.csv", {"first_day": today, "last_day": today}))
    assert [int(r["seq"]) for r in log] == sorted(int(r["seq"]) for r in log)
    assert sum(r["action"] == "round.stored" for r in log) == len(posted)
    events = {event.seq: event for event in AuditEvent.objects.filter(seq__in=[r["seq"] for r in log])}
    assert all(r["at"] == moment(events[int(r["seq"])].at) and MOMENT.fullmatch(r["at"]) for r in log)


def test_a_summer_moment_has_the_summer_offset(table_client, auditor_client):
    record = copy.deepcopy(examples.load("se-50kr.jsonl")[0]["record"])
    record.update(round="c-se-july", dealt_at="2026-07-15T21:30:00Z")
    assert table_client("S01", "se-50kr").post("/api/v1/rounds/", record, format="json").status_code == 201
    [row] = _csv(auditor_client.get("/api/v1/exports/rounds.csv", {"first_day": "2026-07-15",
                                                                  "last_day": "2026-07-15"}))
    assert row["dealt_at"] == "2026-07-15T23:30:00.000000+02:00"


def test_text_a_table_sent_cannot_become_a_spreadsheet_formula(table_client, auditor_client):
    record = dict(examples.load("se-50kr.jsonl")[0]["record"], round="=HYPERLINK(1)", dealer="@SUM(A1)")
    table_client("S01", "se-50kr").post("/api/v1/rounds/", record, format="json")
    row = _csv(auditor_client.get("/api/v1/exports/rounds.csv", {"first_day": DAY, "last_day": DAY}))[0]
    assert row["round"] == "'=HYPERLINK(1)" and row["dealer"] == "'@SUM(A1)"


@pytest.mark.parametrize("params,field", [
    ({"first_day": DAY}, "last_day"),
    ({"first_day": "2026-11-29", "last_day": DAY}, "last_day"),
    ({"first_day": "2024-01-01", "last_day": DAY}, "last_day"),
    ({"first_day": "yesterday", "last_day": DAY}, "first_day"),
])
def test_a_bad_period_is_a_field_error(auditor_client, params, field):
    response = auditor_client.get("/api/v1/exports/rounds.csv", params)
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_tables_and_strangers_cannot_export(table_client, django_user_model):
    assert table_client("S01", "se-50kr").get(
        "/api/v1/exports/rounds.csv", {"first_day": DAY, "last_day": DAY}
    ).status_code in (401, 403)
    nobody = django_user_model.objects.create_user("nobody")
    client = APIClient()
    client.force_authenticate(nobody)
    assert client.get("/api/v1/exports/audit-log.csv", {"first_day": DAY, "last_day": DAY}).status_code == 403
    assert client.get("/api/v1/exports/secrets.csv").status_code == 404


def test_rows_cross_chunk_boundaries_without_loss(posted, monkeypatch):
    """The cursor is read a chunk at a time (memory for a million rows is bench/'s to show)."""
    import infra.exports

    monkeypatch.setattr(infra.exports, "CHUNK", 5)
    period = Period(date(2026, 11, 28), date(2026, 11, 28))
    lines = csv_lines(round_rows(period))
    assert next(lines).startswith("table,round,")
    rows = list(csv.reader(io.StringIO("".join(lines))))
    assert len(rows) == sum(len(e["record"]["seats"]) for e in posted)
    assert len({(r[0], r[1], r[9]) for r in rows}) == len(rows)
