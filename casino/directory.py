"""Single sign-on against the casino's directory (LDAP, through django-auth-ldap).

Off unless ``DIRECTORY_URI`` names a server. Then a person signs in to the
admin with his directory name and password; the directory's groups named in
``DIRECTORY_ROLE_GROUPS`` are his roles, read again at every sign-in, so a
person the directory moves out of the supervisors' group is no supervisor from
his next sign-in (and one it removes cannot sign in at all). The second factor
is still asked of those who must prove one (``casino.second_factor``).

Every change the directory makes to a person is an audit event whose actor is
the directory, with what the directory says of its entry: its name (DN), who
made it and who changed it last and when (the operational attributes
``creatorsName``, ``createTimestamp``, ``modifiersName``, ``modifyTimestamp``).
That is what dual control reads to tell whether two people of the directory are
independent (``trail.approvals``): a puppet made in the directory by the person
who then asks for an approval is named as one.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django_auth_ldap.backend import LDAPBackend

from trail.approvals import DIRECTORY_FACTS
from trail.models import AuditEvent
from trail.services import Actor

from .people import CHANGED, CREATED, last_recorded_state, person_record, person_state, same_state
from .roles import ROLE_NAMES

def role_groups_checked() -> None:
    """``DIRECTORY_ROLE_GROUPS`` names only roles of people, each with a group (``ImproperlyConfigured``
    at start-up otherwise: a typo would quietly give no one that role)."""
    people = [role for role in ROLE_NAMES if role != "table"]
    if not settings.DIRECTORY_ROLE_GROUPS:
        raise ImproperlyConfigured("DIRECTORY_URI is set: DIRECTORY_ROLE_GROUPS maps roles to the directory's "
                                   "groups (role=group DN;…)")
    for role, dn in settings.DIRECTORY_ROLE_GROUPS.items():
        if role not in people or not dn:
            raise ImproperlyConfigured(f"DIRECTORY_ROLE_GROUPS: {role}={dn} is not role=group DN with a role of "
                                       f"people ({', '.join(people)})")


def roles_of(group_dns) -> list[str]:
    """The roles a person in the directory groups ``group_dns`` holds (DNs compared case-blind)."""
    member_of = {dn.lower() for dn in group_dns}
    return sorted(role for role, dn in settings.DIRECTORY_ROLE_GROUPS.items() if dn.lower() in member_of)


def _timestamp(value: str) -> str:
    """An LDAP GeneralizedTime (``20261206153000Z``) as ISO 8601, or '' if unreadable."""
    try:
        return datetime.strptime(value[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC).isoformat()
    except ValueError:
        return ""


def entry_facts(ldap_user) -> dict:
    """What the directory says of the person's entry: its DN, who made and last changed it, and when."""
    attrs = ldap_user.attrs or {}

    def first(name: str) -> str:
        values = attrs.get(name) or attrs.get(name.lower()) or [""]
        return values[0]

    return {
        "dn": ldap_user.dn or "",
        "made_by": first("creatorsName"), "made": _timestamp(first("createTimestamp")),
        "changed_by": first("modifiersName"), "changed": _timestamp(first("modifyTimestamp")),
    }


def directory_actor() -> Actor:
    return Actor(AuditEvent.ActorKind.SYSTEM, "", f"directory {settings.DIRECTORY_URI}"[:150])


def person_from_directory(*, user, ldap_user) -> None:
    """``user`` as the directory has him now: his roles from its groups, each change recorded
    with the directory as its actor and the entry's facts (in the caller's transaction)."""
    from .services import user_roles_set  # services record through casino.people, as this does

    actor, facts = directory_actor(), {DIRECTORY_FACTS: entry_facts(ldap_user)}
    before = last_recorded_state(user.pk)
    if before is None:
        person_record(user=user, actor=actor, action=CREATED, extra=facts)
    roles = roles_of(ldap_user.group_dns)
    if sorted(user.groups.filter(name__in=ROLE_NAMES).values_list("name", flat=True)) != roles:
        user_roles_set(user=user, roles=roles, actor=actor, extra=facts)
    elif before is not None and (not same_state(before, person_state(user))
                                 or before.get(DIRECTORY_FACTS) != facts[DIRECTORY_FACTS]):
        person_record(user=user, actor=actor, action=CHANGED, before=before, extra=facts)


class DirectoryBackend(LDAPBackend):
    """django-auth-ldap's backend, with the person's roles and trail kept from the directory."""

    settings_prefix = "AUTH_LDAP_"

    def authenticate_ldap_user(self, ldap_user, password):
        # One transaction: the person as the directory made him and his events, or neither.
        with transaction.atomic():
            user = super().authenticate_ldap_user(ldap_user, password)
            if user is not None:
                person_from_directory(user=user, ldap_user=ldap_user)
        return user
