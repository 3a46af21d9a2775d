"""Writes of the regulators' variance tests: a casino's settings, and the findings a report raises."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from audit.models import ReconciliationReport, VarianceFinding, VarianceTestSetting
from infra import locks
from infra.validation import ErrorList, FieldErrors, decimal_of
from trail.services import SYSTEM, Actor, AuditEntry, audit_record, audit_record_many

from books.variance_tests import (
    PERCENT,
    TITLES,
    USES_BASE_HOLD,
    USES_THRESHOLD,
    Trip,
    VarianceSetting,
    VarianceTest,
)

# The most the columns hold (7 digits, 4 of them decimals), and the most a hold can be.
MOST_POINTS = Decimal("999.9999")
MOST_HOLD = Decimal(100)


class VarianceTestSettingError(FieldErrors):
    """Settings of a variance test the service will not store."""


def variance_test_setting_check(*, code, enabled, threshold, base_hold) -> VarianceSetting:
    """Every field checked at once; the admin's form calls this too, so both refuse alike.

    ``threshold`` (percentage points) is Kansas' and Ohio's, and they need
    one; ``base_hold`` (a hold percentage, 0 to 100) is Kansas' alone and may
    be left empty for each table's theoretical hold. Numbers come as Decimals
    or decimal strings; an empty string is no number.
    """
    try:
        test = VarianceTest(code)
    except ValueError:
        raise VarianceTestSettingError(
            f"{code!r} is not a variance test: one of {', '.join(VarianceTest)}.", field="code"
        ) from None
    errors = ErrorList()
    if not isinstance(enabled, bool):
        errors.add("enabled", "true or false.")
    checked_threshold = _points(
        errors, "threshold", threshold, test=test, used=test in USES_THRESHOLD, required=True,
        most=MOST_POINTS,
    )
    checked_base = _points(
        errors, "base_hold", base_hold, test=test, used=test in USES_BASE_HOLD, required=False,
        most=MOST_HOLD,
    )
    if errors:
        raise VarianceTestSettingError(errors)
    return VarianceSetting(test, enabled=enabled, threshold=checked_threshold, base_hold=checked_base)


def variance_test_configure(
    *, code, enabled, threshold, base_hold, actor: Actor, request_id: str = "",
) -> VarianceTestSetting:
    """Store a test's settings as ``actor``; audited as ``variance_test.configured``, before and after."""
    checked = variance_test_setting_check(
        code=code, enabled=enabled, threshold=threshold, base_hold=base_hold
    )
    with transaction.atomic():
        row = locks.rows_locked(VarianceTestSetting.objects.filter(code=checked.code)).first()
        # A database migrated without data (or flushed by a test) has no row yet.
        before = _snapshot(row) if row is not None else None
        row = row or VarianceTestSetting(code=checked.code)
        row.enabled = checked.enabled
        row.threshold = checked.threshold
        row.base_hold = checked.base_hold
        row.changed_at = timezone.now()
        row.changed_by_name = actor.name
        row.save()
        audit_record(
            actor=actor, action="variance_test.configured", obj=row,
            before=before, after=_snapshot(row), request_id=request_id,
        )
    return row


def variance_findings_raise(
    *, report: ReconciliationReport, trips: list[Trip], actor: Actor = SYSTEM, request_id: str = "",
) -> list[VarianceFinding]:
    """A finding for each trip that has none yet; returns the new ones, in one transaction.

    A finding is one per test, group, period and last day, so rerunning a day
    (a new version of its report) raises nothing twice: the finding already
    there keeps its figures, its report and its state. Each new finding is
    audited as ``variance_finding.raised``.
    """
    created = []
    with transaction.atomic():
        # One order for every writer, so two runs at once wait on each other, never deadlock.
        for identity, trip in sorted(_distinct(trips).items()):
            finding, new = VarianceFinding.objects.get_or_create(
                **dict(zip(_IDENTITY, identity)),
                defaults={
                    "day_from": trip.day_from, "report": report, "figures": dict(trip.figures),
                    "detail": trip.detail,
                },
            )
            if new:
                created.append(finding)
        audit_record_many(entries=[
            AuditEntry(actor=actor, action="variance_finding.raised", obj=finding,
                       after=_raised(finding), request_id=request_id)
            for finding in created
        ])
    return created


# ---- the pieces -------------------------------------------------------------

_IDENTITY = ("test", "scope", "key", "currency", "period", "day_to")


def _distinct(trips: Iterable[Trip]) -> dict[tuple, Trip]:
    """The trips by their finding's identity; of two with one identity, the first."""
    found: dict[tuple, Trip] = {}
    for trip in trips:
        found.setdefault(tuple(getattr(trip, name) for name in _IDENTITY), trip)
    return found


def _points(
    errors: ErrorList, field: str, value, *,
    test: VarianceTest, used: bool, required: bool, most: Decimal,
) -> Decimal | None:
    """A percentage (or points) for ``field``: from 0 to ``most``, to 4 decimal places."""
    if value is None or value == "":
        if used and required:
            errors.add(field, f"{TITLES[test]} needs one, in percentage points.")
        return None
    if not used:
        errors.add(field, f"{TITLES[test]} takes none: leave it empty.")
        return None
    number = decimal_of(value)
    if number is None:
        errors.add(field, f"{value!r} is not a number: send a decimal string such as '3.5'.")
        return None
    if number < 0:
        errors.add(field, "cannot be negative.")
        return None
    if number > most:
        errors.add(field, f"cannot be above {most}.")
        return None
    if number != number.quantize(PERCENT):
        errors.add(field, "at most 4 decimal places.")
        return None
    return number.quantize(PERCENT)


def _snapshot(row: VarianceTestSetting) -> dict:
    return {
        "code": row.code, "enabled": row.enabled,
        "threshold": None if row.threshold is None else str(row.threshold),
        "base_hold": None if row.base_hold is None else str(row.base_hold),
    }


def _raised(finding: VarianceFinding) -> dict:
    return {
        **{name: getattr(finding, name) for name in _IDENTITY}, "day_from": finding.day_from,
        "report": finding.report_id, "figures": finding.figures, "detail": finding.detail,
    }
