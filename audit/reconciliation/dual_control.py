"""The range's changes of money and of what is paid, with who asked and who approved.

A night's report lists every meter adjustment and every configuration and
pool version the range made, and flags each that no second person approved:
an adjustment within what one may move alone, a version that changed
nothing paid, or one the system made (a migration, a command). A change a person made alone is
also an alert, so that it is read without opening the report, and so is a
change whose dual control was unsound: a version the system made that
changes what the version before it paid, or one approved by a person who is
not independent of the asker (``trail.approvals.approver_tie``, as the
trail stood when it was approved). Reports made
before this section have none (``ReportFigures.dual_control`` is None): "not
recorded".
"""

from __future__ import annotations

from datetime import datetime

from progressive.models import MeterEvent, PoolVersion
from rounds.models import TableConfigVersion
from trail.approvals import approver_tie

from books.report_figures import Change, DualControl

SYSTEM_NAME = "system"


def changes_of_window(*, start: datetime, end: datetime) -> list[Change]:
    """Every adjustment and version recorded in [start, end), oldest first."""
    changes = [*_adjustments(start, end), *_config_versions(start, end), *_pool_versions(start, end)]
    return sorted(changes, key=lambda change: change.at)


def dual_control_section(*, start: datetime, end: datetime) -> DualControl:
    """The report's ``dual_control`` figures."""
    changes = changes_of_window(start=start, end=end)
    return DualControl(
        changes=changes,
        alone=sum(change.alone for change in changes),
        alone_by_a_person=sum(change.alone and _by_a_person(change) for change in changes),
    )


def _by_a_person(change: Change) -> bool:
    return change.asked_by != SYSTEM_NAME


def dual_control_alerts(section: DualControl | None) -> list[str]:
    """An alert naming the changes a person made with no second person, and one naming those whose
    dual control was unsound (the system changed what is paid, a second person not independent)."""
    changes = section.changes if section else []
    alerts = []
    alone = [c for c in changes if c.alone and _by_a_person(c)]
    if alone:
        alerts.append(f"DUAL CONTROL: {len(alone)} change(s) of money or of what is paid were made by one person "
                      "with no second approval: " + "; ".join(f"{c.what} by {c.asked_by}" for c in alone[:10]))
    unsound = [c for c in changes if c.unsound]
    if unsound:
        alerts.append(f"DUAL CONTROL: {len(unsound)} change(s) of money or of what is paid had no sound second "
                      "person: " + "; ".join(f"{c.what}: {c.unsound}" for c in unsound[:10]))
    return alerts


def _unsound_approval(asked) -> str:
    """Why ``asked``'s approver is not independent of its asker as the trail stands, or ""."""
    if asked is None or asked.decided_by_id is None or asked.requested_by_id is None:
        return ""
    tie = approver_tie(approver_id=asked.decided_by_id, requester_id=asked.requested_by_id, at=asked.decided_at)
    return f"approved by {asked.decided_by_name}, not independent of {asked.requested_by_name}: {tie}" if tie else ""


def _unsound_version(version, asked, previous, pays_differently: bool) -> str:
    if asked is not None:
        return _unsound_approval(asked)
    if version.created_by_id is None and previous is not None and pays_differently:
        return f"made by the system, changing what v{previous.version} paid, with no second person"
    return ""


def _adjustments(start: datetime, end: datetime):
    events = (MeterEvent.objects.filter(kind=MeterEvent.Kind.ADJUSTMENT, created_at__gte=start, created_at__lt=end)
              .select_related("pool", "approval").order_by("created_at", "pk"))
    for event in events:
        asked = getattr(event, "approval", None)
        yield Change(
            kind="meter_adjustment", what=f"{event.pool.code} {event.delta:+} {event.pool.currency}",
            at=event.created_at.isoformat(),
            asked_by=asked.requested_by_name if asked else (event.actor_name or SYSTEM_NAME),
            approved_by=asked.decided_by_name if asked else None, alone=asked is None,
            unsound=_unsound_approval(asked),
        )


def _config_versions(start: datetime, end: datetime):
    versions = (TableConfigVersion.objects.filter(created_at__gte=start, created_at__lt=end)
                .select_related("config", "created_by", "approval").order_by("created_at", "pk"))
    for version in versions:
        asked = getattr(version, "approval", None)
        previous = TableConfigVersion.objects.filter(config=version.config, version=version.version - 1).first()
        paying = previous is not None and (previous.rules() != version.rules() or previous.pool_id != version.pool_id)
        yield Change(
            kind="config_version", what=f"{version.config.name} v{version.version}",
            at=version.created_at.isoformat(),
            asked_by=asked.requested_by_name if asked else _name(version.created_by),
            approved_by=asked.decided_by_name if asked else None, alone=asked is None,
            unsound=_unsound_version(version, asked, previous, paying),
        )


def _pool_versions(start: datetime, end: datetime):
    versions = (PoolVersion.objects.filter(created_at__gte=start, created_at__lt=end)
                .select_related("pool", "created_by", "approval").order_by("created_at", "pk"))
    for version in versions:
        asked = getattr(version, "approval", None)
        previous = (PoolVersion.objects.filter(pool=version.pool, version=version.version - 1)
                    .select_related("pool").first())
        yield Change(
            kind="pool_version", what=f"{version.pool.code} v{version.version}",
            at=version.created_at.isoformat(),
            asked_by=asked.requested_by_name if asked else _name(version.created_by),
            approved_by=asked.decided_by_name if asked else None, alone=asked is None,
            unsound=_unsound_version(version, asked, previous,
                                     previous is not None and previous.rules() != version.rules()),
        )


def _name(user) -> str:
    return user.get_username() if user is not None else SYSTEM_NAME
