"""The audit log in the admin, and the read-only admin every kept record shares.

What a table sent and what the log recorded are evidence: the admin shows
them to everyone, superusers included, and changes none of them. Changes go
through services, which write the audit event beside the change.
"""

from __future__ import annotations

import json

from django.contrib import admin
from django.contrib.admin.utils import flatten_fieldsets, unquote
from django.core.exceptions import PermissionDenied
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connections
from django.http import Http404, HttpResponseRedirect
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from infra.moments import moments_shown_in
from infra.admin_paging import CappedCountPaginator
from infra.request_ids import request_id_of

from .admin_exports import CsvExportAdmin
from .exports import AUDIT_LOG
from .models import AuditEvent
from .services import Actor, audit_record

def json_block(value) -> SafeString | str:
    """``value`` as indented JSON in a ``<pre>``; ``-`` when there is none."""
    if value is None:
        return "-"
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, cls=DjangoJSONEncoder)
    return text_block(text)


def text_block(text: str) -> SafeString:
    return format_html('<pre class="text-block">{}</pre>', text)


def admin_change_link(label: str, model_label: str, pk) -> SafeString | str:
    """A link to ``pk``'s admin page when its model has one, else the plain label."""
    app_label, _, model_name = model_label.partition(".")
    try:
        url = reverse(f"admin:{app_label}_{model_name}_change", args=[pk])
    except NoReverseMatch:
        return label
    return format_html('<a href="{}">{}</a>', url, label)


class IndexedValuesFilter(admin.AllValuesFieldListFilter):
    """Every value of a column that leads an index, found by stepping through the index
    (``MIN`` above the last value found, once per value) instead of Django's ``DISTINCT``,
    which reads every row: the cost grows with the values there are, not with the rows.

    The values are the whole table's, as Django's are when the admin's queryset is all
    of it, which is so for every read-only list here.
    """

    def __init__(self, field, request, params, model, model_admin, field_path):
        super().__init__(field, request, params, model, model_admin, field_path)
        table = connections["default"].ops.quote_name(field.model._meta.db_table)
        column = connections["default"].ops.quote_name(field.column)
        within, params = self.rows_within()
        first = f"WHERE {within}" if within else ""
        also = f"{within} AND " if within else ""
        self.lookup_choices = _ValuesByIndex(
            f"WITH RECURSIVE found(value) AS (SELECT MIN({column}) FROM {table} {first} UNION ALL "
            f"SELECT (SELECT MIN({column}) FROM {table} WHERE {also}{column} > found.value) "
            f"FROM found WHERE found.value IS NOT NULL) "
            f"SELECT value FROM found WHERE value IS NOT NULL",
            params * 2,  # the first step's condition, then the recursive step's
        )

    def rows_within(self) -> tuple[str, list]:
        """A condition on the rows whose values are listed, and its parameters ("": every row)."""
        return "", []


class _ValuesByIndex:
    """Read when the sidebar is drawn, as Django's lazy queryset is: a page that does not
    draw the filter asks nothing."""

    def __init__(self, sql: str, params: list):
        self.sql = sql
        self.params = params

    def __iter__(self):
        with connections["default"].cursor() as cursor:
            cursor.execute(self.sql, self.params)
            return iter([value for (value,) in cursor.fetchall()])


class ReadOnlyAdmin(admin.ModelAdmin):
    """Shows a kept record and its history; offers no add, change, delete or bulk action.

    An attempt to change or delete one anyway (a crafted POST) is refused and
    itself written to the audit log: who tried matters as much as the refusal.
    """

    actions = None
    # A year of rounds matches a common filter hundreds of thousands of times: count to a cap.
    paginator = CappedCountPaginator

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method == "POST":
            self._refuse(request, "admin.change_refused", object_id)
        return super().changeform_view(request, object_id, form_url, extra_context)

    def delete_view(self, request, object_id, extra_context=None):
        if request.method == "POST":
            self._refuse(request, "admin.delete_refused", object_id)
        return super().delete_view(request, object_id, extra_context)

    def history_view(self, request, object_id, extra_context=None):
        """Django's History lists the admin's own change log, which is empty here (this admin
        changes nothing): a second, misleading history. A record's history is the audit log,
        so History leads to its events there (``audit_trail_url``)."""
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404(f"No such {self.model._meta.verbose_name}.")
        if not self.has_view_permission(request, obj):
            raise PermissionDenied
        return HttpResponseRedirect(self.audit_trail_url(obj))

    def audit_trail_url(self, obj) -> str:
        """Where ``obj``'s history is read: the audit log's events about it."""
        query = urlencode({"object_type": obj._meta.label_lower, "object_id": obj.pk})
        return f"{reverse('admin:trail_auditevent_changelist')}?{query}"

    def _refuse(self, request, action: str, object_id) -> None:
        audit_record(
            actor=Actor.of_user(request.user), action=action,
            object_type=self.model._meta.label_lower, object_id=str(object_id or ""),
            object_repr=f"{self.model._meta.verbose_name} {object_id or '(new)'}",
            request_id=request_id_of(request),
        )
        raise PermissionDenied(f"{self.model._meta.verbose_name_plural} are never changed here")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_readonly_fields(self, request, obj=None):
        # Every shown field, so that no form field is ever built for these models.
        if self.fields or self.fieldsets:
            return flatten_fieldsets(self.get_fieldsets(request, obj))
        return [*(f.name for f in self.model._meta.fields), *self.readonly_fields]


class ReadOnlyInline(admin.options.InlineModelAdmin):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyTabularInline(ReadOnlyInline, admin.TabularInline):
    pass


class ReadOnlyStackedInline(ReadOnlyInline, admin.StackedInline):
    pass


@admin.register(AuditEvent)
class AuditEventAdmin(CsvExportAdmin, ReadOnlyAdmin):
    csv_export = AUDIT_LOG
    list_display = ("seq", "at", "actor", "action", "object", "request_id")
    list_display_links = ("seq",)
    # Values from the (action, at) and (object_type, object_id) indexes; a plain date
    # filter rather than a date hierarchy, whose drill-down reads every row's date.
    list_filter = (
        "actor_kind", ("action", IndexedValuesFilter), ("object_type", IndexedValuesFilter), "at",
    )
    search_fields = ("=object_id", "object_repr", "=request_id", "actor_name", "=actor_id")
    search_help_text = "Object id, object, request id, actor name or id."
    show_full_result_count = False
    fieldsets = (
        (None, {"fields": ("seq", "at", "action", "request_id")}),
        ("Who", {"fields": ("actor_kind", "actor_id", "actor_name", "origin", "origin_address")}),
        ("What", {"fields": ("object_type", "object_id", "object_link")}),
        ("Change", {"fields": ("before_json", "after_json")}),
        ("Chain", {"fields": ("prev_hash", "hash")}),
    )

    @admin.display(description="actor", ordering="actor_name")
    def actor(self, event: AuditEvent) -> str:
        return f"{event.actor_kind}: {event.actor_name or event.actor_id or '-'}"

    @admin.display(description="object")
    def object(self, event: AuditEvent) -> str:
        if not event.object_type:
            return "-"
        return f"{event.object_type} #{event.object_id}: {event.object_repr}"

    @admin.display(description="object")
    def object_link(self, event: AuditEvent):
        if not event.object_type:
            return "-"
        label = event.object_repr or event.object_id
        return admin_change_link(label, event.object_type, event.object_id)

    # The trail's JSON keeps moments in UTC, as the chain hashed them; read on the casino's clock
    # (the CSV export and the API give them as kept).
    @admin.display(description="before (moments in casino time)")
    def before_json(self, event: AuditEvent) -> SafeString | str:
        return json_block(moments_shown_in(event.before))

    @admin.display(description="after (moments in casino time)")
    def after_json(self, event: AuditEvent) -> SafeString | str:
        return json_block(moments_shown_in(event.after))
