"""Dual control's second person: who may decide a request another person made, and the decision.

Every request that waits for a second person (a large meter adjustment, a
configuration version that changes what is paid) is a
``infra.models.SecondApproval`` and is decided here, so the rules are one:
a person decides, once; the asker never approves; and neither does a person
the asker created, gave a role or otherwise changed within
``APPROVER_INDEPENDENCE_DAYS`` (a "puppet": an admin who makes a user a
supervisor holds that user's approval in his hand). Who did what to a person
is read from the audit log, which every change of a user writes (the admin's
user pages, ``casino.services.user_roles_set``) and nobody can rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from infra.models import SecondApproval

from .models import AuditEvent
from .services import Actor

State = SecondApproval.State


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why ``actor`` may not take this decision; ``code`` is the API's error code."""

    message: str
    code: str  # "decided", "not_a_person", "own_request", "not_independent"

    @property
    def conflict(self) -> bool:
        """A refusal no other request would fix: the API answers 409."""
        return self.code in ("decided", "not_independent")


def approver_tie(*, approver_id: int, requester_id: int) -> AuditEvent | None:
    """The last change the requester made to the approver's user within the independence window.

    Any change counts (created, roles given, staff or superuser set, e-mail
    changed): each is a hand on the account the approval would come from.
    """
    since = timezone.now() - timedelta(days=settings.APPROVER_INDEPENDENCE_DAYS)
    return (
        AuditEvent.objects.filter(
            object_type=get_user_model()._meta.label_lower, object_id=str(approver_id),
            actor_kind=AuditEvent.ActorKind.USER, actor_id=str(requester_id), at__gte=since,
        )
        .order_by("-seq")
        .first()
    )


def decision_refusal(*, asked: SecondApproval, actor: Actor, approving: bool, what: str) -> Refusal | None:
    """Why ``actor`` may not approve (``approving``) or reject ``asked``, or ``None``.

    ``asked`` is the request as locked by the caller; ``what`` names it ("this adjustment").
    """
    if asked.state != State.PENDING:
        return Refusal(
            f"{what} was {asked.state} by {asked.decided_by_name} at {asked.decided_at:%Y-%m-%d %H:%M:%S %Z}.",
            "decided",
        )
    if actor.user_id is None:
        return Refusal(f"a person decides {what}.", "not_a_person")
    if not approving:
        return None
    if actor.user_id == asked.requested_by_id:
        return Refusal(f"{actor.name} asked for {what}: another supervisor approves it.", "own_request")
    tie = approver_tie(approver_id=actor.user_id, requester_id=asked.requested_by_id)
    if tie is not None:
        return Refusal(
            f"{asked.requested_by_name} asked for {what} and changed the user {actor.name} "
            f"({tie.action}, {tie.at:%Y-%m-%d %H:%M %Z}) within the last "
            f"{settings.APPROVER_INDEPENDENCE_DAYS} days: a person independent of the asker approves it.",
            "not_independent",
        )
    return None


def decision_write(*, asked: SecondApproval, state: str, actor: Actor, note: str = "", **made) -> None:
    """Store the decision on ``asked`` (locked by the caller); ``made`` is what an approval produced."""
    for name, value in made.items():
        setattr(asked, name, value)
    asked.state, asked.decision_note = state, note
    asked.decided_by_id, asked.decided_by_name, asked.decided_at = actor.user_id, actor.name[:150], timezone.now()
    asked.save(update_fields=["state", "decision_note", "decided_by", "decided_by_name", "decided_at", *made])
