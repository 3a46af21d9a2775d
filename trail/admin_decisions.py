"""A request that waits for a second person, decided on its own admin page.

Every ``infra.models.SecondApproval`` (a large meter adjustment, a pool or
configuration version that changes what is paid) has the same page: what was
asked, and, for someone who may decide it, approve or reject with a note (the
asker may only withdraw). ``SecondApprovalAdmin`` is that page; each model's
admin names the permission that decides it and calls its own services. The
rules of who may decide live in ``trail.approvals``, behind those services.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.urls import path

from infra.request_ids import request_id_of
from infra.validation import FieldErrors

from .services import Actor


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}),
                           help_text="Why, for a rejection (kept with the request).")


class SecondApprovalAdmin:
    """Mixed into a read-only admin of a ``SecondApproval`` model. A subclass sets
    ``decide_permission``, ``asked_what`` (the thing asked for, e.g. "version"),
    ``approve_label``, and implements ``approved`` and ``rejected`` through its services,
    each returning what to tell the person; a ``FieldErrors`` they raise is shown as the refusal."""

    change_form_template = "admin/second_approval_change_form.html"
    decide_permission: str
    asked_what: str
    approve_label: str

    def approved(self, asked, actor: Actor, request_id: str) -> str:
        raise NotImplementedError

    def rejected(self, asked, actor: Actor, note: str, request_id: str) -> str:
        raise NotImplementedError

    def effect(self, asked) -> str:
        """What approving does, in a sentence shown above the buttons."""
        raise NotImplementedError

    def _decide_url_name(self) -> str:
        return f"{self.model._meta.app_label}_{self.model._meta.model_name}_decide"

    def get_urls(self):
        return [
            path("<int:pk>/decide/", self.admin_site.admin_view(self.decide_view), name=self._decide_url_name()),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        asked = self.model.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        extra_context = {
            **(extra_context or {}),
            "decidable": asked is not None and asked.state == self.model.State.PENDING
            and request.user.has_perm(self.decide_permission),
            "own_request": asked is not None and asked.requested_by_id == request.user.pk,
            "decision_form": DecisionForm(),
            "decide_url": f"admin:{self._decide_url_name()}",
            "asked_what": self.asked_what,
            "approve_label": self.approve_label,
            "effect": self.effect(asked) if asked is not None else "",
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def decide_view(self, request, pk: int):
        if request.method != "POST" or not request.user.has_perm(self.decide_permission):
            raise PermissionDenied
        asked = get_object_or_404(self.model, pk=pk)
        form = DecisionForm(request.POST)
        actor, request_id = Actor.of_user(request.user), request_id_of(request)
        if not form.is_valid():
            messages.error(request, "Choose to approve or to reject.")
        else:
            try:
                if form.cleaned_data["decision"] == "approve":
                    messages.success(request, self.approved(asked, actor, request_id))
                else:
                    messages.success(request, self.rejected(asked, actor, form.cleaned_data["note"], request_id))
            except FieldErrors as exc:
                messages.error(request, " ".join(" ".join(texts) for texts in exc.errors.values()))
        opts = self.model._meta
        return redirect(f"admin:{opts.app_label}_{opts.model_name}_change", asked.pk)
