"""People in the admin: every change of a user or of their roles is audited."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from casino.people import CHANGED, CREATED, person_cases_checked, person_record, person_state
from infra.request_ids import request_id_of
from trail.services import Actor, audit_record

User = get_user_model()


admin.site.unregister(User)


@admin.register(User)
class AuditedUserAdmin(UserAdmin):
    def save_model(self, request, obj, form, change):
        # The state before, read before the form's changes are saved.
        request._audit_before = person_state(User.objects.get(pk=obj.pk)) if change else None
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        user = form.instance
        after = person_state(user)
        before = getattr(request, "_audit_before", None)
        if before == after:
            return
        if change:  # before the trail's event: the findings' rows are locked before the chain's head
            person_cases_checked(user=user, actor=Actor.of_user(request.user),
                                 why=f"{user.get_username()} was changed in the admin", request_id=request_id_of(request))
        person_record(user=user, actor=Actor.of_user(request.user), action=CHANGED if change else CREATED,
                      before=before, request_id=request_id_of(request))

    def user_change_password(self, request, id, form_url=""):
        # A password set by someone else is a hand on the account like a role given: the audit
        # log keeps who set it (and dual control reads it: trail.approvals.approver_tie).
        response = super().user_change_password(request, id, form_url)
        if request.method == "POST" and response.status_code == 302:
            user = User.objects.get(pk=id)
            person_record(user=user, actor=Actor.of_user(request.user), action="user.password_set",
                          request_id=request_id_of(request))
        return response

    def delete_model(self, request, obj):
        before = person_state(obj)
        super().delete_model(request, obj)
        audit_record(
            actor=Actor.of_user(request.user), action="user.deleted", object_type="auth.user",
            object_id=str(before.get("username")), object_repr=before["username"], before=before,
            request_id=request_id_of(request),
        )
