"""Dual control's second person: who may decide a request another person made, and the decision.

Every request that waits for a second person (a large meter adjustment, a
configuration version that changes what is paid) is a
``infra.models.SecondApproval`` and is decided here, so the rules are one:
a person decides, once; the asker never approves; and neither does a person
who is not independent of the asker (``approver_tie``: a "puppet", whose
account the asker, or one hand with the asker's, holds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.utils import timezone

from infra import locks
from infra.models import SecondApproval
from infra.validation import NON_FIELD

from .models import AuditEvent
from .services import Actor, audit_record

CREATED = "user.created"  # a person's making, as casino.people records it
# The key of a person's event under which the directory's facts of his entry are kept (casino.directory).
DIRECTORY_FACTS = "directory"

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


def approver_tie(*, approver_id: int, requester_id: int, at: datetime | None = None) -> str | None:
    """Why the approver is not independent of the requester, or None.

    Two people are not independent when one made the other, or changed him
    within ``APPROVER_INDEPENDENCE_DAYS`` (created, roles given, staff or
    superuser set, a permission ticked, a password set: each a hand on the
    account the approval would come from); when one person changed both within
    that window; or when either was not made by a person the trail names (an
    account made by a command, or past the service, has nobody answering for
    it). Read from the audit log, which every change of a person writes
    whatever its path (``casino.people``) and nobody can rewrite, as it stood
    at ``at`` (now unless told: a decision taken then is judged by then).
    """
    person = get_user_model()._meta.label_lower
    at = at or timezone.now()
    since = at - timedelta(days=settings.APPROVER_INDEPENDENCE_DAYS)
    pair = (str(approver_id), str(requester_id))
    names = dict(get_user_model().objects.filter(pk__in=pair).values_list("pk", "username"))
    name = {key: names.get(int(key), f"#{key}") for key in pair}
    events = AuditEvent.objects.filter(object_type=person, object_id__in=pair, actor_kind=AuditEvent.ActorKind.USER,
                                       at__lte=at)
    for one, other in (pair, pair[::-1]):
        made = events.filter(object_id=one, actor_id=other, action=CREATED).order_by("seq").first()
        if made is not None:
            return f"{name[other]} made the user {name[one]} ({made.at:%Y-%m-%d})"
        changed = events.filter(object_id=one, actor_id=other, at__gte=since).order_by("-seq").first()
        if changed is not None:
            return (f"{name[other]} changed the user {name[one]} ({changed.action}, {changed.at:%Y-%m-%d %H:%M %Z}) "
                    f"within the last {settings.APPROVER_INDEPENDENCE_DAYS} days")
    hands = [dict(events.filter(object_id=key, at__gte=since).exclude(actor_id__in=pair)
                  .values_list("actor_id", "actor_name")) for key in pair]
    both = sorted(set(hands[0]) & set(hands[1]))
    if both:
        return (f"{hands[0][both[0]]} made or changed both {name[pair[0]]} and {name[pair[1]]} within the last "
                f"{settings.APPROVER_INDEPENDENCE_DAYS} days")
    entries = {key: _directory_entry(person, key, at) for key in pair}
    if any(entries.values()):
        tie = _directory_tie(entries, name, pair, since)
        if tie is not None:
            return tie
    for key in pair:
        first = (AuditEvent.objects.filter(object_type=person, object_id=key, action=CREATED, at__lte=at)
                 .order_by("seq").first())
        if first is not None and first.actor_kind == AuditEvent.ActorKind.USER:
            continue
        made_by = ((first.after or {}).get(DIRECTORY_FACTS) or {}).get("made_by") if first is not None else ""
        if made_by:
            continue  # made in the casino's directory by the entry it names: its ties are read above
        how = "by no one the trail names" if first is None else f"by {first.actor_name}"
        return f"the user {name[key]} was made {how}, not by a person the audit trail names"
    return None


def _directory_entry(person: str, key: str, at: datetime) -> dict | None:
    """What the directory last said of the person's entry (``casino.directory``), or None."""
    after = (AuditEvent.objects.filter(object_type=person, object_id=key, at__lte=at, after__has_key=DIRECTORY_FACTS)
             .order_by("-seq").values_list("after", flat=True).first())
    return after[DIRECTORY_FACTS] if after else None


def _directory_tie(entries: dict, name: dict, pair: tuple[str, str], since: datetime) -> str | None:
    """The directory's own ties: one entry made, or lately changed, by the other's, or both by one hand."""
    def hands(entry: dict | None) -> dict[str, str]:
        if not entry:
            return {}
        held = {entry["made_by"].lower(): f"made ({entry['made'][:10]})"} if entry.get("made_by") and (
            _after(entry.get("made"), since)) else {}
        if entry.get("changed_by") and _after(entry.get("changed"), since):
            held.setdefault(entry["changed_by"].lower(), f"changed ({entry['changed'][:10]})")
        return held

    for one, other in (pair, pair[::-1]):
        entry, others = entries[one] or {}, entries[other] or {}
        dn = (others.get("dn") or "").lower()
        if dn and entry.get("made_by", "").lower() == dn:
            return f"{name[other]} made the user {name[one]} in the directory ({entry.get('made', '')[:10]})"
        if dn and dn in hands(entry):
            return (f"{name[other]} {hands(entry)[dn]} the user {name[one]} in the directory within the last "
                    f"{settings.APPROVER_INDEPENDENCE_DAYS} days")
    both = sorted(set(hands(entries[pair[0]])) & set(hands(entries[pair[1]])) - {""})
    if both:
        return (f"the directory's {both[0]} made or changed both {name[pair[0]]} and {name[pair[1]]} within the "
                f"last {settings.APPROVER_INDEPENDENCE_DAYS} days")
    return None


def _after(moment: str | None, since: datetime) -> bool:
    """Whether the directory's time ``moment`` (ISO 8601) is at or after ``since`` (unknown: yes)."""
    try:
        return datetime.fromisoformat(moment) >= since
    except (TypeError, ValueError):
        return True


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
            f"{asked.requested_by_name} asked for {what} and {actor.name} is not independent of them: {tie}. "
            f"A person independent of the asker approves it.",
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


def pending_locked(requests: QuerySet, *, asked: SecondApproval, actor: Actor, approving: bool,
                   what: Callable[[SecondApproval], str], refused: Callable[..., Exception]) -> SecondApproval:
    """``asked`` read again from ``requests`` and locked, once ``actor`` may approve (``approving``)
    or reject it (``decision_refusal``); the lock of what it is a request on is the caller's, taken
    first. Else ``refused`` (the app's error) is raised with the refusal's message, ``code`` and
    ``conflict``, and its field; ``what`` names the locked request in the refusal."""
    locked = locks.rows_locked(requests.filter(pk=asked.pk), [asked.pk]).get()
    refusal = decision_refusal(asked=locked, actor=actor, approving=approving, what=what(locked))
    if refusal is not None:
        raise refused(refusal.message, conflict=refusal.conflict, code=refusal.code,
                      field="approver" if refusal.code == "not_independent" else NON_FIELD)
    return locked


def rejection_note(note: object, refused: Callable[..., Exception]) -> str:
    """The note a rejection must carry, stripped; ``refused`` (the app's error) on the note's field
    where there is none."""
    if not isinstance(note, str) or not note.strip():
        raise refused("a rejection needs a note saying why.", field="note")
    return note.strip()


def rejection_write(*, locked: SecondApproval, actor: Actor, note: str, action: str, about: dict,
                    request_id: str = "") -> None:
    """The rejection of ``locked`` (``pending_locked``) stored, and its audit event: ``about`` (what
    the request was on), the note and who asked."""
    decision_write(asked=locked, state=State.REJECTED, actor=actor, note=note)
    audit_record(actor=actor, action=action, obj=locked,
                 after={**about, "note": note, "requested_by": locked.requested_by_name}, request_id=request_id)
