"""People and their roles."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.db import transaction

from trail.services import Actor, audit_record

from .roles import ROLE_NAMES, STAFF_ROLES


class RoleError(ValueError):
    pass


def user_roles_set(*, user, roles: list[str], actor: Actor, request_id: str = "") -> None:
    """Give ``user`` exactly ``roles``; staff roles open the admin to them."""
    unknown = sorted(set(roles) - set(ROLE_NAMES))
    if unknown:
        raise RoleError(f"unknown roles {unknown}; the roles are {list(ROLE_NAMES)}")
    with transaction.atomic():
        before = sorted(user.groups.filter(name__in=ROLE_NAMES).values_list("name", flat=True))
        keep = list(user.groups.exclude(name__in=ROLE_NAMES))
        user.groups.set(keep + list(Group.objects.filter(name__in=roles)))
        user.is_staff = bool(set(roles) & STAFF_ROLES) or user.is_superuser
        user.save(update_fields=["is_staff"])
        audit_record(
            actor=actor, action="user.roles_set", obj=user,
            object_repr=user.get_username(), before={"roles": before},
            after={"roles": sorted(roles), "is_staff": user.is_staff}, request_id=request_id,
        )
