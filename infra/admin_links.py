"""Links into the admin by model, for pages that are not the admin's own (the tonight page)."""

from __future__ import annotations

from django.urls import reverse
from django.utils.http import urlencode


def changelist_url(model, **params) -> str:
    """``model``'s admin list, filtered by ``params`` as its sidebar would be."""
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url
