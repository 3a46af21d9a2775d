"""Rounds and the bodies tables sent: read-only evidence, with the round drawn as it was dealt."""

from __future__ import annotations

import json
import operator
from functools import reduce
from http import HTTPStatus

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from game.findings import ALL_CODES
from infra.moments import moment_shown
from infra.money_display import money
from infra.request_ids import request_id_of
from rounds.admin.display import round_sheet, status_badge
from rounds.admin.findings import CurrencyFilter, GamingDayListFilter, finding_moved_from_page
from rounds.exports import ROUNDS
from rounds.models import (
    Finding,
    Round,
    Seat,
    Submission,
    Table,
    TableConfigVersion,
)
from rounds.selectors import (
    money_of_rounds,
    player_seated,
    round_detail,
    rounds_with_finding,
    rounds_with_player,
)
from rounds.services import PlacementError, round_place
from trail.admin import (
    ReadOnlyAdmin,
    admin_change_link,
    json_block,
    text_block,
)
from trail.admin_exports import CsvExportAdmin

# A rejected body can be a whole batch; the page shows this much, the download all of it.
BODY_SHOWN_CHARS = 200_000


class FindingCodeFilter(admin.SimpleListFilter):
    title = "finding"
    parameter_name = "finding"

    def lookups(self, request, model_admin):
        return [(code, code) for code in ALL_CODES]

    def queryset(self, request, queryset):
        if self.value():
            # EXISTS rather than a join: one row per round, and its findings count stays true.
            return rounds_with_finding(queryset, code=self.value())
        return queryset


class _ExactIdFilter(admin.SimpleListFilter):
    """An id given in the address (``?player=P1042``): there are too many to offer as choices,
    so the sidebar shows only the one chosen, to be cleared."""

    def lookups(self, request, model_admin):
        value = self.value()
        return [(value, value)] if value else []


class PlayerFilter(_ExactIdFilter):
    title = "player"
    parameter_name = "player"

    def queryset(self, request, queryset):
        if self.value():
            return rounds_with_player(queryset, player=self.value())
        return queryset


class DealerFilter(_ExactIdFilter):
    title = "dealer"
    parameter_name = "dealer"

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(dealer=self.value())
        return queryset


class ConfigVersionFilter(admin.RelatedFieldListFilter):
    def field_choices(self, field, request, model_admin):
        versions = TableConfigVersion.objects.select_related("config").order_by(
            "config__name", "version"
        )
        return [(v.pk, str(v)) for v in versions]


def count_of_findings() -> Coalesce:
    """A round's actionable findings: an informational one describes a correct round."""
    counted = (
        Finding.objects.filter(round=OuterRef("pk"), informational=False)
        .order_by()
        .values("round")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


class RoundChangeList(ChangeList):
    """The rounds list, each row with its money: one grouped query of the page's seats."""

    def get_results(self, request):
        super().get_results(request)
        money_by_round = money_of_rounds(list(self.result_list))
        for round_ in self.result_list:
            round_.money = money_by_round.get(round_.pk)


@admin.register(Round)
class RoundAdmin(CsvExportAdmin, ReadOnlyAdmin):
    csv_export = ROUNDS

    list_display = (
        "status_shown", "table", "round_id", "dealt", "dealer", "dealer_hand", "finding_count",
        "handle", "settled", "paid", "difference",
    )
    list_display_links = ("round_id",)
    list_select_related = ("table", "config_version")
    list_filter = (
        "status",
        "table",
        ("gaming_day", GamingDayListFilter),
        CurrencyFilter,
        "void",
        "held",
        FindingCodeFilter,
        PlayerFilter,
        DealerFilter,
        ("config_version", ConfigVersionFilter),
        # A date filter rather than a date hierarchy, whose drill-down reads every round's date.
        "dealt_at",
    )
    search_fields = ("round_id", "table__code", "dealer", "seats__player")
    search_help_text = "Round id (its start), or exactly a table code, dealer id or player id."
    # A filtered list counts its own rows only: the whole table's count beside it is a
    # second scan of every row.
    show_full_result_count = False
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
        # Ids match exactly (a round id by its start), so each kind has an index; players
        # through EXISTS, so a round with two matching seats is listed once, without DISTINCT.
        # Each kind is first looked up alone, and only those the term names are asked of the
        # list: an OR of all four, EXISTS among them, can use no index and reads every round.
        kinds = [
            (Q(round_id__startswith=term), Round.objects.filter(round_id__startswith=term)),
            (Q(table__code=term), Table.objects.filter(code=term)),
            (Q(dealer=term), Round.objects.filter(dealer=term)),
            (player_seated(player=term), Seat.objects.filter(player=term)),
        ]
        named = [condition for condition, rows in kinds if rows.exists()]
        if not named:
            return queryset.none(), False
        return queryset.filter(reduce(operator.or_, named)), False

    @admin.display(description="status", ordering="status")
    def status_shown(self, round_: Round) -> SafeString:
        return status_badge(round_.status)

    @admin.display(description="dealt at", ordering="dealt_at")
    def dealt(self, round_: Round) -> str:
        return moment_shown(round_.dealt_at)

    @admin.display(description="actionable findings", ordering="finding_total")
    def finding_count(self, round_: Round) -> int:
        return round_.finding_total

    def get_changelist(self, request, **kwargs):
        # The page's rows with their money; the CSV export's list (CsvExportAdmin's) reads
        # no page, and is left as it is.
        listed = super().get_changelist(request, **kwargs)
        return RoundChangeList if listed is ChangeList else listed

    def _money(self, round_: Round, part: str) -> str:
        amounts = getattr(round_, "money", None)
        return money(getattr(amounts, part, None), round_.config_version.currency) if amounts else "–"

    @admin.display(description="handle")
    def handle(self, round_: Round) -> str:
        """What the round adds to the handle: a void round's bets were returned, so nothing."""
        return self._money(round_, "handle")

    @admin.display(description="settled")
    def settled(self, round_: Round) -> str:
        return self._money(round_, "settled")

    @admin.display(description="paid")
    def paid(self, round_: Round) -> str:
        return self._money(round_, "paid")

    @admin.display(description="paid − settled")
    def difference(self, round_: Round) -> SafeString | str:
        amounts = getattr(round_, "money", None)
        if amounts is None or not amounts.difference:
            return self._money(round_, "difference")
        return format_html('<strong class="differs">{}</strong>', self._money(round_, "difference"))

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            can_work = request.user.has_perm("rounds.work_finding")
            context["sheet"] = round_sheet(round_detail(round_pk=obj.pk), can_work=can_work)
            context["can_place"] = obj.held and request.user.has_perm("rounds.place_round")
        return super().render_change_form(request, context, add, change, form_url, obj)

    # ---- the round's findings, worked from its page --------------------------

    def audit_trail_url(self, obj: Round) -> str:
        # The round's page lists its own events and its findings' (round_sheet's trail).
        return reverse("admin:rounds_round_change", args=[obj.pk]) + "#audit-trail"

    def get_urls(self):
        move = path(
            "<path:object_id>/findings/<path:finding_id>/move/",
            self.admin_site.admin_view(self.finding_move_view),
            name="rounds_round_finding_move",
        )
        place = path(
            "<path:object_id>/place/",
            self.admin_site.admin_view(self.place_view),
            name="rounds_round_place",
        )
        return [move, place, *super().get_urls()]

    def place_view(self, request, object_id):
        """A held round placed in the books from its page, through ``round_place``; the answer is
        the round's page again, with what happened as a message."""
        if not (request.user.has_perm("rounds.place_round") and self.has_view_permission(request)):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        try:
            round_pk = Round._meta.pk.to_python(object_id)
        except ValidationError:
            raise Http404("No such round.") from None
        round_ = get_object_or_404(Round, pk=round_pk)
        try:
            round_place(round_pk=round_.pk, user=request.user, note=request.POST.get("note", ""),
                        request_id=request_id_of(request))
        except PlacementError as refused:
            for problems in refused.errors.values():
                for problem in problems:
                    messages.error(request, problem)
        else:
            messages.success(request, f"Round {round_} is placed in the books of {round_.gaming_day}.")
        return redirect("admin:rounds_round_change", round_.pk)

    def finding_move_view(self, request, object_id, finding_id):
        """One of the round's findings moved from the round's page, through ``finding_transition``.

        Every answer is the round's page again, with what happened as a message
        (``finding_moved_from_page``).
        """
        if not (request.user.has_perm("rounds.work_finding") and self.has_view_permission(request)):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        try:
            round_pk = Round._meta.pk.to_python(object_id)
            finding_pk = Finding._meta.pk.to_python(finding_id)
        except ValidationError:
            raise Http404("No such finding of this round.") from None
        finding = get_object_or_404(Finding, pk=finding_pk, round_id=round_pk)
        seat = f", seat {finding.seat}" if finding.seat else ""
        finding_moved_from_page(
            request, finding, f"finding {finding.code}{seat}{f' ({finding.bet})' if finding.bet else ''}",
        )
        return redirect("admin:rounds_round_change", round_pk)


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


class HttpStatusFilter(admin.SimpleListFilter):
    """The answers the service gives, named: Django's own choices would be a DISTINCT over
    every kept body. Any other status still filters by address (``?http_status=418``)."""

    title = "HTTP status"
    parameter_name = "http_status"
    ANSWERS = (200, 201, 400, 403, 409, 411, 413, 429, 500, 503)

    def lookups(self, request, model_admin):
        return [(str(status), f"{status} {HTTPStatus(status).phrase}") for status in self.ANSWERS]

    def queryset(self, request, queryset):
        if self.value():
            try:
                return queryset.filter(http_status=int(self.value()))
            except ValueError:
                return queryset.none()
        return queryset


@admin.register(Submission)
class SubmissionAdmin(ReadOnlyAdmin):
    list_display = (
        "received_at", "table", "claimed_round", "outcome", "http_status",
        "round_link", "request_id",
    )
    list_display_links = ("received_at",)
    list_select_related = ("table", "round")
    # A date filter rather than a date hierarchy, whose drill-down reads every body's date.
    list_filter = ("outcome", "table", HttpStatusFilter, "received_at")
    search_fields = ("=claimed_round", "=request_id", "=body_sha256")
    search_help_text = "Exactly a round id, request id or body SHA-256."
    # A filtered list counts its own rows only: the whole table's count beside it is a
    # second scan of every row.
    show_full_result_count = False
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
        # The URL takes any path, as the admin's own pages do; an id that is not one
        # is no such submission (a 404), never a query that cannot be run (a 500).
        try:
            pk = Submission._meta.pk.to_python(object_id)
        except ValidationError:
            raise Http404("No such submission.") from None
        submission = get_object_or_404(Submission, pk=pk)
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
        if submission.original_size is not None:
            # Refused for its size: only its start was kept (ROUND_BODY_KEPT_BYTES).
            return f"{submission.original_size} bytes sent, the first {len(submission.body)} kept"
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
