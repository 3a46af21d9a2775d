"""People and their privileges held to the audit trail and to the roles the code declares.

The application's role must be able to write people and their groups (the
admin does), so the database cannot refuse an edit of them; the trail can
name it. Each person is what his last whole-state event says
(``casino.people``): a group membership inserted, a flag set, a password
changed or a permission ticked past the service is named, and so is a person
the trail never recorded. Each role's group holds exactly the permissions
``casino/roles.py`` gives it (``migrate`` syncs them): a permission added to
a group is named too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.contrib.auth.models import Group

from .people import User, last_recorded_state, person_state
from .roles import ROLES, permissions_of


@dataclass(frozen=True, slots=True)
class PersonDifference:
    who: str  # "person sup2 (#7)", "role supervisor"
    field: str  # "" when the trail never recorded the person
    stored: object = None
    recorded: object = None

    def __str__(self) -> str:
        if not self.field:
            return f"{self.who}: the audit trail never recorded this person"
        if self.field == "password":
            return f"{self.who}: the password is not the one the audit trail last recorded"
        return f"{self.who}: {self.field} stored {self.stored!r}, the trail recorded {self.recorded!r}"


def people_differences() -> Iterator[PersonDifference]:
    """Each person whose state is not his last recorded one, and each role group whose
    permissions are not its declared ones."""
    for user in User.objects.order_by("pk"):
        who = f"person {user.get_username()} (#{user.pk})"
        recorded = last_recorded_state(user.pk)
        if recorded is None:
            yield PersonDifference(who, "")
            continue
        stored = person_state(user)
        for field, value in stored.items():
            if recorded.get(field) != value:
                yield PersonDifference(who, field, value, recorded.get(field))
    groups = {group.name: group for group in Group.objects.filter(name__in=[role.name for role in ROLES])}
    for role in ROLES:
        group = groups.get(role.name)
        declared = {f"{p.content_type.app_label}.{p.codename}" for p in permissions_of(role)}
        stored = {f"{app}.{codename}" for app, codename in group.permissions.values_list(
            "content_type__app_label", "codename")} if group else set()
        if stored != declared:
            extra, missing = sorted(stored - declared), sorted(declared - stored)
            yield PersonDifference(f"role {role.name}", "permissions",
                                   {"more than declared": extra, "declared, missing": missing}, "casino/roles.py")
