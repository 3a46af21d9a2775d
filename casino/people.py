"""A person as the audit trail keeps him, recorded whatever path changed him.

A person's state is what decides what he may do: his name and e-mail, whether
he is active, staff or superuser, his roles (groups), the permissions ticked
for him one by one, and his password (a fingerprint of its stored hash: the
trail never holds the hash itself). Every change of it is an audit event
whose ``after`` is the whole state (``person_state``), and
``verify_audit`` holds each person to his last one (``casino.proof_people``):
a change made past the service (SQL) is named.

The service's own paths record the change with who made it, in the change's
transaction (the admin's user pages, ``user_roles_set``). Every other path
(``createsuperuser``, ``changepassword``, a shell) is seen by Django's
signals and recorded once its transaction commits, by the command that ran
(``Actor.of_command``), or as unattributed: a change no person proved. Either
way a person who may no longer work a kind of finding (made inactive, a role
taken) gives his cases of that kind back first, as the service's paths do.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import m2m_changed, post_save

from audit.proof_findings import WORKED
from rounds.services.cases import cases_handed_back
from trail.models import AuditEvent
from trail.services import Actor, audit_record

User = get_user_model()
PERSON = User._meta.label_lower  # the events' object_type
WATCHED = ("username", "email", "is_active", "is_staff", "is_superuser")
CREATED, CHANGED = "user.created", "user.changed"
BASELINE = "people.baseline"
UNATTRIBUTED = Actor(AuditEvent.ActorKind.SYSTEM, "", "unattributed: no person or command proved it")
# A login writes last_login alone: no change of what the person may do.
UNWATCHED_SAVES = frozenset({"last_login"})


def password_fingerprint(encoded: str) -> str:
    return hashlib.sha256((encoded or "").encode()).hexdigest()[:32]


def person_state(user) -> dict:
    """Everything of ``user`` that decides what he may do, as the trail records it."""
    state = {name: getattr(user, name) for name in WATCHED}
    state["roles"] = sorted(user.groups.values_list("name", flat=True)) if user.pk else []
    state["permissions"] = sorted(
        f"{app}.{codename}" for app, codename in
        user.user_permissions.values_list("content_type__app_label", "codename")) if user.pk else []
    state["password"] = password_fingerprint(user.password)
    return state


def same_state(recorded: dict, state: dict) -> bool:
    """Whether a recorded state is ``state`` (what else the event says of him, e.g. the
    directory's facts, is not his state)."""
    return all(recorded.get(name) == value for name, value in state.items())


def person_record(*, user, actor: Actor, action: str, before: dict | None = None, request_id: str = "",
                  extra: dict | None = None) -> None:
    """The event of a change of ``user`` made by ``actor``, with his whole state after it (and
    ``extra``: what the path that changed him knows of it, e.g. the directory's entry)."""
    audit_record(actor=actor, action=action, obj=user, object_repr=user.get_username(), before=before,
                 after={**person_state(user), **(extra or {})}, request_id=request_id)


def last_recorded_state(user_pk: int) -> dict | None:
    """The state the trail last recorded of the person (None: never recorded whole)."""
    events = (AuditEvent.objects.filter(object_type=PERSON, object_id=str(user_pk))
              .order_by("-seq").values_list("after", flat=True))
    for after in events.iterator(chunk_size=20):
        if isinstance(after, dict) and "password" in after:
            return after
    return None


def _acting() -> Actor:
    """Who made a change no service path recorded: the ``manage.py`` command running, if any."""
    if sys.argv and Path(sys.argv[0]).name == "manage.py" and len(sys.argv) > 1:
        return Actor.of_command(sys.argv[1])
    return UNATTRIBUTED


def _recorded_if_changed(user_pk: int, actor: Actor) -> None:
    user = User.objects.filter(pk=user_pk).first()
    if user is None:
        return
    before = last_recorded_state(user_pk)
    if before is not None and same_state(before, person_state(user)):
        return  # recorded by the path that made it, or nothing watched changed
    with transaction.atomic():
        # Before the trail's event: the findings' rows are locked before the chain's head (infra.locks).
        person_cases_checked(user=user, actor=actor, why=f"{user.get_username()} was changed ({actor.name})")
        person_record(user=user, actor=actor, action=CREATED if before is None else CHANGED, before=before)


def person_cases_checked(*, user, actor: Actor, why: str, request_id: str = "") -> int:
    """The cases ``user`` holds that he may no longer work given back to nobody, with ``why``: a
    person without the role, or made inactive, holds no case (nor is he mailed about it)."""
    return cases_handed_back(person=user, actor=actor, models=WORKED, why=why, request_id=request_id)


def _touched(user_pk: int) -> None:
    actor = _acting()
    transaction.on_commit(lambda: _recorded_if_changed(user_pk, actor))


def _saved(sender, instance, created, update_fields=None, raw=False, **kwargs) -> None:
    if raw or (update_fields is not None and set(update_fields) <= UNWATCHED_SAVES):
        return
    _touched(instance.pk)


def _related_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    if not reverse:
        _touched(instance.pk)
        return
    # group.user_set.add(...) and the like: the people named changed.
    for user_pk in pk_set or ():
        _touched(user_pk)
    if action == "post_clear":  # who was cleared is no longer known here: every member is checked
        for user_pk in User.objects.values_list("pk", flat=True):
            _touched(user_pk)


def people_baseline_once(sender, **kwargs) -> None:
    """At the first ``migrate`` that has this module (connected to ``post_migrate``, after the
    last app), each person the trail never recorded whole is recorded as he stands, and the
    trail says the baseline was taken: from then on every change is held to it. Never again
    after that, so a person inserted past the service later is named, not taken in."""
    from django.apps import apps

    if sender is not [config for config in apps.get_app_configs() if config.models_module is not None][-1]:
        return
    if AuditEvent.objects.filter(action=BASELINE).exists():
        return
    actor = Actor.of_command("migrate")
    with transaction.atomic():
        recorded = 0
        for user in User.objects.order_by("pk"):
            if last_recorded_state(user.pk) is None:
                person_record(user=user, actor=actor, action="user.state_recorded")
                recorded += 1
        audit_record(actor=actor, action=BASELINE, object_type=PERSON, object_id="", object_repr="people",
                     after={"recorded": recorded})


def people_watched() -> None:
    """Connect the receivers (``CasinoConfig.ready``)."""
    post_save.connect(_saved, sender=User, dispatch_uid="casino.people.saved")
    for through in (User.groups.through, User.user_permissions.through):
        m2m_changed.connect(_related_changed, sender=through, dispatch_uid=f"casino.people.{through.__name__}")
