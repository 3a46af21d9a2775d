"""Every CSV the service writes goes through one writer, and no cell of any can run as a formula."""

from __future__ import annotations

import copy
import csv
import io
import re
from datetime import date

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone
from rest_framework.test import APIClient

from audit.reconciliation.services import report_run
from infra.exports import spreadsheet_text
from tests import examples

pytestmark = pytest.mark.django_db
DAY = "2026-11-28"
# What spreadsheets run as a formula when a cell starts with it (OWASP's list).
# A tab or carriage return can no longer lead a table's id (ids are printable: the round record's
# 400), so the day carries the printable leads; the cell function still guards both (below).
PAYLOADS = ["=cmd|'/C calc'!A0", "+SUM(1)", "-2+3", "@SUM(A1)", '=HYPERLINK("http://x")']
LEADS = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[-+]?[0-9]+(\.[0-9]+)?")


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _runnable(cells: list[str]) -> list[str]:
    return [c for c in cells if c.startswith(LEADS) and not PLAIN_NUMBER.fullmatch(c)]


@pytest.fixture
def hostile(table_client, django_user_model):
    """A day whose round ids, dealers and players are formulas, and a reader whose name is one."""
    client = table_client("S01", "se-50kr")
    worked = examples.load("se-50kr.jsonl")
    for n, payload in enumerate(PAYLOADS):
        record = copy.deepcopy(worked[n]["record"])
        record.update(round=f"{payload}-{n}", dealer=payload)
        for seat in record["seats"]:
            seat["player"] = payload
        assert client.post("/api/v1/rounds/", record, format="json").status_code == 201
    reader = django_user_model.objects.create_user("+reader", password="a-long-test-password")
    reader.user_permissions.add(*Permission.objects.filter(
        codename__startswith="view_", content_type__app_label__in=["trail", "rounds", "progressive", "audit"]))
    api = APIClient()
    api.force_authenticate(django_user_model.objects.get(pk=reader.pk))
    return api


def test_no_cell_of_any_export_can_run(hostile):
    period = {"first_day": DAY, "last_day": DAY}
    texts = {what: b"".join(hostile.get(f"/api/v1/exports/{what}.csv", period).streaming_content).decode()
             for what in ("rounds", "findings")}
    today = timezone.localdate().isoformat()  # the export's days are the casino's calendar days
    audit = hostile.get("/api/v1/exports/audit-log.csv", {"first_day": today, "last_day": today})
    texts["audit-log"] = b"".join(audit.streaming_content).decode()
    for what, text in texts.items():
        assert _runnable(_cells(text)) == [], what
    rounds = _cells(texts["rounds"])
    # The payloads are there, made inert: not dropped, not changed otherwise.
    assert spreadsheet_text("=cmd|'/C calc'!A0") in rounds and "'@SUM(A1)" in rounds
    assert "'+reader" in _cells(texts["audit-log"])


def test_no_cell_of_the_reconciliation_report_can_run(hostile):
    report = report_run(day_from=date.fromisoformat(DAY))
    response = hostile.get(f"/api/v1/reports/{report.pk}.csv")
    assert response.status_code == 200
    cells = _cells(response.content.decode())
    assert _runnable(cells) == []
    assert "'@SUM(A1)" in cells  # a dealer's and a player's id, made inert
    assert any(PLAIN_NUMBER.fullmatch(c) and c.startswith("-") for c in cells)  # losses stay numbers


def test_a_plain_number_stays_a_number_and_anything_else_with_a_lead_is_text():
    assert [spreadsheet_text(v) for v in ("-25.00", "+3", "-2+3", "=1", "@a", "\tx", "abc")] == [
        "-25.00", "+3", "'-2+3", "'=1", "'@a", "'\tx", "abc",
    ]
