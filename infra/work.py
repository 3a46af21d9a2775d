"""A finding as an auditor's work: its states, the moves between them, the fields that keep the last.

Every kind of finding (a round's, a regulator's variance test's) is worked the
same way, open → acknowledged → resolved or dismissed, and reopened when it
was closed too soon. The vocabulary lives here once; the models inherit the
fields from ``WorkedFinding`` and ``rounds.services.finding_transition`` moves
any of them.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models


class State(models.TextChoices):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    DISMISSED = "dismissed"


# Where a finding in each state may go next.
ALLOWED: dict[str, frozenset[str]] = {
    State.OPEN: frozenset({State.ACKNOWLEDGED, State.RESOLVED, State.DISMISSED}),
    State.ACKNOWLEDGED: frozenset({State.RESOLVED, State.DISMISSED, State.OPEN}),
    State.RESOLVED: frozenset({State.OPEN}),
    State.DISMISSED: frozenset({State.OPEN}),
}
# Still to work: acknowledged is being worked, not settled.
UNRESOLVED: frozenset[str] = frozenset({State.OPEN, State.ACKNOWLEDGED})
# Closing or reopening a finding must say why; acknowledging it need not.
NOTE_REQUIRED: frozenset[str] = frozenset({State.RESOLVED, State.DISMISSED, State.OPEN})

# A finding nobody has worked: most of them, for ever.
UNTOUCHED = models.Q(state=State.OPEN, state_changed_at__isnull=True, state_note="", state_changed_by_name="")


def worked_index(name: str) -> models.Index:
    """The findings somebody worked (or whose row was made to look worked), by key: the nightly check
    of their states reads these, not every finding ever raised. An index follows every write, with
    or without the triggers, so an edit that makes a row look worked puts it here."""
    return models.Index(fields=["id"], condition=~UNTOUCHED, name=name)


class WorkedFinding(models.Model):
    """The state of a finding and its latest move; the whole history is in the audit log.

    ``work_name`` names the finding in the audit log's actions
    (``<work_name>.<state>``). A concrete model indexes ``state_changed_by``
    itself, only where it is set: most findings are never worked.
    """

    State = State
    work_name: ClassVar[str] = "finding"

    state = models.CharField(max_length=12, choices=State.choices, default=State.OPEN)
    state_changed_at = models.DateTimeField(null=True, blank=True)
    state_changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        db_index=False,
    )
    state_changed_by_name = models.CharField(max_length=150, blank=True)  # a copy: users get renamed
    state_note = models.TextField(blank=True)

    class Meta:
        abstract = True
