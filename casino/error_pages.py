"""The pages a person gets for an address it cannot read (400), a refusal (403) or an address with
nothing there (404).

They are the admin's pages, with its header, the person's links and a way
home, so a link followed by mistake does not end on a bare page that seems to
belong to something else. The API keeps its JSON error shape (casino.errors
sends /api/ elsewhere before these are reached).
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpResponse
from django.template import loader


def _page(request, template: str, status: int, title: str, **extra) -> HttpResponse:
    context = {"title": title, "request_path": request.path, **extra}
    if hasattr(request, "user"):
        context.update(admin.site.each_context(request))
    else:
        # No person behind the request (a table's post): the name only, no one's links.
        context.update(site_header=admin.site.site_header, site_title=admin.site.site_title)
    return HttpResponse(loader.render_to_string(template, context, request), status=status)


def permission_denied_page(request) -> HttpResponse:
    return _page(request, "403.html", 403, "Not allowed")


def page_not_found_page(request) -> HttpResponse:
    return _page(request, "404.html", 404, "Nothing here")


def bad_request_page(request, reason: str) -> HttpResponse:
    return _page(request, "400.html", 400, "Cannot read this address", reason=reason)
