"""Game protection in the admin: the queue of its findings, what each rests on, and a player's page.

Registered by ``audit/admin.py``, beside the variance tests' admin. The
findings are raised by ``audit.protection`` (the nightly job, ``manage.py
reconcile``) and worked here through ``finding_transition``, as every queue's
are; nothing else on these pages changes anything. The figures come from
``audit.protection.selectors``, so the pages show what the tests computed and
compute nothing of their own but the layout.

A player's pages live under the queue's address (``players/``), for whoever
may read both the scored seats and the findings.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from game.protection.codes import ProtectionCode
from game.protection.scoring import knowledge_words
from infra import charts
from infra.admin_links import changelist_url
from infra.money_display import money
from infra.work import UNRESOLVED, State
from rounds.admin.cases import CaseFilter, CaseWork
from rounds.admin.display import finding_moves
from rounds.admin.findings import QueueFilter, WorkActions, finding_moved_from_page
from rounds.models import Round
from trail.admin import ReadOnlyAdmin, admin_change_link
from trail.admin_exports import CsvExportAdmin

from .exports import PROTECTION_FINDINGS
from .models import ProtectionFinding
from .protection.config import protection_config
from .protection.selectors import (
    SUSPECTED,
    player_figures,
    player_hands,
    player_leak_course,
    player_leak_verdict,
    players_ranked,
    players_seen,
)

READ = ("audit.view_seatscore", "audit.view_protectionfinding")
HANDS_SHOWN = 50
PLAYERS_SHOWN = 100
HOLE_CARDING = ProtectionCode.SUSPECTED_HOLE_CARDING.value
LEAK_CODES = (HOLE_CARDING, ProtectionCode.SUSPECTED_COLLUSION.value)


def player_url(player: str) -> str:
    return reverse("admin:audit_protectionfinding_player", args=[player])


def player_link(player: str) -> SafeString | str:
    return format_html('<a href="{}">{}</a>', player_url(player), player) if player else "–"


def round_links(round_pks) -> dict[int, SafeString | str]:
    """Each round's link to its page, labelled as the rounds list names it ("S01/sim-00012"), in one query."""
    rows = Round.objects.filter(pk__in=set(round_pks)).values_list("pk", "table__code", "round_id")
    found = {pk: admin_change_link(f"{table}/{round_id}", "rounds.round", pk) for pk, table, round_id in rows}
    # A round the scores name but the rounds no longer hold (SeatScore keeps no constraint) stays a number.
    return {pk: found.get(pk, f"round {pk}") for pk in round_pks}


def _options(values: dict) -> str:
    """An option's value in Antes, the best first: "bet 4x +0.512 · check +0.301"."""
    ranked = sorted(values.items(), key=lambda item: -float(item[1]))
    return " · ".join(f"{option.replace('_', ' ')} {float(value):+.3f}" for option, value in ranked)


class ProtectionQueueFilter(QueueFilter):
    """The queue's states, as the findings queue's; a protection finding has no informational kind."""

    def lookups(self, request, model_admin):
        return [choice for choice in super().lookups(request, model_admin) if choice[0] != self.INFORMATIONAL]

    def queryset(self, request, queryset):
        value = self.value()
        if value == self.ALL:
            return queryset
        if value == self.UNRESOLVED:
            return queryset.filter(state__in=UNRESOLVED)
        if value in State.values:
            return queryset.filter(state=value)
        raise IncorrectLookupParameters(f"no such state: {value}")


class PlayerFilter(admin.SimpleListFilter):
    """A player given in the address (``?player=P-1``), as the player's page links his findings:
    as player or as the companion of a pair. Not offered as a choice."""

    title = "player"
    parameter_name = "player"

    def lookups(self, request, model_admin):
        value = self.value()
        return [(value, value)] if value else []

    def queryset(self, request, queryset):
        player = self.value()
        return queryset.filter(Q(player=player) | Q(companion=player)) if player else queryset


@dataclass(frozen=True, slots=True)
class LeakRow:
    step: dict
    round: SafeString | str
    values: str
    informed_values: str


@admin.register(ProtectionFinding)
class ProtectionFindingAdmin(CsvExportAdmin, CaseWork, WorkActions, ReadOnlyAdmin):
    """The game-protection queue: players, dealers, pairs and tables the tests found, to work."""
    csv_export = PROTECTION_FINDINGS

    work_permission = "work_protectionfinding"
    change_form_template = "admin/protection/change_form.html"
    change_list_template = "admin/protection/change_list.html"
    list_display = ("code", "subject", "days", "figure_shown", "state", "case_shown", "worked_by", "created_at")
    list_display_links = ("code",)
    list_filter = (ProtectionQueueFilter, CaseFilter, "code", PlayerFilter, "currency", "day_to")
    ordering = ("-created_at", "-id")
    search_fields = ("=player", "=dealer", "=companion", "=table")
    search_help_text = "Exactly a player id, a dealer id or a table code."
    show_full_result_count = False
    fields = (
        "code", "subject", "days", "figure", "threshold", "detail", "state", "state_changed_at",
        "state_changed_by_name", "state_note", "created_at", "key",
    )
    # Working a finding is the one thing this admin changes, and only through the service.
    actions = WorkActions.actions

    def work_label(self, finding: ProtectionFinding) -> str:
        return f"{finding.code} — {self._subject_text(finding)}"

    @staticmethod
    def _subject_text(finding: ProtectionFinding) -> str:
        parts = [("player", finding.player), ("with", finding.companion), ("dealer", finding.dealer),
                 ("table", finding.table)]
        return ", ".join(f"{name} {value}" for name, value in parts if value) or finding.key

    @admin.display(description="about")
    def subject(self, finding: ProtectionFinding) -> SafeString:
        parts = [
            ("player", player_link(finding.player) if finding.player else ""),
            ("with", player_link(finding.companion) if finding.companion else ""),
            ("dealer", finding.dealer), ("table", finding.table),
        ]
        return format_html_join(", ", "{} {}", ((name, value) for name, value in parts if value)) or finding.key

    @admin.display(description="days", ordering="day_to")
    def days(self, finding: ProtectionFinding) -> str:
        if finding.day_from == finding.day_to:
            return str(finding.day_to)
        return f"{finding.day_from} – {finding.day_to}"

    @admin.display(description="figure / threshold", ordering="figure")
    def figure_shown(self, finding: ProtectionFinding) -> str:
        return f"{finding.figure:.2f} / {finding.threshold:.2f}"

    @admin.display(description="moved by", ordering="state_changed_by_name")
    def worked_by(self, finding: ProtectionFinding) -> str:
        return finding.state_changed_by_name or "–"

    # ---- a finding's page: what it rests on ----------------------------------------------

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["evidence"] = self.evidence(obj)
            context["players"] = [p for p in (obj.player, obj.companion) if p]
            # Worked from its own page as a round's findings are from the round's.
            moves = finding_moves(obj, can_work=self.has_work_finding_permission(request))
            context["moves"] = moves
            context["note_always_needed"] = bool(moves) and all(m.needs_note for m in moves)
            context["move_url"] = reverse("admin:audit_protectionfinding_move", args=[obj.pk])
        return super().render_change_form(request, context, add, change, form_url, obj)

    def move_view(self, request, object_id):
        """The finding moved from its own page (``finding_moved_from_page``); the page again."""
        if not (self.has_work_finding_permission(request) and self.has_view_permission(request)):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        try:
            pk = ProtectionFinding._meta.pk.to_python(object_id)
        except ValidationError:
            raise Http404("No such finding.") from None
        finding = get_object_or_404(ProtectionFinding, pk=pk)
        finding_moved_from_page(request, finding, f"finding {finding.code} {finding.key}")
        return redirect("admin:audit_protectionfinding_change", pk)

    def evidence(self, finding: ProtectionFinding) -> dict:
        """The evidence as the page lays it out, by the kind of test that raised it."""
        evidence = finding.evidence or {}
        if finding.code in LEAK_CODES:
            steps = evidence.get("steps", [])
            links = round_links([step["round"] for step in steps])
            return {
                "kind": "leak", "evidence": evidence,
                "knowledge": knowledge_words(evidence["knowledge"]) if evidence.get("knowledge") else "",
                "tests": [{"test": t, "what": knowledge_words(t["knowledge"])} for t in evidence.get("tests", [])],
                "rows": [LeakRow(step, links[step["round"]], _options(step.get("values", {})),
                                 _options(step.get("informed_values", {}))) for step in steps],
            }
        if finding.code == ProtectionCode.SUSPECTED_SWEETHEART_DEALING.value:
            lines = [
                {**line, "type": line["type"].replace("_", " "), "direction": line["direction"].replace("_", " "),
                 "amount": money(line["amount_for_player"], line["currency"])}
                for line in evidence.get("errors", [])
            ]
            return {"kind": "sweetheart", "evidence": evidence, "lines": lines}
        if finding.code == ProtectionCode.PAY_TABLE_MISMATCH.value:
            examples = [(money(wager, finding.currency), money(claimed, finding.currency))
                        for wager, claimed in evidence.get("examples", [])]
            return {"kind": "pay_table", "evidence": evidence, "examples": examples,
                    "line": str(evidence.get("line", "")).replace("_", " ")}
        return {"kind": "other", "evidence": evidence}

    # ---- the players' pages ------------------------------------------------------------

    def get_urls(self):
        # Before the admin's own, whose "<object_id>/" would take "players/" for a finding's id.
        return [
            path("players/", self.admin_site.admin_view(self.players_view),
                 name="audit_protectionfinding_players"),
            path("players/<str:player>/", self.admin_site.admin_view(self.player_view),
                 name="audit_protectionfinding_player"),
            path("<path:object_id>/move/", self.admin_site.admin_view(self.move_view),
                 name="audit_protectionfinding_move"),
            *super().get_urls(),
        ]

    def _page(self, request, template: str, title: str, **context) -> TemplateResponse:
        return TemplateResponse(request, template, {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": title, **context,
        })

    def players_view(self, request):
        """The players with scored seats, the most hands first, found by part of their id."""
        if not request.user.has_perms(READ):
            raise PermissionDenied
        search = request.GET.get("q", "").strip()
        page = Paginator(players_ranked(search=search), PLAYERS_SHOWN).get_page(request.GET.get("p"))
        rows = [{**row, "url": player_url(row["player"]),
                 "findings_url": changelist_url(ProtectionFinding, state="unresolved", player=row["player"])}
                for row in players_seen(page.object_list)]
        return self._page(request, "admin/protection/players.html", "Players", rows=rows, search=search,
                          page=page)

    def player_view(self, request, player: str):
        """A player's figures per currency, his leak test's course, his findings and recent hands."""
        if not request.user.has_perms(READ):
            raise PermissionDenied
        courses = player_leak_course(player=player)
        # The chart draws the hole-carding test over all his hands (older findings' evidence may
        # name the two dealer cards apart); the table below lists every test with its own threshold.
        drawn = [c for c in courses if c.code == HOLE_CARDING and c.dealer is None]
        threshold = drawn[0].threshold if drawn else 0.0
        chart = charts.leak_course_chart(
            title=f"The leak test of {player} over time", threshold=threshold,
            courses={
                knowledge_words(c.knowledge): [
                    charts.LeakStep(p.dealt_at, p.figure, p.chose_informed,
                                    reverse("admin:rounds_round_change", args=[p.round]))
                    for p in c.points
                ]
                for c in drawn
            },
        )
        # Every test that says something; of the rest (a companion met for a few hands) a count.
        enough = protection_config().leak.enough
        shown = [c for c in courses if c.dealer is None and c.companion is None
                 or c.verdict == SUSPECTED or len(c.points) >= enough]
        tests = [{"course": c, "what": knowledge_words(c.knowledge), "steps": len(c.points)} for c in shown]
        hands = list(player_hands(player=player, limit=HANDS_SHOWN).select_related("table"))
        hand_links = round_links([hand.round_id for hand in hands])
        findings = ProtectionFinding.objects.filter(Q(player=player) | Q(companion=player)).order_by(
            "-created_at", "-id")
        return self._page(
            request, "admin/protection/player.html", f"Player {player}", player=player,
            figures=player_figures(player=player), chart=chart, threshold=threshold, tests=tests,
            verdict=player_leak_verdict(courses), alpha=protection_config().leak.alpha,
            tests_not_shown=len(courses) - len(shown),
            findings=list(findings), findings_url=changelist_url(ProtectionFinding, state="all", player=player),
            hands=[{"score": hand, "round": hand_links[hand.round_id],
                    "dealt_at": timezone.localtime(hand.dealt_at),
                    "favourable": [
                        f"{error['type'].replace('_', ' ')} ({error['bet']}) "
                        f"{money(error['amount_for_player'], hand.currency)}"
                        for error in hand.errors if error.get("direction") == "for_player"
                    ]} for hand in hands],
            hands_shown=HANDS_SHOWN, players_url=reverse("admin:audit_protectionfinding_players"),
        )

