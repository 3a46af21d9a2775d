"""The auditors' view of tables, their configurations and every round they sent.

Everything here is read-only for every user: a round, its seats and findings,
a submitted body and a table key are evidence, and configuration versions
are created by services, never edited in place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Abs, Coalesce
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from audit.admin import (
    ReadOnlyAdmin,
    ReadOnlyStackedInline,
    ReadOnlyTabularInline,
    admin_change_link,
    json_block,
    text_block,
)
from audit.services import Actor
from casino.middleware import request_id_of
from rounds.engine.findings import ALL_CODES, PAYOUT_MISMATCH
from rounds.engine.rules import BETS

from .models import (
    Finding,
    Round,
    Seat,
    Submission,
    Table,
    TableConfig,
    TableConfigVersion,
    TableKey,
)
from .forms import ConfigVersionForm
from .selectors import round_detail
from .services import ConfigError, FindingTransitionError, config_version_create, finding_transition

STATUS_COLOURS = {
    Round.Status.VERIFIED: "#1b7a34",
    Round.Status.FLAGGED: "#ba2121",
    Round.Status.SETTLED: "#205067",
    Round.Status.VOID: "#666",
}

# A rejected body can be a whole batch; the page shows this much, the download all of it.
BODY_SHOWN_CHARS = 200_000


def status_badge(status: str) -> SafeString:
    return format_html(
        '<span style="color: #fff; background: {}; padding: 1px 6px; border-radius: 3px;">'
        "{}</span>",
        STATUS_COLOURS.get(status, "#666"),
        status,
    )


def changelist_url(model, **params) -> str:
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url


# ---- the round sheet: what the change page of a round lays out ---------------

SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
RED_SUITS = frozenset("dh")


@dataclass(frozen=True, slots=True)
class CardFace:
    code: str  # as the table sent it: "Th"
    rank: str  # as a card shows it: "10"
    symbol: str
    red: bool


def card_faces(cards: str) -> list[CardFace]:
    """``"AhTd"`` as faces; the stored strings are card codes back to back."""
    faces = []
    for i in range(0, len(cards) - 1, 2):
        rank, suit = cards[i], cards[i + 1].lower()
        shown_rank = "10" if rank == "T" else rank
        faces.append(
            CardFace(cards[i : i + 2], shown_rank, SUIT_SYMBOLS.get(suit, suit), suit in RED_SUITS)
        )
    return faces


@dataclass(frozen=True, slots=True)
class BetLine:
    bet: str
    wagered: Decimal
    settled: Decimal
    paid: Decimal | None  # None: the table reported no payouts for the seat
    flagged: bool  # a payout_mismatch finding names this seat and bet

    @property
    def differs(self) -> bool:
        return self.paid is not None and self.paid != self.settled

    @property
    def difference(self) -> Decimal | None:
        return None if self.paid is None else self.paid - self.settled


@dataclass(frozen=True, slots=True)
class SeatSheet:
    seat: Seat
    hole: list[CardFace]
    bets: list[BetLine]


def seat_sheet(seat: Seat, mismatched: set[tuple[int | None, str]]) -> SeatSheet:
    paid = seat.paid()
    lines = []
    for bet in BETS:
        line = BetLine(
            bet=bet,
            wagered=getattr(seat, bet),
            settled=getattr(seat, f"settled_{bet}"),
            paid=None if paid is None else paid[bet],
            flagged=(seat.seat, bet) in mismatched,
        )
        # A bet nobody placed, settled or paid is noise beside the ones that were.
        if line.wagered or line.settled or line.paid or line.flagged:
            lines.append(line)
    return SeatSheet(seat, card_faces(seat.hole), lines)


def round_sheet(round_: Round) -> dict:
    """Everything the round page shows, read in a fixed number of queries."""
    findings = list(round_.findings.all())
    mismatched = {(f.seat, f.bet) for f in findings if f.code == PAYOUT_MISMATCH}
    submissions = (
        Submission.objects.filter(table_id=round_.table_id)
        .filter(Q(round=round_) | Q(claimed_round=round_.round_id))
        .defer("body")
        .order_by("received_at", "id")
    )
    pool = round_.pool_version.pool if round_.pool_version else None
    return {
        "round": round_,
        "status": status_badge(round_.status),
        "board": card_faces(round_.board),
        "dealer_cards": card_faces(round_.dealer_cards),
        "seats": [seat_sheet(seat, mismatched) for seat in round_.seats.all()],
        "findings": findings,
        "events": [
            (admin_change_link(str(e.seq), "progressive.meterevent", e.pk), e)
            for e in round_.meter_events.all()
        ],
        "pool": admin_change_link(pool.code, "progressive.pool", pool.pk) if pool else "",
        "submissions": list(submissions),
        "record_json": json_block(round_.record),
        "config_url": reverse(
            "admin:rounds_tableconfig_change", args=[round_.config_version.config_id]
        ),
        "audit_url": reverse("admin:audit_auditevent_changelist")
        + "?"
        + urlencode({"object_type": "rounds.round", "object_id": round_.pk}),
    }


# ---- rounds ------------------------------------------------------------------


class FindingCodeFilter(admin.SimpleListFilter):
    title = "finding"
    parameter_name = "finding"

    def lookups(self, request, model_admin):
        return [(code, code) for code in ALL_CODES]

    def queryset(self, request, queryset):
        if self.value():
            # EXISTS rather than a join: one row per round, and its findings count stays true.
            found = Finding.objects.filter(round=OuterRef("pk"), code=self.value())
            return queryset.filter(Exists(found))
        return queryset


class ConfigVersionFilter(admin.RelatedFieldListFilter):
    def field_choices(self, field, request, model_admin):
        versions = TableConfigVersion.objects.select_related("config").order_by(
            "config__name", "version"
        )
        return [(v.pk, str(v)) for v in versions]


def count_of_findings() -> Coalesce:
    counted = (
        Finding.objects.filter(round=OuterRef("pk"))
        .order_by()
        .values("round")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    list_display = (
        "status_shown", "table", "round_id", "dealt", "gaming_day",
        "dealer", "dealer_hand", "finding_count",
    )
    list_display_links = ("round_id",)
    list_select_related = ("table",)
    list_filter = (
        "status",
        "table",
        "gaming_day",
        "void",
        FindingCodeFilter,
        ("config_version", ConfigVersionFilter),
    )
    search_fields = ("round_id", "table__code", "dealer", "seats__player")
    search_help_text = "Round id (its start), or exactly a table code, dealer id or player id."
    date_hierarchy = "dealt_at"
    change_form_template = "admin/rounds/round/change_form.html"
    # The template lays the round out itself; these only keep the admin's form machinery fed.
    fields = ("table", "round_id", "dealt_at", "gaming_day", "dealer", "status")

    def get_queryset(self, request):
        # The stored record is kilobytes a row; only the page of one round shows it.
        rounds = super().get_queryset(request).defer("record")
        return rounds.annotate(finding_total=count_of_findings())

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        # Ids match exactly, so the player and dealer indexes serve; players through EXISTS,
        # so a round with two matching seats is listed once, without DISTINCT.
        players = Seat.objects.filter(round=OuterRef("pk"), player=term)
        matches = (
            Q(round_id__startswith=term)
            | Q(table__code=term)
            | Q(dealer=term)
            | Exists(players)
        )
        return queryset.filter(matches), False

    @admin.display(description="status", ordering="status")
    def status_shown(self, round_: Round) -> SafeString:
        return status_badge(round_.status)

    @admin.display(description="dealt at", ordering="dealt_at")
    def dealt(self, round_: Round) -> str:
        return timezone.localtime(round_.dealt_at).strftime("%Y-%m-%d %H:%M:%S")

    @admin.display(description="findings", ordering="finding_total")
    def finding_count(self, round_: Round) -> int:
        return round_.finding_total

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["sheet"] = round_sheet(round_detail(round_pk=obj.pk))
        return super().render_change_form(request, context, add, change, form_url, obj)


# ---- submissions: every body a table sent ----------------------------------


class _NotFaithful(ValueError):
    """Indenting would not show what was sent: a duplicate key, or a number it would rewrite."""


def _exact_float(literal: str) -> float:
    value = float(literal)
    if repr(value) != literal:
        raise _NotFaithful(literal)
    return value


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _NotFaithful("duplicate key")
    return obj


def body_text(body: bytes) -> str:
    """The body as an auditor reads it: indented if JSON that indents faithfully, else as sent."""
    text = body.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text, parse_float=_exact_float, object_pairs_hook=_unique_keys)
        pretty = json.dumps(parsed, indent=2, ensure_ascii=False)
        pretty.encode("utf-8")  # a lone surrogate escape (\ud800) cannot be shown decoded
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return text
    return pretty


@admin.register(Submission)
class SubmissionAdmin(ReadOnlyAdmin):
    list_display = (
        "received_at", "table", "claimed_round", "outcome", "http_status",
        "round_link", "request_id",
    )
    list_display_links = ("received_at",)
    list_select_related = ("table", "round")
    list_filter = ("outcome", "table", "http_status")
    search_fields = ("=claimed_round", "=request_id", "=body_sha256")
    search_help_text = "Exactly a round id, request id or body SHA-256."
    date_hierarchy = "received_at"
    fieldsets = (
        (None, {"fields": ("table", "received_at", "request_id", "claimed_round", "round_link")}),
        ("Answer", {"fields": ("outcome", "http_status", "errors_json")}),
        ("Body", {"fields": ("body_size", "body_sha256", "body_download", "body_shown")}),
    )

    def get_queryset(self, request):
        # Bodies can be megabytes: the list never needs them, the page loads its one.
        return super().get_queryset(request).defer("body")

    def get_urls(self):
        body = path(
            "<path:object_id>/body/",
            self.admin_site.admin_view(self.body_view),
            name="rounds_submission_body",
        )
        return [body, *super().get_urls()]

    def body_view(self, request, object_id):
        """The body byte for byte, as a download: the page only shows it decoded."""
        submission = get_object_or_404(Submission, pk=object_id)
        if not self.has_view_permission(request, submission):
            raise PermissionDenied
        response = HttpResponse(bytes(submission.body), content_type="application/octet-stream")
        response["Content-Disposition"] = f'attachment; filename="submission-{submission.pk}.body"'
        return response

    @admin.display(description="round", ordering="round__round_id")
    def round_link(self, submission: Submission):
        if submission.round_id is None:
            return "-"
        return admin_change_link(submission.round.round_id, "rounds.round", submission.round_id)

    @admin.display(description="errors")
    def errors_json(self, submission: Submission) -> SafeString | str:
        return json_block(submission.errors)

    @admin.display(description="size")
    def body_size(self, submission: Submission) -> str:
        return f"{len(submission.body)} bytes"

    @admin.display(description="raw body")
    def body_download(self, submission: Submission) -> SafeString:
        url = reverse("admin:rounds_submission_body", args=[submission.pk])
        return format_html('<a href="{}">download exactly as received</a>', url)

    @admin.display(description="body")
    def body_shown(self, submission: Submission) -> SafeString:
        text = body_text(bytes(submission.body))
        if len(text) > BODY_SHOWN_CHARS:
            more = len(text) - BODY_SHOWN_CHARS
            text = f"{text[:BODY_SHOWN_CHARS]}\n… ({more} more characters: download the raw body)"
        return text_block(text)


# ---- tables, keys and configurations ---------------------------------------


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
    fields = ("code", "name", "config", "active", "created_at", "rounds_link", "submissions_link")
    inlines = (TableKeyInline,)

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
                self.message_user(request, f"{config.name} version {version.version} saved.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:rounds_tableconfig_change", args=[config.pk]))
        return TemplateResponse(request, "admin/rounds/tableconfig/new_version.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "config": config,
            "latest": latest, "form": form, "title": f"New version of {config.name}",
        })

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        context["can_add_version"] = request.user.has_perm("rounds.add_tableconfigversion")
        return super().render_change_form(request, context, add, change, form_url, obj)


# ---- findings ----------------------------------------------------------------


class FindingAgeFilter(admin.SimpleListFilter):
    title = "age"
    parameter_name = "age"
    AGES = {"1d": 1, "7d": 7, "30d": 30}

    def lookups(self, request, model_admin):
        return [(key, f"older than {days} day{'s' if days > 1 else ''}") for key, days in self.AGES.items()]

    def queryset(self, request, queryset):
        days = self.AGES.get(self.value() or "")
        if days is None:
            return queryset
        return queryset.filter(created_at__lt=timezone.now() - timezone.timedelta(days=days))


class FindingAmountFilter(admin.SimpleListFilter):
    """How much money the finding is about: |expected − claimed|."""

    title = "amount at stake"
    parameter_name = "stake"
    STAKES = {"100": Decimal(100), "1000": Decimal(1000), "10000": Decimal(10000)}

    def lookups(self, request, model_admin):
        return [(key, f"{key} or more") for key in self.STAKES]

    def queryset(self, request, queryset):
        floor = self.STAKES.get(self.value() or "")
        if floor is None:
            return queryset
        stake = Abs(F("expected") - F("claimed"))
        return queryset.annotate(stake=stake).filter(stake__gte=floor)


@admin.register(Finding)
class FindingAdmin(ReadOnlyAdmin):
    """The auditors' queue: findings of every round, worked through by state."""

    list_display = (
        "created_at", "code", "state", "round_link", "table", "dealer",
        "seat", "bet", "expected", "claimed", "state_changed_by_name",
    )
    list_display_links = ("created_at",)
    list_select_related = ("round__table",)
    list_filter = (
        "state", "code", "informational", FindingAgeFilter, FindingAmountFilter,
        ("round__table", admin.RelatedFieldListFilter), "round__dealer",
    )
    search_fields = ("=round__round_id", "=round__dealer", "detail")
    search_help_text = "Exactly a round id or dealer id, or words of the detail."
    date_hierarchy = "created_at"
    fields = (
        "round_link", "code", "informational", "seat", "bet", "expected", "claimed",
        "detail", "state", "state_changed_at", "state_changed_by_name", "state_note", "created_at",
    )
    # Working a finding is the one thing this admin changes, and only through the service.
    actions = ["acknowledge", "resolve", "dismiss", "reopen"]

    def has_work_finding_permission(self, request) -> bool:
        return request.user.has_perm("rounds.work_finding")

    def _move(self, request, queryset, to_state: str):
        note = request.POST.get("note", "")
        if to_state != Finding.State.ACKNOWLEDGED and "apply" not in request.POST:
            return TemplateResponse(request, "admin/rounds/finding/note.html", {
                **self.admin_site.each_context(request),
                "title": f"{to_state.capitalize()} {queryset.count()} finding(s)",
                "findings": queryset, "action": request.POST.get("action"), "to_state": to_state,
                "opts": self.model._meta,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            })
        try:
            moved = finding_transition(
                finding_ids=list(queryset.values_list("pk", flat=True)), to_state=to_state,
                user=request.user, note=note, request_id=request_id_of(request),
            )
        except FindingTransitionError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return None
        self.message_user(request, f"{len(moved)} finding(s) {to_state}.", messages.SUCCESS)
        return None

    @admin.action(description="Acknowledge selected findings", permissions=["work_finding"])
    def acknowledge(self, request, queryset):
        return self._move(request, queryset, Finding.State.ACKNOWLEDGED)

    @admin.action(description="Resolve selected findings (with a note)", permissions=["work_finding"])
    def resolve(self, request, queryset):
        return self._move(request, queryset, Finding.State.RESOLVED)

    @admin.action(description="Dismiss selected findings (with a note)", permissions=["work_finding"])
    def dismiss(self, request, queryset):
        return self._move(request, queryset, Finding.State.DISMISSED)

    @admin.action(description="Reopen selected findings (with a note)", permissions=["work_finding"])
    def reopen(self, request, queryset):
        return self._move(request, queryset, Finding.State.OPEN)

    @admin.display(description="round", ordering="round__dealt_at")
    def round_link(self, finding: Finding):
        return admin_change_link(str(finding.round), "rounds.round", finding.round_id)

    @admin.display(description="table", ordering="round__table__code")
    def table(self, finding: Finding) -> str:
        return finding.round.table.code

    @admin.display(description="dealer", ordering="round__dealer")
    def dealer(self, finding: Finding) -> str:
        return finding.round.dealer
