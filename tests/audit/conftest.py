"""What the audit log's tests share: anchors written to a directory of the test's own, signed."""

from __future__ import annotations

import pytest

from trail.models import AuditEvent
from trail.services import SYSTEM, audit_record

ANCHOR_KEY = "a-test-anchor-key"


@pytest.fixture
def anchored(settings, tmp_path):
    """Anchors go to ``tmp_path`` (``anchors.jsonl``), signed under ``ANCHOR_KEY``; none by URL."""
    settings.AUDIT_ANCHOR_PATH = str(tmp_path)
    settings.AUDIT_ANCHOR_URL = ""
    settings.AUDIT_ANCHOR_KEY = ANCHOR_KEY
    return tmp_path


def events_written(n: int) -> list[AuditEvent]:
    return [audit_record(actor=SYSTEM, action="test.event", object_id=str(i), after={"i": i}) for i in range(n)]
