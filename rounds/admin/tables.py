"""Tables, their keys and their configurations; a new configuration version is made by a service."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from infra.moments import moment_shown
from infra.admin_links import changelist_url
from infra.request_ids import request_id_of
from infra.validation import FieldErrors
from rounds.forms import ConfigVersionForm
from rounds.models import (
    ConfigVersionRequest,
    Round,
    Submission,
    Table,
    TableConfig,
    TableConfigVersion,
    TableKey,
)
from rounds.services import (
    ConfigError,
    config_version_approve,
    config_version_create,
    config_version_reject,
    table_video_link_set,
)
from rounds.video import FIELDS as VIDEO_FIELDS
from trail.admin import (
    ReadOnlyAdmin,
    ReadOnlyStackedInline,
    ReadOnlyTabularInline,
    json_block,
)
from trail.admin_decisions import SecondApprovalAdmin
from trail.services import Actor


def key_state(key: TableKey) -> str:
    if key.expires_at is None:
        return "active"
    return "expiring" if key.expires_at > timezone.now() else "expired"


# A key is shown by its id only: the hash never leaves the database.
KEY_FIELDS = ("key_id", "state", "created_at", "expires_at", "last_used_at")


class TableKeyInline(ReadOnlyTabularInline):
    model = TableKey
    fields = KEY_FIELDS
    readonly_fields = KEY_FIELDS

    @admin.display(description="state")
    def state(self, key: TableKey) -> str:
        return key_state(key)


@admin.register(Table)
class TableAdmin(ReadOnlyAdmin):
    list_display = ("code", "name", "config", "active", "created_at", "rounds_link")
    list_select_related = ("config",)
    list_filter = ("active", "config")
    search_fields = ("code", "name")
    fields = ("code", "name", "config", "active", "created_at", "video_link", "rounds_link", "submissions_link")
    inlines = (TableKeyInline,)
    change_form_template = "admin/rounds/table/change_form.html"

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and request.user.has_perm("rounds.change_table"):
            context["video_url"] = reverse("admin:rounds_table_video", args=[obj.pk])
            context["video_fields"] = ", ".join(f"{{{name}}}" for name in VIDEO_FIELDS)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def get_urls(self):
        return [path("<path:object_id>/video/", self.admin_site.admin_view(self.video_view), name="rounds_table_video"),
                *super().get_urls()]

    def video_view(self, request, object_id):
        """The table's video link set from its page (``table_video_link_set``); the page again."""
        if not request.user.has_perm("rounds.change_table"):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        table = get_object_or_404(Table, pk=object_id) if str(object_id).isdigit() else None
        if table is None:
            raise Http404("No such table.")
        try:
            table_video_link_set(table_id=table.pk, template=request.POST.get("video_link", ""), user=request.user,
                                 request_id=request_id_of(request))
        except FieldErrors as refused:
            for problems in refused.errors.values():
                for problem in problems:
                    messages.error(request, f"The video link was not changed: {problem}.")
        else:
            messages.success(request, f"Table {table.code}'s video link is changed.")
        return redirect("admin:rounds_table_change", table.pk)

    @admin.display(description="rounds")
    def rounds_link(self, table: Table) -> SafeString:
        url = changelist_url(Round, table__id__exact=table.pk)
        return format_html('<a href="{}">rounds</a>', url)

    @admin.display(description="submissions")
    def submissions_link(self, table: Table) -> SafeString:
        url = changelist_url(Submission, table__id__exact=table.pk)
        return format_html('<a href="{}">submissions</a>', url)


@admin.register(TableKey)
class TableKeyAdmin(ReadOnlyAdmin):
    list_display = ("key_id", "table", "state", "created_at", "expires_at", "last_used_at")
    list_select_related = ("table",)
    list_filter = ("table",)
    search_fields = ("=key_id", "=table__code")
    fields = ("table", *KEY_FIELDS)

    @admin.display(description="state")
    def state(self, key: TableKey) -> str:
        return key_state(key)


VERSION_FIELDS = (
    "version", "effective_from", "currency", "minor_unit", "unit",
    "ante_min", "ante_max", "trips_min", "trips_max", "blind_pays_shown", "trips_pays_shown",
    "aggregate_limit", "dealer_qualifier", "one_hand_per_player", "pool",
    "note", "created_at", "created_by",
)


class TableConfigVersionInline(ReadOnlyStackedInline):
    model = TableConfigVersion
    fields = VERSION_FIELDS
    readonly_fields = VERSION_FIELDS

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("pool", "created_by")

    @admin.display(description="blind pays")
    def blind_pays_shown(self, version: TableConfigVersion) -> SafeString | str:
        return json_block(version.blind_pays)

    @admin.display(description="trips pays")
    def trips_pays_shown(self, version: TableConfigVersion) -> SafeString | str:
        return json_block(version.trips_pays)


@admin.register(TableConfig)
class TableConfigAdmin(ReadOnlyAdmin):
    list_display = ("name", "description", "version_count", "table_count", "created_at")
    search_fields = ("name",)
    fields = ("name", "description", "created_at")
    inlines = (TableConfigVersionInline,)

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                version_count=Count("versions", distinct=True),
                table_count=Count("tables", distinct=True),
            )
        )

    @admin.display(description="versions", ordering="version_count")
    def version_count(self, config: TableConfig) -> int:
        return config.version_count

    @admin.display(description="tables", ordering="table_count")
    def table_count(self, config: TableConfig) -> int:
        return config.table_count

    def get_urls(self):
        new_version = self.admin_site.admin_view(self.new_version_view)
        return [
            path("<path:object_id>/new-version/", new_version, name="rounds_tableconfig_new_version"),
            *super().get_urls(),
        ]

    def new_version_view(self, request, object_id):
        """A supervisor's change of the rules: saved as the next version through the service."""
        if not request.user.has_perm("rounds.add_tableconfigversion"):
            raise PermissionDenied
        config = get_object_or_404(TableConfig, pk=object_id)
        latest = config.versions.order_by("-version").first()
        form = ConfigVersionForm(request.POST or None, initial=ConfigVersionForm.initial_from(latest))
        if request.method == "POST" and form.is_valid():
            data = dict(form.cleaned_data)
            try:
                version = config_version_create(
                    config=config, actor=Actor.of_user(request.user),
                    request_id=request_id_of(request), **data,
                )
            except ConfigError as exc:
                for field, texts in exc.errors.items():
                    for text in texts:
                        form.add_error(field if field in form.fields else None, text)
            else:
                if isinstance(version, ConfigVersionRequest):
                    self.message_user(request, f"The new version of {config.name} changes what is paid: it "
                                      "waits for a second supervisor's approval and judges no round until "
                                      "then.", messages.WARNING)
                    return HttpResponseRedirect(reverse("admin:rounds_configversionrequest_change",
                                                        args=[version.pk]))
                self.message_user(request, f"{config.name} version {version.version} saved.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:rounds_tableconfig_change", args=[config.pk]))
        return TemplateResponse(request, "admin/rounds/tableconfig/new_version.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "config": config,
            "latest": latest, "form": form, "title": f"New version of {config.name}",
        })

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        context["can_add_version"] = request.user.has_perm("rounds.add_tableconfigversion")
        return super().render_change_form(request, context, add, change, form_url, obj)


@admin.register(ConfigVersionRequest)
class ConfigVersionRequestAdmin(SecondApprovalAdmin, ReadOnlyAdmin):
    """New configuration versions that change what is paid, and their second supervisor."""

    list_display = ("id", "config", "effective_from", "state", "requested_by_name", "requested_at",
                    "decided_by_name", "decided_at")
    list_filter = ("state", "config")
    list_select_related = ("config",)
    ordering = ("-requested_at", "-id")
    readonly_fields = ("config", "effective_from", "numbers_shown", "pool", "note", "state",
                       "requested_by_name", "requested_at", "request_id", "decided_by_name", "decided_at",
                       "decision_note", "version_link")
    exclude = ("requested_by", "decided_by", "version", "numbers")
    decide_permission = "rounds.add_tableconfigversion"
    asked_what = "version"
    approve_label = "Approve the version"

    @admin.display(description="numbers asked for")
    def numbers_shown(self, asked: ConfigVersionRequest) -> SafeString | str:
        return json_block(asked.numbers)

    @admin.display(description="version made")
    def version_link(self, asked: ConfigVersionRequest) -> SafeString | str:
        if asked.version_id is None:
            return "—"
        url = reverse("admin:rounds_tableconfig_change", args=[asked.config_id])
        return format_html('<a href="{}">{}</a>', url, asked.version)

    def effect(self, asked: ConfigVersionRequest) -> SafeString:
        return format_html("The version of <strong>{}</strong> above judges rounds only once you approve it, "
                           "from the later of its asked start and the moment of your approval.", asked.config.name)

    def approved(self, asked: ConfigVersionRequest, actor: Actor, request_id: str) -> str:
        decided = config_version_approve(asked=asked, actor=actor, request_id=request_id)
        return f"Approved: {decided.version} is in force from {moment_shown(decided.version.effective_from)}."

    def rejected(self, asked: ConfigVersionRequest, actor: Actor, note: str, request_id: str) -> str:
        config_version_reject(asked=asked, actor=actor, note=note, request_id=request_id)
        return "Rejected: no version was made."
