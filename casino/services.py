"""People and their roles."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.db import transaction

from trail.services import Actor

from .people import person_cases_checked, person_record
from .roles import ROLE_NAMES, STAFF_ROLES


class RoleError(ValueError):
    pass


def user_roles_set(*, user, roles: list[str], actor: Actor, request_id: str = "", extra: dict | None = None) -> None:
    """Give ``user`` exactly ``roles``; staff roles open the admin to them (``extra``: what the
    event says beside his state, as ``person_record`` takes it)."""
    unknown = sorted(set(roles) - set(ROLE_NAMES))
    if unknown:
        raise RoleError(f"unknown roles {unknown}; the roles are {list(ROLE_NAMES)}")
    with transaction.atomic():
        before = sorted(user.groups.filter(name__in=ROLE_NAMES).values_list("name", flat=True))
        keep = list(user.groups.exclude(name__in=ROLE_NAMES))
        user.groups.set(keep + list(Group.objects.filter(name__in=roles)))
        user.is_staff = bool(set(roles) & STAFF_ROLES) or user.is_superuser
        user.save(update_fields=["is_staff"])
        # Before the trail's event: the findings' rows are locked before the chain's head (infra.locks).
        person_cases_checked(user=user, actor=actor, why=f"{user.get_username()}'s roles were set to "
                             f"{', '.join(sorted(roles)) or 'none'}", request_id=request_id)
        person_record(user=user, actor=actor, action="user.roles_set", before={"roles": before},
                      request_id=request_id, extra=extra)

