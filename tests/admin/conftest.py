"""What the admin's tests share: the last gaming day, seeded."""

from __future__ import annotations

import pytest
from django.utils import timezone

from infra.gaming_day import gaming_day_of
from tests import examples


@pytest.fixture
def last_day(table_client):
    """Every worked example posted on the last gaming day's evening; that day."""
    start = examples.last_gaming_day_evening(timezone.now())
    examples.post_all_on(table_client, start)
    return gaming_day_of(start)
