"""Who may read what through the API.

Tables authenticate with their own key (``api.authentication``) and are
never Django users, so every permission here refuses them.
"""

from rest_framework.permissions import BasePermission


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
