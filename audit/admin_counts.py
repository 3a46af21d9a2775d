"""The cage's counts in the admin: the list, a count entered or corrected, a file of counts imported.

Every count goes through ``audit.counts`` (kept once, a correction with why,
an event each); this admin changes and deletes nothing.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from audit.counts import AMOUNTS, CSV_COLUMNS, CountError, count_enter, counts_import
from audit.models import TableCount
from infra.money_display import money
from infra.request_ids import request_id_of
from rounds.models import Table
from trail.admin import ReadOnlyAdmin

ADD = "audit.add_tablecount"
# The largest file of counts a person may upload: far above a month of a large floor.
IMPORT_MOST_BYTES = 4 * 1024 * 1024


class CountForm(forms.Form):
    table = forms.ModelChoiceField(Table.objects.order_by("code"), to_field_name="code")
    gaming_day = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}))
    drop = forms.DecimalField(min_value=0, decimal_places=2, help_text="cash and markers in the drop box")
    fills = forms.DecimalField(min_value=0, decimal_places=2, help_text="chips brought to the table")
    credits = forms.DecimalField(min_value=0, decimal_places=2, help_text="chips taken from the table")
    opening_inventory = forms.DecimalField(min_value=0, decimal_places=2, help_text="the chip tray at opening")
    closing_inventory = forms.DecimalField(min_value=0, decimal_places=2, help_text="the chip tray at closing")
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False,
                           help_text="needed for a correction: why the first count was wrong")


class ImportForm(forms.Form):
    file = forms.FileField(help_text="CSV with the header " + ",".join(CSV_COLUMNS) + "; one line a table's day")


@admin.register(TableCount)
class TableCountAdmin(ReadOnlyAdmin):
    list_display = ("gaming_day", "table", "currency", "drop_shown", "fills_shown", "credits_shown", "win_shown",
                    "source", "entered_by_name", "replaced")
    list_filter = ("gaming_day", "source", "currency", "table")
    list_select_related = ("table", "replaced_by")
    search_fields = ("=table__code",)
    change_list_template = "admin/audit/tablecount/change_list.html"

    @admin.display(description="drop", ordering="drop")
    def drop_shown(self, count: TableCount) -> str:
        return money(count.drop, count.currency)

    @admin.display(description="fills")
    def fills_shown(self, count: TableCount) -> str:
        return money(count.fills, count.currency)

    @admin.display(description="credits")
    def credits_shown(self, count: TableCount) -> str:
        return money(count.credits, count.currency)

    @admin.display(description="win by the count")
    def win_shown(self, count: TableCount) -> str:
        return money(count.count_win, count.currency)

    @admin.display(description="replaced", boolean=True)
    def replaced(self, count: TableCount) -> bool:
        return hasattr(count, "replaced_by")

    def changelist_view(self, request, extra_context=None):
        extra = {"can_enter": request.user.has_perm(ADD), **(extra_context or {})}
        return super().changelist_view(request, extra)

    def get_urls(self):
        return [
            path("enter/", self.admin_site.admin_view(self.enter_view), name="audit_tablecount_enter"),
            path("import/", self.admin_site.admin_view(self.import_view), name="audit_tablecount_import"),
            # The address the admin gives every other model's form: the same page, not a 403.
            path("add/", self.admin_site.admin_view(self.add_moved), name="audit_tablecount_add"),
            *super().get_urls(),
        ]

    def _page(self, request, title: str, form) -> TemplateResponse:
        return TemplateResponse(request, "admin/audit/tablecount/enter.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": title, "form": form,
        })

    def add_moved(self, request):
        enter = reverse("admin:audit_tablecount_enter")
        return redirect(f"{enter}?{request.GET.urlencode()}" if request.GET else enter)

    def enter_view(self, request):
        """One count, entered or corrected (``count_enter``); the list again."""
        if not request.user.has_perm(ADD):
            raise PermissionDenied
        form = CountForm(request.POST or None, initial={"table": request.GET.get("table"),
                                                         "gaming_day": request.GET.get("gaming_day")})
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                count = count_enter(table_code=data["table"].code, gaming_day=data["gaming_day"],
                                    amounts={name: data[name] for name in AMOUNTS}, user=request.user,
                                    note=data["note"], request_id=request_id_of(request))
            except CountError as refused:
                for field, problems in refused.errors.items():
                    for problem in problems:
                        form.add_error(field if field in form.fields else None, problem)
            else:
                messages.success(request, f"The {count} is kept: win by the count "
                                 f"{money(count.count_win, count.currency)}.")
                return redirect("admin:audit_tablecount_changelist")
        return self._page(request, "Enter a table's count", form)

    def import_view(self, request):
        """A file of counts, all kept or none (``counts_import``); the list again."""
        if not request.user.has_perm(ADD):
            raise PermissionDenied
        form = ImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                if upload.size > IMPORT_MOST_BYTES:
                    raise CountError(f"the file is over {IMPORT_MOST_BYTES // (1024 * 1024)} MB", field="file")
                try:
                    text = upload.read().decode("utf-8-sig")
                except UnicodeDecodeError:
                    raise CountError("the file is not UTF-8 text", field="file") from None
                kept = counts_import(text=text, user=request.user, request_id=request_id_of(request))
            except CountError as refused:
                for field, problems in refused.errors.items():
                    for problem in problems:
                        form.add_error(None, f"{field}: {problem}")
            else:
                messages.success(request, f"{len(kept)} count(s) kept.")
                return redirect("admin:audit_tablecount_changelist")
        return self._page(request, "Import counts", form)
