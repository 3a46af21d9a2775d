"""The workspace's browser tests' evening: a protected evening at S01 (a hole-carder among honest
players), every worked example on the same gaming day, the day reconciled, and an auditor."""

from __future__ import annotations

from datetime import date, datetime

from django.utils import timezone

from audit.models import ReconciliationReport
from audit.reconciliation.services import report_run
from casino.services import user_roles_set
from infra.gaming_day import gaming_day_of
from tests import examples
from tests.admin.test_protection_admin import protected_evening
from trail.services import SYSTEM

PASSWORD = "browser-test-password"


def reconciled_evening(table_client, django_user_model, username: str) -> tuple[datetime, date, ReconciliationReport, object]:
    """The evening posted and protected, its day reconciled, and an auditor ``username`` (password
    ``PASSWORD``): ``(start, day, report, user)``."""
    protected_evening(table_client)
    start = examples.last_gaming_day_evening(timezone.now())
    examples.post_all_on(table_client, start)
    day = gaming_day_of(start)
    report = report_run(day_from=day)
    user = django_user_model.objects.create_user(username, password=PASSWORD)
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)
    return start, day, report, user
