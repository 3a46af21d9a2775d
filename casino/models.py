"""Pieces every app shares: money columns and immutable versioned records."""

from __future__ import annotations

from decimal import Decimal

from django.db import models

# Money: 14 digits with 2 decimals covers a progressive meter in öre or cents.
MONEY = {"max_digits": 14, "decimal_places": 2}


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
