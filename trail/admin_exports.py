"""A "Download CSV" button on an admin list: exactly the rows the list shows, every page of them.

``CsvExportAdmin``, put before a ModelAdmin's other bases, adds the address
``<changelist>/export.csv`` and the button (top right, among the object tools,
like "Add"), to people who may take the admin's export (``csv_export``, an
``infra.exports.Export``; ``export_allowed`` as the API's exports ask). The export builds the list's own ``ChangeList`` from
the request, so the rows are the list's: its filters (a filter's default too,
applied when its parameter is absent), its search and its ordering. They are
written by the export's generator (each app's ``exports``, which knows its model's
columns) and streamed a chunk at a time, read where a replica may serve them,
after the ``export.downloaded`` audit event, which says what was exported and how
the list was filtered.

The button is drawn by ``admin/export_change_list.html``, which extends the
template the list would otherwise be drawn with (the model's own
``change_list.html`` or ``change_list_template``, else Django's), so a list that
has one of its own keeps it.
"""

from __future__ import annotations

from functools import cache

from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ERROR_FLAG, IS_FACETS_VAR
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone

from infra.exports import Export, csv_download, export_allowed
from infra.request_ids import request_id_of

from .services import Actor, audit_record

TEMPLATE = "admin/export_change_list.html"
_EXPORTING = "_csv_export"  # set on the request while the export builds its ChangeList


class CsvExportAdmin:
    """The list's rows as CSV: ``csv_export`` says which columns and who may download them."""

    csv_export: Export

    def __init__(self, *args, **kwargs):
        # Found when the admin is registered, at start-up, not when someone opens the list.
        if not isinstance(getattr(self, "csv_export", None), Export):
            raise ImproperlyConfigured(f"{type(self).__name__} needs csv_export, the Export its list downloads")
        super().__init__(*args, **kwargs)

    def csv_export_allowed(self, request) -> bool:
        return self.has_view_or_change_permission(request) and export_allowed(request.user, self.csv_export)

    def get_urls(self):
        opts = self.model._meta
        return [
            path("export.csv", self.admin_site.admin_view(self.csv_export_view),
                 name=f"{opts.app_label}_{opts.model_name}_export"),
            *super().get_urls(),
        ]

    def get_changelist(self, request, **kwargs):
        changelist = super().get_changelist(request, **kwargs)
        return _unpaged(changelist) if exporting(request) else changelist

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context)
        # Only the list itself: a redirect, or the page of an action (a note asked), stays as it is.
        listed = isinstance(response, TemplateResponse) and "cl" in (response.context_data or {})
        if listed and self.csv_export_allowed(request):
            cl = response.context_data["cl"]
            opts = self.model._meta
            response.context_data["csv_export_base"] = response.resolve_template(response.template_name)
            response.context_data["csv_export_url"] = reverse(
                f"admin:{opts.app_label}_{opts.model_name}_export", current_app=self.admin_site.name
            ) + cl.get_query_string(remove=[IS_FACETS_VAR])
            response.template_name = TEMPLATE
        return response

    def csv_export_view(self, request):
        if not self.csv_export_allowed(request):
            raise PermissionDenied("exporting this list needs its export permission")
        export = self.csv_export
        setattr(request, _EXPORTING, True)
        try:
            cl = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            # As the list answers parameters it cannot read: back to it, unfiltered, saying so.
            opts = self.model._meta
            changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist",
                                 current_app=self.admin_site.name)
            return HttpResponseRedirect(f"{changelist}?{ERROR_FLAG}=1")
        query = cl.get_query_string(remove=[IS_FACETS_VAR])[1:]
        audit_record(
            actor=Actor.of_user(request.user), action="export.downloaded", object_type="export",
            object_id=export.name,
            object_repr=f"{export.name} as listed in the admin{f': {query}' if query else ''}"[:200],
            after={"source": "admin", "query": {k: v for k, v in cl.filter_params.items()
                                                 if not k.startswith(IS_FACETS_VAR)},
                   "search": cl.query, "filters": _chosen(cl)},
            request_id=request_id_of(request),
        )
        stamp = timezone.localtime().strftime("%Y-%m-%d-%H%M%S")
        rows = cl.queryset
        return csv_download(lambda alias: export.rows(rows.using(alias)), f"{export.name}-{stamp}.csv")


def _chosen(cl) -> dict[str, str]:
    """Each sidebar filter that narrows the list, named by its title, and its choice as the
    sidebar names it; a filter whose default applies without a parameter is there too. The
    choice that narrows nothing ("All", "Any date") is the one that drops the filter's
    parameters from the address."""
    chosen = {}
    for spec in cl.filter_specs:
        unfiltered = cl.get_query_string(remove=spec.expected_parameters())
        for choice in spec.choices(cl):
            if choice.get("selected") and choice.get("query_string") != unfiltered:
                chosen[str(spec.title)] = str(choice["display"])
                break
    return chosen


def exporting(request) -> bool:
    """Whether ``request`` is building an export (its ChangeList then reads every row the list stands for)."""
    return getattr(request, _EXPORTING, False)


@cache
def _unpaged(changelist: type) -> type:
    """``changelist`` that reads no page of results: the export reads every row itself, and
    a page (with its count of the filtered rows) would be a query for nothing."""

    class Unpaged(changelist):
        def get_results(self, request):
            pass

    Unpaged.__name__ = Unpaged.__qualname__ = f"Unpaged{changelist.__name__}"
    return Unpaged
