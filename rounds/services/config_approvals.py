"""The second supervisor's decision on a configuration version that changes what is paid.

Mirrors a large meter adjustment (``progressive.services.adjustment_approve``),
with the same rules of who may decide (``trail.approvals``). An approved
version starts at the later of what was asked and the moment of approval:
a round dealt while the request waited was judged by the version then in
force, and that verdict stays the verdict.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from infra import locks
from infra.validation import NON_FIELD
from rounds.models import ConfigVersionRequest, TableConfig
from trail.approvals import decision_write, pending_locked, rejection_note, rejection_write
from trail.services import Actor, audit_record

from .configs import ConfigError, config_numbers_check, latest_checked, version_write

State = ConfigVersionRequest.State


class ConfigApprovalError(ConfigError):
    """A decision on a version request the rules refuse; ``conflict``: no one else's doing fixes it."""

    def __init__(self, message: str, *, field: str = NON_FIELD, conflict: bool = False, code: str = ""):
        super().__init__(message, field=field)
        self.conflict, self.code = conflict, code


def config_version_approve(*, asked: ConfigVersionRequest, actor: Actor,
                           request_id: str = "") -> ConfigVersionRequest:
    """A second supervisor's approval: the version is written, in force from
    max(the asked ``effective_from``, now)."""
    with transaction.atomic():
        config = locks.rows_locked(TableConfig.objects.filter(pk=asked.config_id), [asked.config_id]).get()
        locked = _request_locked(asked, actor, approving=True)
        effective_from = max(locked.effective_from, timezone.now())
        # Checked again: the rules may have changed since it was asked.
        numbers = config_numbers_check(**locked.numbers)
        latest = latest_checked(config=config, effective_from=effective_from)
        version = version_write(
            config=config, latest=latest, effective_from=effective_from, numbers=numbers, pool=locked.pool,
            note=locked.note, actor=actor, request_id=request_id, asked=locked,
        )
        decision_write(asked=locked, state=State.APPROVED, actor=actor, version=version)
        audit_record(
            actor=actor, action="config.version_approved", obj=locked,
            after={"config": config.name, "version": version.version,
                   "effective_from": version.effective_from, "asked_from": locked.effective_from,
                   "requested_by": locked.requested_by_name, "approved_by": actor.name},
            request_id=request_id,
        )
    return locked


def config_version_reject(*, asked: ConfigVersionRequest, actor: Actor, note: str,
                          request_id: str = "") -> ConfigVersionRequest:
    """A supervisor's refusal (the asker's own, to withdraw it): no version is made."""
    note = rejection_note(note, ConfigError)
    with transaction.atomic():
        locks.rows_locked(TableConfig.objects.filter(pk=asked.config_id), [asked.config_id]).get()
        locked = _request_locked(asked, actor, approving=False)
        rejection_write(locked=locked, actor=actor, note=note, action="config.version_rejected",
                        about={"config": locked.config.name}, request_id=request_id)
    return locked


def _request_locked(asked: ConfigVersionRequest, actor: Actor, *, approving: bool) -> ConfigVersionRequest:
    """``asked`` (a request on a configuration whose lock the caller holds) locked, once ``actor`` may decide it."""
    return pending_locked(ConfigVersionRequest.objects.select_related("config"), asked=asked, actor=actor,
                          approving=approving, what=lambda r: f"version request {r.pk} of {r.config.name}",
                          refused=ConfigApprovalError)
