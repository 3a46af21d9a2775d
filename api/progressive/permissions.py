"""Who may move a meter by hand, and change what a pool pays."""

from rest_framework.permissions import BasePermission


class CanAdjustMeter(BasePermission):
    """A person (never a table) holding ``progressive.adjust_meter``."""

    message = "Only a person holding the permission to adjust meters may do this."
    permission = "progressive.adjust_meter"

    def has_permission(self, request, view) -> bool:
        user = request.user
        if user is None or not getattr(user, "is_authenticated", False) or getattr(user, "is_table", False):
            return False
        return user.has_perm(self.permission)


class CanAddPoolVersion(CanAdjustMeter):
    """A person (never a table) holding ``progressive.add_poolversion``."""

    message = "Only a person holding the permission to change a pool's versions may do this."
    permission = "progressive.add_poolversion"
