"""Who may move a meter by hand."""

from rest_framework.permissions import BasePermission


class CanAdjustMeter(BasePermission):
    """A person (never a table) holding ``progressive.adjust_meter``."""

    message = "Only a person holding the permission to adjust meters may do this."

    def has_permission(self, request, view) -> bool:
        user = request.user
        if user is None or not getattr(user, "is_authenticated", False) or getattr(user, "is_table", False):
            return False
        return user.has_perm("progressive.adjust_meter")
