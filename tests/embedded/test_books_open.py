"""The books open the month before the database was made, read the same on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.migrations.recorder import MigrationRecorder

from infra.partitioning import month_of
from rounds.window import books_open


@pytest.mark.django_db
def test_the_books_open_the_month_before_the_first_migration(settings):
    settings.ROUND_WINDOW_OPENS = None
    made = MigrationRecorder.Migration.objects.order_by("applied").first().applied.date()
    assert books_open() == month_of(month_of(made) - timedelta(days=1))
