"""Pools, their ledgers, versions and readings for the casino's people.

Nothing here edits a meter, a ledger row or a version: a pool is created and a
meter adjusted only through ``progressive.services``, like everywhere else.
"""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from infra.moments import moment_shown
from infra import charts
from trail.admin import ReadOnlyAdmin, ReadOnlyTabularInline
from trail.admin_decisions import SecondApprovalAdmin
from trail.services import Actor

from .configuration import (
    VERSION_NUMBERS,
    ProgressiveError,
    currency_check,
    minor_unit_check,
    pool_numbers_check,
)
from .models import MeterAdjustmentRequest, MeterEvent, MeterReading, Pool, PoolVersion, PoolVersionRequest
from .selectors import pool_meter_history, pool_version_current
from .services import (
    adjustment_approve,
    adjustment_reject,
    meter_adjust,
    pool_create,
    pool_version_approve,
    pool_version_create,
    pool_version_reject,
)

RECENT_EVENTS = 20
METER_CHART_DAYS = 30
# Events stored within less than this of each other are drawn by their place in the ledger: a
# time axis over seconds (a day's rounds sent at once) would pass for the days they were dealt.
TIME_AXIS_LEAST = timedelta(hours=1)


def round_link(event: MeterEvent) -> str:
    if event.round_id is None:
        return "—"
    label = f"{event.round.table.code}/{event.round.round_id}" if event.round else str(event.round_id)
    try:
        url = reverse("admin:rounds_round_change", args=[event.round_id])
    except NoReverseMatch:  # the rounds admin is not registered
        return label
    return format_html('<a href="{}">{}</a>', url, label)


def pool_meter_chart(pool: Pool) -> SafeString:
    """The pool's meter over its last days from its ledger, the awards paid from it and its
    reseeds marked (infra.charts). A fixed award is paid by the house and leaves the meter as it
    was: it is counted under the chart, not drawn on the meter."""
    history = pool_meter_history(pool=pool, days=METER_CHART_DAYS)
    stamps = [moment.at for moment in history.points]
    by_time = bool(stamps) and max(stamps) - min(stamps) >= TIME_AXIS_LEAST
    if history.since is None:
        title = f"{pool.code}: the meter over its last events ({pool.currency}; none in {METER_CHART_DAYS} days)"
    elif by_time:
        title = f"{pool.code}: the meter over the last {METER_CHART_DAYS} days ({pool.currency})"
    else:
        title = f"{pool.code}: the meter, event by event, over the last {METER_CHART_DAYS} days ({pool.currency})"

    def at(moment):
        return moment.at if by_time else moment.seq

    def mark(moment, meter) -> charts.MeterPoint:
        what = f"{moment.kind.replace('_', ' ')} of {charts.amount_text(moment.amount, pool.currency)}"
        when = f"{moment_shown(moment.at)}, " if not by_time else ""
        return charts.MeterPoint(at=at(moment), meter=meter,
                                 note=f"{when}{what}{f' (round {moment.round})' if moment.round else ''}, meter")

    awards = [mark(h, h.before) for h in history.hits if h.kind == MeterEvent.Kind.AWARD]
    reseeds = [mark(h, h.meter) for h in history.hits if h.kind == MeterEvent.Kind.RESEED]
    fixed = sum(1 for h in history.hits if h.kind == MeterEvent.Kind.FIXED_AWARD)
    line = []
    for moment in history.points:
        if moment.kind == MeterEvent.Kind.AWARD:  # the line rises to the meter it was paid from, then drops
            line.append(charts.MeterPoint(at=at(moment), meter=moment.before))
        line.append(charts.MeterPoint(at=at(moment), meter=moment.meter))
    chart = charts.meter_chart(title=title, currency=pool.currency, points=line, awards=awards, reseeds=reseeds)
    stored = "" if by_time or not stamps else (
        f" They were stored within {_span(max(stamps) - min(stamps))} of each other, so they are"
        " drawn in their order in the ledger, not against the time they were stored.")
    note = (f"Events {history.first_seq} to {history.last_seq} of the ledger, about {len(history.points)} of them "
            f"drawn; of the last {len(history.hits)} awards and reseeds in that time, the awards paid from the "
            f"meter and the reseeds marked; {fixed} fixed award{'s' if fixed != 1 else ''}, paid by the house, "
            f"leave the meter as it was and are not drawn.{stored}")
    return mark_safe(chart + charts.caption(note))


def _span(gap: timedelta) -> str:
    seconds = int(gap.total_seconds())
    return f"{seconds} second{'s' if seconds != 1 else ''}" if seconds < 120 else f"{seconds // 60} minutes"


class PoolVersionInline(ReadOnlyTabularInline):
    model = PoolVersion
    fields = readonly_fields = (
        "version", "effective_from", "wager", "rate", "reseed", "ceiling", "reserve_rate",
        "reading_tolerance", "lines", "note",
    )


class RecentEventInline(admin.TabularInline):
    model = MeterEvent
    verbose_name_plural = f"Last {RECENT_EVENTS} ledger events"
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "seq", "kind", "amount", "delta", "meter_after", "overflow_after", "reserve_after",
        "round_link", "seat", "actor_name", "reason", "created_at",
    )

    @admin.display(description="round")
    def round_link(self, event):
        return round_link(event)

    def get_queryset(self, request):
        recent = MeterEvent.objects.order_by("-seq").values_list("pk", flat=True)
        # An inline's queryset cannot be sliced; select the last ids instead.
        pool_id = request.resolver_match.kwargs.get("object_id")
        ids = list(recent.filter(pool_id=pool_id)[:RECENT_EVENTS]) if pool_id else []
        return super().get_queryset(request).filter(pk__in=ids).select_related("round__table").order_by("-seq")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class PoolNumbersFields(forms.Form):
    """A version's numbers, as a person types them; the service checks them."""

    wager = forms.DecimalField(max_digits=14, decimal_places=2)
    rate = forms.DecimalField(max_digits=6, decimal_places=4, help_text="Of the wager, e.g. 0.20.")
    reseed = forms.DecimalField(max_digits=14, decimal_places=2, help_text="A new pool's opening meter too.")
    ceiling = forms.DecimalField(max_digits=14, decimal_places=2, required=False)
    reserve_rate = forms.DecimalField(max_digits=6, decimal_places=4, initial=Decimal("0"))
    reading_tolerance = forms.DecimalField(max_digits=14, decimal_places=2, initial=Decimal("0"))
    lines = forms.JSONField(
        help_text='Best line first: [{"category": "royal_flush", "qualifier": "hole", '
        '"kind": "percent", "amount": "100"}, ...]'
    )
    note = forms.CharField(max_length=200, required=False)


class PoolVersionForm(PoolNumbersFields):
    """The pool's next version, its fields first filled with the latest's."""

    effective_from = forms.DateTimeField(help_text="When it comes into force (the server's time zone).")
    field_order = ["effective_from"]

    @staticmethod
    def initial_from(latest: PoolVersion | None) -> dict:
        if latest is None:
            return {}
        return {name: getattr(latest, name) for name in VERSION_NUMBERS}


class PoolCreationForm(forms.ModelForm, PoolNumbersFields):
    """A new pool with its first version; the service checks the numbers and opens the meter."""

    class Meta:
        model = Pool
        fields = ["code", "name", "currency", "minor_unit"]

    def clean(self):
        data = super().clean()
        try:
            currency = currency_check(data.get("currency"))
            minor_unit = minor_unit_check(data.get("minor_unit"))
            pool_numbers_check(
                currency=currency, minor_unit=minor_unit, wager=data.get("wager"),
                rate=data.get("rate"), reseed=data.get("reseed"), ceiling=data.get("ceiling"),
                reserve_rate=data.get("reserve_rate"), reading_tolerance=data.get("reading_tolerance"),
                lines=data.get("lines"),
            )
        except ProgressiveError as exc:
            for field, texts in exc.errors.items():
                for text in texts:
                    self.add_error(field if field in self.fields else None, text)
        return data


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    list_display = ("code", "name", "currency", "meter", "overflow", "reserve", "last_event_seq",
                    "current_version", "updated_at")
    search_fields = ("code", "name")
    readonly_fields = ("meter", "overflow", "reserve", "last_event_seq", "current_version",
                       "ledger_link", "created_at", "updated_at")
    inlines = [PoolVersionInline, RecentEventInline]
    change_form_template = "admin/progressive/pool/change_form.html"

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["code", "name", "currency", "minor_unit", "wager", "rate", "reseed", "ceiling",
                    "reserve_rate", "reading_tolerance", "lines", "note"]
        return ["code", "name", "currency", "minor_unit", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return ("code", "currency", "minor_unit", *self.readonly_fields)

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = PoolCreationForm
        return super().get_form(request, obj, **kwargs)

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    @admin.display(description="version in force")
    def current_version(self, pool):
        version = pool_version_current(pool=pool)
        return f"v{version.version} from {moment_shown(version.effective_from)}" if version else "—"

    @admin.display(description="ledger")
    def ledger_link(self, pool):
        url = reverse("admin:progressive_meterevent_changelist") + f"?pool__id__exact={pool.pk}"
        return format_html('<a href="{}">all {} events</a>', url, pool.last_event_seq)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # "Adjust the meter" and "New version" are offered only to those they would not refuse.
        context["can_adjust"] = request.user.has_perm("progressive.adjust_meter")
        context["can_add_version"] = request.user.has_perm("progressive.add_poolversion")
        if obj is not None and obj.pk:
            context["meter_chart"] = pool_meter_chart(obj)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_model(self, request, obj, form, change):
        if change:
            # Only the name may change here; the numbers live in versions.
            Pool.objects.filter(pk=obj.pk).update(name=obj.name)
            return
        data = form.cleaned_data
        try:
            pool = pool_create(
                code=data["code"], name=data.get("name") or "", currency=data["currency"],
                minor_unit=data["minor_unit"], wager=data["wager"], rate=data["rate"],
                reseed=data["reseed"], ceiling=data.get("ceiling"), reserve_rate=data["reserve_rate"],
                reading_tolerance=data["reading_tolerance"], lines=data["lines"],
                note=data.get("note") or "", actor=Actor.of_user(request.user),
            )
        except ProgressiveError as exc:
            # The form checked the numbers; this is a race on the code. See add_view.
            raise _FormRefused(exc) from None
        obj.pk = pool.pk
        obj.__dict__.update({k: v for k, v in pool.__dict__.items() if not k.startswith("_")})

    def add_view(self, request, form_url="", extra_context=None):
        try:
            return super().add_view(request, form_url, extra_context)
        except _FormRefused as refused:
            for field, texts in refused.exc.errors.items():
                messages.error(request, f"{field}: {' '.join(texts)}")
            return redirect(request.get_full_path())

    def save_related(self, request, form, formsets, change):
        if change:
            super().save_related(request, form, formsets, change)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_urls(self):
        return [
            path("<int:pool_id>/adjust/", self.admin_site.admin_view(self.adjust_view),
                 name="progressive_pool_adjust"),
            path("<int:pool_id>/new-version/", self.admin_site.admin_view(self.new_version_view),
                 name="progressive_pool_new_version"),
            *super().get_urls(),
        ]

    def new_version_view(self, request, pool_id: int):
        """A supervisor's change of the pool's numbers: its next version, through ``pool_version_create``."""
        if not request.user.has_perm("progressive.add_poolversion"):
            raise PermissionDenied
        pool = get_object_or_404(Pool, pk=pool_id)
        latest = pool.versions.order_by("-version").first()
        form = PoolVersionForm(request.POST or None, initial=PoolVersionForm.initial_from(latest))
        if request.method == "POST" and form.is_valid():
            try:
                made = pool_version_create(pool=pool, actor=Actor.of_user(request.user),
                                           request_id=getattr(request, "request_id", ""), **form.cleaned_data)
            except ProgressiveError as exc:
                for field, texts in exc.errors.items():
                    form.add_error(field if field in form.fields else None, " ".join(texts))
            else:
                if isinstance(made, PoolVersionRequest):
                    messages.warning(request, f"The new version of {pool.code} changes what its Progressive "
                                     "pays or takes: it waits for a second supervisor's approval and settles "
                                     "no round until then.")
                    return redirect("admin:progressive_poolversionrequest_change", made.pk)
                messages.success(request, f"{pool.code} version {made.version} saved.")
                return redirect("admin:progressive_pool_change", pool.pk)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta, "pool": pool, "latest": latest, "form": form,
            "title": f"New version of {pool.code}",
        }
        return TemplateResponse(request, "admin/progressive/pool/new_version.html", context)

    def adjust_view(self, request, pool_id: int):
        """A supervisor's adjustment with its reason, through ``meter_adjust``."""
        if not request.user.has_perm("progressive.adjust_meter"):
            raise PermissionDenied
        pool = get_object_or_404(Pool, pk=pool_id)
        form = AdjustmentForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                event = meter_adjust(
                    pool=pool, delta=form.cleaned_data["delta"], reason=form.cleaned_data["reason"],
                    actor=Actor.of_user(request.user), request_id=getattr(request, "request_id", ""),
                )
            except ProgressiveError as exc:
                for field, texts in exc.errors.items():
                    form.add_error(field if field in form.fields else None, " ".join(texts))
            else:
                if isinstance(event, MeterAdjustmentRequest):
                    messages.warning(request, f"An adjustment of {event.delta} is more than one supervisor "
                                     "may make alone: it waits for a second supervisor's approval, and "
                                     "the meter has not moved.")
                    return redirect("admin:progressive_meteradjustmentrequest_change", event.pk)
                messages.success(request, f"Meter of {pool.code} adjusted by {event.delta}: now {event.meter_after}.")
                return redirect("admin:progressive_pool_change", pool.pk)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta, "pool": pool, "form": form,
            "title": f"Adjust the meter of {pool.code}",
            "alone_up_to": settings.METER_SECOND_APPROVAL_ABOVE.get(pool.currency),
        }
        return TemplateResponse(request, "admin/progressive/pool/adjust.html", context)


class AdjustmentForm(forms.Form):
    delta = forms.DecimalField(max_digits=14, decimal_places=2, help_text="Signed, e.g. -25.00.")
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}))


class _FormRefused(Exception):
    def __init__(self, exc: ProgressiveError):
        self.exc = exc


@admin.register(PoolVersion)
class PoolVersionAdmin(ReadOnlyAdmin):
    list_display = ("pool", "version", "effective_from", "wager", "rate", "reseed", "ceiling",
                    "reserve_rate", "reading_tolerance", "created_by", "created_at")
    list_filter = ("pool",)
    list_select_related = ("pool", "created_by")
    readonly_fields = ("pool", "version", "effective_from", "wager", "rate", "reseed", "ceiling",
                       "reserve_rate", "reading_tolerance", "lines_text", "note", "created_by", "created_at")
    exclude = ("lines",)

    @admin.display(description="pay table")
    def lines_text(self, version):
        return json.dumps(version.lines, indent=1)


@admin.register(MeterAdjustmentRequest)
class MeterAdjustmentRequestAdmin(SecondApprovalAdmin, ReadOnlyAdmin):
    """Large adjustments and their second supervisor: approved or rejected on the request's page."""

    list_display = ("id", "pool", "delta", "state", "requested_by_name", "requested_at",
                    "decided_by_name", "decided_at")
    list_filter = ("state", "pool")
    list_select_related = ("pool",)
    ordering = ("-requested_at", "-id")
    readonly_fields = ("pool", "delta", "reason", "state", "requested_by_name", "requested_at",
                       "request_id", "decided_by_name", "decided_at", "decision_note", "event_link")
    exclude = ("requested_by", "decided_by", "event")
    decide_permission = "progressive.adjust_meter"
    asked_what = "adjustment"
    approve_label = "Approve and move the meter"

    @admin.display(description="ledger event")
    def event_link(self, asked):
        if asked.event_id is None:
            return "—"
        url = reverse("admin:progressive_meterevent_change", args=[asked.event_id])
        return format_html('<a href="{}">{}</a>', url, asked.event)

    def effect(self, asked: MeterAdjustmentRequest) -> SafeString:
        return format_html("The meter moves by <strong>{} {}</strong> only when you approve.",
                           asked.delta, asked.pool.currency)

    def approved(self, asked: MeterAdjustmentRequest, actor: Actor, request_id: str) -> str:
        decided = adjustment_approve(asked=asked, actor=actor, request_id=request_id)
        return f"Approved: the meter of {asked.pool.code} moved by {decided.delta} to {decided.event.meter_after}."

    def rejected(self, asked: MeterAdjustmentRequest, actor: Actor, note: str, request_id: str) -> str:
        adjustment_reject(asked=asked, actor=actor, note=note, request_id=request_id)
        return "Rejected: the meter has not moved."


@admin.register(PoolVersionRequest)
class PoolVersionRequestAdmin(SecondApprovalAdmin, ReadOnlyAdmin):
    """New pool versions that change what a Progressive pays or takes, and their second supervisor."""

    list_display = ("id", "pool", "effective_from", "state", "requested_by_name", "requested_at",
                    "decided_by_name", "decided_at")
    list_filter = ("state", "pool")
    list_select_related = ("pool",)
    ordering = ("-requested_at", "-id")
    readonly_fields = ("pool", "effective_from", "numbers_shown", "note", "state", "requested_by_name",
                       "requested_at", "request_id", "decided_by_name", "decided_at", "decision_note",
                       "version_link")
    exclude = ("requested_by", "decided_by", "version", "numbers")
    decide_permission = "progressive.add_poolversion"
    asked_what = "version"
    approve_label = "Approve the version"

    @admin.display(description="numbers asked for")
    def numbers_shown(self, asked: PoolVersionRequest) -> str:
        return json.dumps(asked.numbers, indent=1)

    @admin.display(description="version made")
    def version_link(self, asked: PoolVersionRequest) -> str:
        if asked.version_id is None:
            return "—"
        url = reverse("admin:progressive_poolversion_change", args=[asked.version_id])
        return format_html('<a href="{}">{}</a>', url, asked.version)

    def effect(self, asked: PoolVersionRequest) -> SafeString:
        return format_html("The version of <strong>{}</strong> above settles rounds only once you approve it, "
                           "from the later of its asked start and the moment of your approval.", asked.pool.code)

    def approved(self, asked: PoolVersionRequest, actor: Actor, request_id: str) -> str:
        decided = pool_version_approve(asked=asked, actor=actor, request_id=request_id)
        return f"Approved: {decided.version} is in force from {moment_shown(decided.version.effective_from)}."

    def rejected(self, asked: PoolVersionRequest, actor: Actor, note: str, request_id: str) -> str:
        pool_version_reject(asked=asked, actor=actor, note=note, request_id=request_id)
        return "Rejected: no version was made."


@admin.register(MeterEvent)
class MeterEventAdmin(ReadOnlyAdmin):
    list_display = ("pool", "seq", "kind", "amount", "delta", "meter_after", "overflow_after",
                    "reserve_after", "round_link", "seat", "actor_name", "created_at")
    # A date filter rather than a date hierarchy, whose drill-down reads every event's date.
    list_filter = ("pool", "kind", "created_at")
    list_select_related = ("pool", "round__table")
    search_fields = ("round__round_id", "reason", "actor_name")
    # A filtered list counts its own rows only: the whole table's count beside it is a
    # second scan of every row.
    show_full_result_count = False
    ordering = ("-id",)
    readonly_fields = ("pool", "seq", "kind", "amount", "delta", "overflow_delta", "reserve_delta",
                       "meter_after", "overflow_after", "reserve_after", "round_link", "seat",
                       "actor", "actor_name", "reason", "created_at")
    exclude = ("round",)

    @admin.display(description="round")
    def round_link(self, event):
        return round_link(event)


@admin.register(MeterReading)
class MeterReadingAdmin(ReadOnlyAdmin):
    list_display = ("pool", "reporter", "reported_at", "displayed", "service_meter", "difference",
                    "tolerance", "flagged", "received_at")
    list_filter = ("flagged", "pool")
    list_select_related = ("pool",)
    date_hierarchy = "received_at"
    readonly_fields = ("pool", "pool_version", "table", "reporter", "actor", "reported_at",
                       "received_at", "displayed", "service_meter", "meter_seq", "difference",
                       "tolerance", "flagged", "request_id")
