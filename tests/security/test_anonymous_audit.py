"""Only actors who proved who they are write to the audit log; anonymous refusals are logged, throttled."""

from __future__ import annotations

import logging

import pytest
from rest_framework.test import APIClient

from casino import middleware
from infra.refusals import RefusalTally
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("header", ["Bearer junk", "Bearer ta_abcdefgh.0123456789", "Bearer "])
def test_an_unproven_table_key_on_the_admin_adds_nothing_to_the_audit_log(header, caplog, monkeypatch):
    monkeypatch.setattr(middleware, "REFUSALS", RefusalTally())  # a window of this test's own
    before = AuditEvent.objects.count()
    client = APIClient()
    with caplog.at_level(logging.WARNING, logger="infra.refusals"):
        answers = {client.get("/admin/", HTTP_AUTHORIZATION=header).status_code for _ in range(300)}
    assert answers == {403}
    assert AuditEvent.objects.count() == before
    # Told to the application's log, but not once per request.
    lines = [r for r in caplog.records if r.name == "infra.refusals"]
    assert 1 <= len(lines) <= 2


def test_a_tables_own_key_on_the_admin_is_an_audit_event_of_that_table(table_client):
    client = table_client("S01", "se-50kr")
    assert client.get("/admin/rounds/round/").status_code == 403
    event = AuditEvent.objects.get(action="admin.table_key_refused")
    assert (event.actor_kind, event.actor_name) == ("table", "S01")


def test_the_tally_logs_the_first_refusal_of_a_window_and_then_how_many_came(caplog):
    now = [0.0]
    tally = RefusalTally(window=60, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="infra.refusals"):
        written = [tally.note("kind", "GET /admin/") for _ in range(5)]
        now[0] = 61
        written.append(tally.note("kind", "GET /admin/"))
        written.append(tally.note("other", "GET /admin/x"))
    assert written == [True, False, False, False, False, True, True]
    assert "and 4 more" in caplog.records[1].getMessage()
