"""The regulators' variance tests in the admin: their settings, and the queue of findings they raise.

Registered by ``audit/admin.py``, beside the reports' admin. Supervisors
change a test's settings through ``variance_test_configure`` (the form checks
with the service's own check, so a refusal shows beside its field); auditors
work the findings through ``finding_transition`` and change nothing else.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from books.variance_tests import USES_BASE_HOLD, USES_THRESHOLD, VarianceTest
from infra.request_ids import request_id_of
from rounds.admin.cases import CaseFilter, CaseWork
from rounds.admin.findings import WorkActions
from trail.admin import ReadOnlyAdmin, admin_change_link
from trail.services import Actor

from .models import VarianceFinding, VarianceTestSetting
from .reconciliation.variance_services import (
    VarianceTestSettingError,
    variance_test_configure,
    variance_test_setting_check,
)

NUMBERS = ("threshold", "base_hold")
# The order a finding's figures are read in; any others follow, by name.
FIGURE_ORDER = (
    "handle", "win", "theoretical", "sd", "z_95", "low_95", "high_95", "z",
    "hold_percent", "base", "base_percent", "payout_percent", "lifetime_day_from", "lifetime_day_to",
    "lifetime_handle", "lifetime_win", "lifetime_payout_percent", "deviation", "threshold",
)
HELP = {
    "threshold": "In percentage points: a deviation larger than this trips the test.",
    "base_hold": "Kansas' base level as a hold percentage; empty: each table's theoretical hold.",
}


class VarianceTestSettingForm(forms.ModelForm):
    """The numbers as text, so that the service's check, not the form's, judges them."""

    class Meta:
        model = VarianceTestSetting
        fields = ("enabled", *NUMBERS)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in NUMBERS:
            if name in self.fields:
                model_field = self.fields[name]
                self.fields[name] = forms.CharField(
                    required=False, label=model_field.label, help_text=HELP[name],
                )

    def clean(self):
        data = super().clean()
        try:
            checked = variance_test_setting_check(
                code=self.instance.code, enabled=data.get("enabled", False),
                threshold=data.get("threshold"), base_hold=data.get("base_hold"),
            )
        except VarianceTestSettingError as exc:
            for field, texts in exc.errors.items():
                for text in texts:
                    self.add_error(field if field in self.fields else None, text)
            return data
        for name in NUMBERS:
            if name in self.fields:
                data[name] = getattr(checked, name)
        return data


@admin.register(VarianceTestSetting)
class VarianceTestSettingAdmin(admin.ModelAdmin):
    """One row per test; rows are seeded by a migration, never added or deleted here."""

    form = VarianceTestSettingForm
    list_display = ("title", "enabled", "threshold", "base_hold", "changed_at", "changed_by_name")
    list_display_links = ("title",)
    readonly_fields = ("title", "changed_at", "changed_by_name")

    def get_fields(self, request, obj=None):
        code = obj.code if obj is not None else None
        return (
            "title", "enabled",
            *(("threshold",) if code in USES_THRESHOLD else ()),
            *(("base_hold",) if code in USES_BASE_HOLD else ()),
            "changed_at", "changed_by_name",
        )

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj, form, change) -> None:
        saved = variance_test_configure(
            code=obj.code, enabled=form.cleaned_data["enabled"],
            threshold=form.cleaned_data.get("threshold"), base_hold=form.cleaned_data.get("base_hold"),
            actor=Actor.of_user(request.user), request_id=request_id_of(request),
        )
        obj.pk, obj.changed_at, obj.changed_by_name = saved.pk, saved.changed_at, saved.changed_by_name

    @admin.display(description="test", ordering="code")
    def title(self, setting: VarianceTestSetting) -> str:
        return setting.get_code_display()


@admin.register(VarianceFinding)
class VarianceFindingAdmin(CaseWork, WorkActions, ReadOnlyAdmin):
    """The auditors' queue of tables and dealers that tripped a regulator's variance test."""

    work_permission = "work_variancefinding"
    list_display = (
        "test", "scope", "key", "currency", "period", "days", "win", "theoretical", "percent",
        "deviation", "state", "case_shown", "state_changed_by_name",
    )
    list_display_links = ("test",)
    list_filter = ("test", "state", CaseFilter, "currency", "period", "scope")
    change_form_template = "admin/work/change_form.html"
    search_fields = ("=key", "detail")
    search_help_text = "Exactly a table code or dealer id, or words of the detail."
    date_hierarchy = "day_to"
    fields = (
        "test", "scope", "key", "currency", "period", "day_from", "day_to", "report_link", "detail",
        "figures_table", "state", "state_changed_at", "state_changed_by_name", "state_note", "created_at",
    )
    # Working a finding is the one thing this admin changes, and only through the service.
    actions = WorkActions.actions

    @admin.display(description="days", ordering="day_to")
    def days(self, finding: VarianceFinding) -> str:
        if finding.day_from == finding.day_to:
            return str(finding.day_to)
        return f"{finding.day_from} – {finding.day_to}"

    @admin.display(description="win")
    def win(self, finding: VarianceFinding) -> str:
        return finding.figures.get("win", "-")

    @admin.display(description="theoretical")
    def theoretical(self, finding: VarianceFinding) -> str:
        return finding.figures.get("theoretical", "-")

    @admin.display(description="hold / payout %")
    def percent(self, finding: VarianceFinding) -> str:
        figures = finding.figures
        if finding.test == VarianceTest.KANSAS:
            return f"hold {figures.get('hold_percent')} (base {figures.get('base_percent')})"
        if finding.test == VarianceTest.OHIO:
            lifetime = figures.get("lifetime_payout_percent")
            return f"payout {figures.get('payout_percent')} (lifetime {lifetime})"
        return f"95 %: {figures.get('low_95')} to {figures.get('high_95')}"

    @admin.display(description="deviation")
    def deviation(self, finding: VarianceFinding) -> str:
        if finding.test == VarianceTest.COMAR:
            return f"z {finding.figures.get('z', '-')}"
        return f"{finding.figures.get('deviation', '-')} points"

    @admin.display(description="report")
    def report_link(self, finding: VarianceFinding):
        return admin_change_link(str(finding.report), "audit.reconciliationreport", finding.report_id)

    @admin.display(description="figures")
    def figures_table(self, finding: VarianceFinding) -> SafeString | str:
        figures = finding.figures or {}
        if not figures:
            return "-"
        names = [n for n in FIGURE_ORDER if n in figures] + sorted(set(figures) - set(FIGURE_ORDER))
        rows = format_html_join(
            "", "<tr><th>{}</th><td>{}</td></tr>", ((name.replace("_", " "), figures[name]) for name in names))
        return format_html('<table class="figures-record">{}</table>', rows)
