"""Who may read what through the API.

Tables authenticate with their own key (``api.authentication``) and are
never Django users, so every permission here refuses them.
"""

from rest_framework.permissions import SAFE_METHODS, BasePermission


def is_person_with(user, permission: str) -> bool:
    """``user`` is a person (signed in, not a table) holding ``permission``."""
    return bool(
        user is not None and getattr(user, "is_authenticated", False)
        and not getattr(user, "is_table", False) and user.has_perm(permission)
    )


class IsStaffReader(BasePermission):
    """People of the casino who may read audit data: any view permission on the model."""

    message = "Only casino staff with read access may use this endpoint."

    def has_permission(self, request, view) -> bool:
        user = request.user
        if user is None or not getattr(user, "is_authenticated", False):
            return False
        if getattr(user, "is_table", False):
            return False
        queryset = getattr(view, "queryset", None)
        if queryset is None:
            return bool(user.is_staff)
        meta = queryset.model._meta
        return user.has_perm(f"{meta.app_label}.view_{meta.model_name}")


class StaffReadsPersonWrites(IsStaffReader):
    """Reads as ``IsStaffReader`` allows them; a write asks for the view's ``write_permission``."""

    message = "A table's key, or a person whose role does not allow this."

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return super().has_permission(request, view)
        return is_person_with(request.user, view.write_permission)
