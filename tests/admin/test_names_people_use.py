"""A finding is named as people name it, by its table, round id, seat and bet, never by a database id;
its amounts carry their currency on its page (issue 46, "Names")."""

from __future__ import annotations

import pytest

from infra.money_display import money
from rounds.models import Finding
from rounds.notices import escalation_notice
from rounds.services import finding_transition
from tests import examples
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def mismatch(table_client) -> Finding:
    client = table_client("S01", "se-50kr")
    flagged = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == ["payout_mismatch"])
    assert client.post("/api/v1/rounds/", flagged["record"], format="json").status_code == 201
    return Finding.objects.get(code="payout_mismatch")


def test_a_finding_is_named_by_its_table_round_seat_and_bet(mismatch, staff):
    name = f"payout_mismatch on S01/{mismatch.round.round_id} seat {mismatch.seat} {mismatch.bet}"
    assert str(mismatch) == name
    auditor = staff("auditor")
    finding_transition(finding_ids=[mismatch.pk], to_state="acknowledged", user=auditor.user)
    assert AuditEvent.objects.get(action="finding.acknowledged").object_repr == name
    assert escalation_notice(mismatch, by="aud", note="look").subject == f"Escalated by aud: {name}"
    page = auditor.get(f"/admin/rounds/finding/{mismatch.pk}/change/").content.decode()
    assert money(mismatch.expected, "SEK") in page and money(mismatch.claimed, "SEK") in page
