"""Addresses of pages that moved, sent on to where they are now."""

from __future__ import annotations

from urllib.parse import quote

from django.urls import reverse
from django.views.generic import RedirectView


class AuditLogMoved(RedirectView):
    """The audit log's admin pages moved with its models from the audit app to the trail: a
    link kept in a note, a bookmark or an exported report reaches the same page, query and all.
    Not permanent: browsers keep a 301, and after a rollback the new page would not be there."""

    permanent = False

    def get_redirect_url(self, *args, rest: str = "", **kwargs) -> str:
        url = reverse("admin:trail_auditevent_changelist") + quote(rest)
        query = self.request.META.get("QUERY_STRING", "")
        return f"{url}?{query}" if query else url
