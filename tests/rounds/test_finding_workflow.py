"""Findings move through their states with who, when and why, all or nothing."""

from __future__ import annotations

import pytest

from rounds.models import Finding
from rounds.services import FindingTransitionError, finding_transition
from tests import examples
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def findings(table_client):
    client = table_client("S01", "se-50kr")
    flagged = [e for e in examples.load("se-50kr.jsonl") if "payout_mismatch" in e["expect"]["codes"]]
    for example in flagged[:2]:
        client.post("/api/v1/rounds/", example["record"], format="json")
    found = list(Finding.objects.order_by("pk"))
    assert len(found) >= 2
    return found


def test_acknowledging_records_who_and_when_and_audits_it(findings, auditor):
    moved = finding_transition(finding_ids=[findings[0].pk], to_state="acknowledged", user=auditor)
    finding = Finding.objects.get(pk=moved[0].pk)
    assert finding.state == "acknowledged"
    assert finding.state_changed_by == auditor
    assert finding.state_changed_by_name == "auditor"
    assert finding.state_changed_at is not None
    event = AuditEvent.objects.filter(action="finding.acknowledged").get()
    assert event.before == {"state": "open"} and event.actor_name == "auditor"


def test_resolving_needs_a_note(findings, auditor):
    with pytest.raises(FindingTransitionError, match="needs a note"):
        finding_transition(finding_ids=[findings[0].pk], to_state="resolved", user=auditor, note="  ")
    assert Finding.objects.get(pk=findings[0].pk).state == "open"
    finding_transition(finding_ids=[findings[0].pk], to_state="resolved", user=auditor,
                       note="dealer retrained; difference paid to player")
    assert Finding.objects.get(pk=findings[0].pk).state_note.startswith("dealer retrained")


def test_a_bulk_move_is_all_or_nothing(findings, auditor):
    finding_transition(finding_ids=[findings[0].pk], to_state="dismissed", user=auditor, note="test")
    # Dismissed cannot be acknowledged, so the whole batch is refused.
    with pytest.raises(FindingTransitionError, match="cannot become acknowledged"):
        finding_transition(finding_ids=[f.pk for f in findings], to_state="acknowledged", user=auditor)
    assert set(Finding.objects.exclude(pk=findings[0].pk).values_list("state", flat=True)) == {"open"}


def test_unknown_states_and_findings_are_refused(findings, auditor):
    with pytest.raises(FindingTransitionError, match="unknown state"):
        finding_transition(finding_ids=[findings[0].pk], to_state="closed", user=auditor)
    with pytest.raises(FindingTransitionError, match="do not exist"):
        finding_transition(finding_ids=[10**9], to_state="acknowledged", user=auditor)
