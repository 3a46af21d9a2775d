"""A finding as an auditor's work: its states, the moves between them, its case, the fields that keep the last.

Every kind of finding (a round's, a regulator's variance test's, game
protection's) is worked the same way, open → acknowledged → resolved or
dismissed, and reopened when it was closed too soon; and each is a case: a
person it is assigned to, a priority, a time it is due by, and whether it
was escalated to the supervisors. The vocabulary lives here once; the models
inherit the fields from ``WorkedFinding``, ``rounds.services.finding_transition``
moves any of them and ``rounds.services.cases`` works their cases.
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



class Priority(models.IntegerChoices):
    """How soon a case wants a person: the smaller, the sooner (the queue sorts by it)."""

    URGENT = 1, "urgent"
    HIGH = 2, "high"
    NORMAL = 3, "normal"
    LOW = 4, "low"


def priority_label(value: int) -> str:
    """The priority's name; a number no priority has (a row edited past the service) as itself."""
    return Priority(value).label if value in Priority.values else str(value)


# A finding nobody has worked, nor made a case of: most of them, for ever.
UNTOUCHED = models.Q(
    state=State.OPEN, state_changed_at__isnull=True, state_note="", state_changed_by_name="",
    assignee_name="", priority=Priority.NORMAL, due_at__isnull=True, escalated_at__isnull=True,
)
# The columns of a finding's case, each as its case events record it (``rounds.services.cases``).
CASE_COLUMNS: tuple[str, ...] = ("assignee_name", "priority", "due_at", "escalated_at")


def worked_index(name: str) -> models.Index:
    """The findings somebody worked (or whose row was made to look worked), by key: the nightly check
    of their states reads these, not every finding ever raised. An index follows every write, with
    or without the triggers, so an edit that makes a row look worked puts it here."""
    return models.Index(fields=["id"], condition=~UNTOUCHED, name=name)


def case_indexes(prefix: str) -> list[models.Index]:
    """The cases by person (the queue's "mine"), by due time ("overdue") and the escalated, each read
    without the findings nobody took, gave a time or escalated: most of them, for ever."""
    return [
        models.Index(fields=["assignee", "due_at"], condition=models.Q(assignee__isnull=False),
                     name=f"{prefix}_assignee_idx"),
        models.Index(fields=["due_at"], condition=models.Q(due_at__isnull=False), name=f"{prefix}_due_idx"),
        models.Index(fields=["escalated_at"], condition=models.Q(escalated_at__isnull=False),
                     name=f"{prefix}_escalated_idx"),
    ]


def priority_known(name: str) -> models.CheckConstraint:
    """No priority but the four: a row edited past the service to another number is refused."""
    return models.CheckConstraint(condition=models.Q(priority__in=Priority.values), name=name)


class WorkedFinding(models.Model):
    """The state of a finding and its latest move; the whole history is in the audit log.

    ``work_name`` names the finding in the audit log's actions
    (``<work_name>.<state>``, and its case's ``<work_name>.case``,
    ``.comment``, ``.escalated``, ``.notified``). A concrete model indexes
    ``state_changed_by`` itself, and the cases (``case_indexes``), only where
    set: most findings are never worked.
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

    # The case: changed only by rounds.services.cases, each change an event in the trail.
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        db_index=False,
    )
    assignee_name = models.CharField(max_length=150, blank=True)  # a copy: users get renamed
    priority = models.PositiveSmallIntegerField(choices=Priority.choices, default=Priority.NORMAL)
    due_at = models.DateTimeField(null=True, blank=True)
    escalated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @classmethod
    def worker_permission(cls) -> str:
        """``<app>.work_<model>``: who may move and work these findings (each model's Meta declares it)."""
        return f"{cls._meta.app_label}.work_{cls._meta.model_name}"
