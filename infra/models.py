"""Pieces every app shares: money columns and immutable versioned records."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models

# Money: 20 digits, 2 of them decimals, so 18 before the point. The contract
# (ROUND_RECORD.md "amounts") allows a wager of 12 integer digits and a paid
# amount of 15 (a 500:1 Blind on the largest wager); seven such seats summed
# for the aggregate limit (a finding's claimed total) reach 16, and a meter
# fed by such rounds must still hold its sum. Widening at the same scale never
# rewrites a PostgreSQL table: numeric's precision is only a check.
MONEY = {"max_digits": 20, "decimal_places": 2}


def money_field(**kwargs) -> models.DecimalField:
    return models.DecimalField(**MONEY, **kwargs)


class ImmutableRecordError(Exception):
    """A versioned record or a ledger row may be created, never changed."""


class ImmutableModel(models.Model):
    """A row that is written once: ``save`` refuses updates, ``delete`` refuses always."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRecordError(f"{type(self).__name__} rows are never changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableRecordError(f"{type(self).__name__} rows are never deleted")


ZERO = Decimal("0.00")


class SecondApproval(models.Model):
    """Something one person asked for that takes effect only when a second person approves it.

    Dual control's common part: who asked, the state, and the one decision
    (``trail.approvals`` decides who may take it). The concrete request adds
    what was asked and what its approval made.
    """

    class State(models.TextChoices):
        PENDING = "pending", "waiting for a second supervisor"
        APPROVED = "approved", "approved and applied"
        REJECTED = "rejected", "rejected"

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    requested_by_name = models.CharField(max_length=150)
    requested_at = models.DateTimeField(auto_now_add=True)
    request_id = models.CharField(max_length=64, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_by_name = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.TextField(blank=True)

    class Meta:
        abstract = True


def second_approval_constraints(name: str, made: str) -> list[models.CheckConstraint]:
    """A request's rules in the database (``name`` names them, ``made`` is the field that holds
    what its approval made): never approved by its asker, and a decision's moment and what it
    made present exactly when decided, and approved."""
    return [
        models.CheckConstraint(
            condition=~models.Q(state="approved", decided_by=models.F("requested_by")),
            name=f"{name}_approved_by_a_second_person",
        ),
        models.CheckConstraint(
            condition=(
                models.Q(state="pending", decided_at__isnull=True, **{f"{made}__isnull": True})
                | models.Q(state="approved", decided_at__isnull=False, **{f"{made}__isnull": False})
                | models.Q(state="rejected", decided_at__isnull=False, **{f"{made}__isnull": True})
            ),
            name=f"{name}_decided_consistently",
        ),
    ]
