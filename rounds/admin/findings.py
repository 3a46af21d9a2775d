"""The findings queue: filters by state, code, table, dealer, day, age and amount; moves with a note.

The queue opens on the work (``QueueFilter``): open findings that are not
informational, newest first, each with the money at stake, its table's round
id and its dealer. Informational findings (a progressive award paid right)
describe a correct round and have a choice of their own, never "open".

``WorkActions`` is the queue's acknowledge / resolve / dismiss / reopen, for
any model of worked findings (``infra.work.WorkedFinding``): closing or
reopening asks for the note first, and every move goes through
``finding_transition``.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from functools import cache

from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.db import transaction
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import capfirst

from infra.moments import moment_shown
from infra.money_display import money
from infra.partitioning import month_of
from infra.request_ids import request_id_of
from infra.work import NOTE_REQUIRED, State, WorkedFinding
from rounds import mistakes
from rounds.admin.cases import CaseFilter, CaseWork
from rounds.exports import FINDINGS
from rounds.models import (
    DayTotal,
    Finding,
    TableConfigVersion,
)
from rounds.selectors import AT_STAKE, TO_WORK, of_days
from rounds.video import video_of
from rounds.services import (
    FindingTransitionError,
    finding_transition,
)
from trail.admin import (
    ReadOnlyAdmin,
    admin_change_link,
)
from trail.admin_exports import CsvExportAdmin, exporting


class QueueFilter(admin.SimpleListFilter):
    """Which findings the queue holds; with nothing chosen, the work: open and actionable.

    Each state but "informational" and "all" holds actionable findings only, so an
    informational one never sits among the open. There is no choice without a
    value: the list without ``state`` in its address is the default, "open".
    """

    title = "state"
    parameter_name = "state"
    DEFAULT = State.OPEN.value
    UNRESOLVED = "unresolved"
    INFORMATIONAL = "informational"
    ALL = "all"

    def lookups(self, request, model_admin):
        return [
            (State.OPEN.value, "open: to work"),
            (self.UNRESOLVED, "unresolved: open or acknowledged"),
            (State.ACKNOWLEDGED.value, "acknowledged"),
            (State.RESOLVED.value, "resolved"),
            (State.DISMISSED.value, "dismissed"),
            (self.INFORMATIONAL, "informational: no work"),
            (self.ALL, "all findings"),
        ]

    def value(self):
        return super().value() or self.DEFAULT

    def choices(self, changelist):
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == lookup,
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }

    def queryset(self, request, queryset):
        value = self.value()
        if value == self.ALL:
            return queryset
        if value == self.INFORMATIONAL:
            return queryset.filter(informational=True)
        if value == self.UNRESOLVED:
            return queryset.filter(TO_WORK)
        if value in State.values:
            return queryset.filter(state=value, informational=False)
        raise IncorrectLookupParameters(f"no such state: {value}")


class GamingDayListFilter(admin.DateFieldListFilter):
    """Django's date filter, which also shows the day or the days the list was opened on: the
    tonight page and the reports link a day (``?gaming_day=…``) or a range of days
    (``?gaming_day__gte=…&gaming_day__lt=…``), and the sidebar (and an export's record of its
    filters) names them, where it said "Any date"."""

    def __init__(self, field, request, params, model, model_admin, field_path):
        self.lookup_kwarg_exact = field_path
        self.day = params.get(field_path, [None])[-1]
        super().__init__(field, request, params, model, model_admin, field_path)

    def expected_parameters(self):
        return [*super().expected_parameters(), self.lookup_kwarg_exact]

    def choices(self, changelist):
        choices = list(super().choices(changelist))
        since, until = self.date_params.get(self.lookup_kwarg_since), self.date_params.get(self.lookup_kwarg_until)
        if self.day:
            shown = self.day
        elif (since or until) and not any(choice["selected"] for choice in choices):
            shown = f"from {since or '…'} to before {until or '…'}"
        else:
            return choices
        for choice in choices:
            choice["selected"] = False
        return [*choices, {"selected": True, "query_string": changelist.get_query_string(), "display": shown}]


class _DayFilter(admin.SimpleListFilter):
    """A gaming day given in the address (``?gaming_day=2026-11-30``), as the tonight page links
    the findings of a day's rounds; not offered as a choice."""

    lookup = ""  # the rounds' gaming_day lookup

    def lookups(self, request, model_admin):
        value = self.value()
        return [(value, value)] if value else []

    def queryset(self, request, queryset):
        if not self.value():
            return queryset
        try:
            day = date.fromisoformat(self.value())
        except ValueError as exc:
            raise IncorrectLookupParameters(f"not a day: {self.value()}") from exc
        if not self.lookup:
            return of_days(queryset, day_from=day, day_to=day)
        return queryset.filter(**{f"round__gaming_day{self.lookup}": day})


# Months of rounds whose dealers the findings' sidebar lists: this one and the two before.
DEALER_MONTHS = 3


class RecentDealerFilter(admin.AllValuesFieldListFilter):
    """The dealers of the last three months of rounds, read from their days' totals
    (``rounds.DayTotal``: a few rows a table a day, by the (dealer, gaming day) index).

    An older dealer is one search away (the search box takes an exact dealer
    id), and ``?round__dealer=`` still filters by any.
    """

    title = "dealer (the last three months)"

    def __init__(self, field, request, params, model, model_admin, field_path):
        super().__init__(field, request, params, model, model_admin, field_path)
        first = month_of(self.today())
        for _ in range(DEALER_MONTHS - 1):
            first = month_of(first - timedelta(days=1))
        self.lookup_choices = (DayTotal.objects.filter(gaming_day__gte=first).order_by("dealer")
                               .values_list("dealer", flat=True).distinct())

    @staticmethod
    def today() -> date:
        return timezone.localdate()


class GamingDayFilter(_DayFilter):
    title = "gaming day"
    parameter_name = "gaming_day"


class BeforeDayFilter(_DayFilter):
    """The findings of rounds dealt before a gaming day: the tonight page's earlier days."""

    title = "before gaming day"
    parameter_name = "before_day"
    lookup = "__lt"


class CurrencyFilter(admin.SimpleListFilter):
    """A round's currency: its configuration version's. The choices are the few versions' own."""

    title = "currency"
    parameter_name = "currency"
    path = "config_version__currency"

    def lookups(self, request, model_admin):
        currencies = TableConfigVersion.objects.order_by("currency").values_list("currency", flat=True).distinct()
        return [(currency, currency) for currency in currencies]

    def queryset(self, request, queryset):
        return queryset.filter(**{self.path: self.value()}) if self.value() else queryset


class FindingCurrencyFilter(CurrencyFilter):
    path = "round__config_version__currency"


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
        stake = AT_STAKE
        return queryset.annotate(stake=stake).filter(stake__gte=floor)


# What each move is called on the button that makes it.
WORK_VERBS = {State.ACKNOWLEDGED: "Acknowledge", State.RESOLVED: "Resolve", State.DISMISSED: "Dismiss",
              State.OPEN: "Reopen"}


def finding_moved_from_page(request, finding: WorkedFinding, label: str) -> None:
    """One finding moved from a page that shows it (a round's, a protection finding's own),
    through ``finding_transition``, what happened said as a message.

    The form sends the state the page showed (``from_state``): a finding someone else moved
    since is refused, never moved on from a state the user has not seen.
    """
    to_state, shown = request.POST.get("to_state", ""), request.POST.get("from_state", "")
    note = request.POST.get("note", "").strip()
    refused = _move_refused(finding, label, to_state, note)
    moved: list[WorkedFinding] = []
    if refused is None:
        model = type(finding)
        try:
            with transaction.atomic():
                # Locked first, with its mates (``rounds.mistakes``), as the move locks them: no one
                # moves it between this look and the move.
                (now,), _ = mistakes.locked_with_mates(model, [finding.pk])
                if now.state == shown:
                    moved = finding_transition(
                        finding_ids=[finding.pk], to_state=to_state, user=request.user,
                        note=note, request_id=request_id_of(request), model=model,
                    )
                else:
                    by = f" by {now.state_changed_by_name}" if now.state_changed_by_name else ""
                    refused = (
                        f"{label} is {now.state} now (moved{by} since this page showed it "
                        f"{shown or 'in a state it did not say'}): it was not moved. "
                        "See it as it is below."
                    )
        except FindingTransitionError as exc:
            refused = f"{label}: {exc}. Nothing changed."
    if refused is None:
        noted = ", with your note" if note else ""
        mates = mistakes.named(mate for mate in moved if mate.pk != finding.pk)
        with_mates = f" With it, the same mistake's {mates}." if mates else ""
        messages.success(request, capfirst(f"{label}: {shown} → {to_state}{noted}.{with_mates}"))
    else:
        messages.error(request, capfirst(refused))


def _move_refused(finding: WorkedFinding, label: str, to_state: str, note: str) -> str | None:
    """Why the move is refused before the finding is even locked; None: it may be tried."""
    if getattr(finding, "informational", False):
        return f"{label} is informational: a record, not work. Nothing changed."
    if to_state not in WORK_VERBS:
        return f"{label}: no such move. Nothing changed."
    if to_state in NOTE_REQUIRED and not note:
        return f"{WORK_VERBS[to_state]} needs a note saying why: {label} was not moved."
    return None


class WorkActions:
    """The actions that work findings, for a ModelAdmin of any ``WorkedFinding`` model.

    The user needs ``<app>.<work_permission>``; without it the actions are not offered.
    """

    work_permission = "work_finding"
    actions = ["acknowledge", "resolve", "dismiss", "reopen"]
    work_related: tuple[str, ...] = ()  # what ``work_label`` reads of each finding

    def has_work_finding_permission(self, request) -> bool:
        return request.user.has_perm(f"{self.model._meta.app_label}.{self.work_permission}")

    def work_label(self, finding: WorkedFinding) -> str:
        """How a finding is named on the page that asks for the note."""
        return str(finding)

    def work_labels(self, findings: list[WorkedFinding]) -> list[str]:
        """``work_label`` of each of ``findings``, for a model that reads what they have in common at once."""
        return [self.work_label(finding) for finding in findings]

    def _move(self, request, queryset, to_state: str):
        note = request.POST.get("note", "")
        if to_state in NOTE_REQUIRED and "apply" not in request.POST:
            return self._note_asked(request, queryset, to_state)
        try:
            moved = finding_transition(
                finding_ids=list(queryset.values_list("pk", flat=True)), to_state=to_state,
                user=request.user, note=note, request_id=request_id_of(request), model=self.model,
            )
        except FindingTransitionError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return None
        self.message_user(request, f"{len(moved)} finding(s) {to_state}.", messages.SUCCESS)
        return None

    def _note_asked(self, request, queryset, to_state: str) -> TemplateResponse:
        """The page that asks for the note: it says what will happen, and nothing has yet.

        Cancel goes back to the list as it was filtered; only the button moves the findings.
        """
        chosen = list(queryset.select_related(*self.work_related))
        findings = [(finding.pk, label, finding.state)
                    for finding, label in zip(chosen, self.work_labels(chosen), strict=True)]
        count = len(findings)
        return TemplateResponse(request, "admin/work/note.html", {
            **self.admin_site.each_context(request),
            "title": f"{WORK_VERBS[to_state]} {count} finding{'' if count == 1 else 's'}?",
            "findings": findings, "to_state": to_state, "verb": WORK_VERBS[to_state],
            "action": request.POST.get("action"), "opts": self.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            "cancel_url": request.get_full_path(),
        })

    @admin.action(description="Acknowledge selected findings", permissions=["work_finding"])
    def acknowledge(self, request, queryset):
        return self._move(request, queryset, State.ACKNOWLEDGED)

    @admin.action(description="Resolve selected findings (with a note)", permissions=["work_finding"])
    def resolve(self, request, queryset):
        return self._move(request, queryset, State.RESOLVED)

    @admin.action(description="Dismiss selected findings (with a note)", permissions=["work_finding"])
    def dismiss(self, request, queryset):
        return self._move(request, queryset, State.DISMISSED)

    @admin.action(description="Reopen selected findings (with a note)", permissions=["work_finding"])
    def reopen(self, request, queryset):
        return self._move(request, queryset, State.OPEN)


@cache
def _one_row_each(changelist: type) -> type:
    """``changelist`` listing a row for each mistake (``rounds.mistakes``): the first of a seat's
    findings of one mistake stands for its mates, and names their bets and amounts."""

    class OneRowEach(changelist):
        def get_queryset(self, request, exclude_parameters=None):
            return mistakes.one_row_each(super().get_queryset(request, exclude_parameters))

        def get_results(self, request):
            super().get_results(request)
            bets = mistakes.bets_of(self.result_list)
            for finding in self.result_list:
                finding.mistake_bets = bets.get(finding.pk, [])

    OneRowEach.__name__ = OneRowEach.__qualname__ = f"OneRowEach{changelist.__name__}"
    return OneRowEach


@admin.register(Finding)
class FindingAdmin(CsvExportAdmin, CaseWork, WorkActions, ReadOnlyAdmin):
    """The auditors' queue: findings of every round, worked through by state."""
    csv_export = FINDINGS


    # Fits a 1,366-pixel screen: the table's round id names the round (and links it),
    # the seat and bet share a column, and who moved the finding last closes the row.
    list_display = (
        "dealt", "code", "state", "round_link", "dealer",
        "seat_bet", "at_stake", "expected_shown", "claimed_shown", "case_shown", "worked_by",
    )
    list_display_links = ("dealt",)
    list_select_related = ("round__table", "round__config_version")
    change_form_template = "admin/work/change_form.html"
    list_filter = (
        QueueFilter, CaseFilter, "code", FindingAgeFilter, FindingAmountFilter, GamingDayFilter, BeforeDayFilter,
        FindingCurrencyFilter,
        # Dealers from the rounds' (dealer, dealt_at) index, not a DISTINCT over every round;
        # a date filter rather than a date hierarchy, whose drill-down reads every finding's date.
        ("round__table", admin.RelatedFieldListFilter), ("round__dealer", RecentDealerFilter),
        "created_at",
    )
    ordering = ("-created_at", "-id")
    search_fields = ("=round__round_id", "=round__dealer", "detail")
    search_help_text = "Exactly a round id or dealer id, or words of the detail."
    # A filtered list counts its own rows only: the whole table's count beside it is a
    # second scan of every row.
    show_full_result_count = False
    fields = (
        "round_link", "code", "informational", "seat", "bet", "same_mistake", "expected_money", "claimed_money",
        "detail", "state", "state_changed_at", "state_changed_by_name", "state_note", "video", "created_at",
    )
    # Working a finding is the one thing this admin changes, and only through the service.
    actions = WorkActions.actions

    work_related = ("round__table",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(stake=AT_STAKE)

    def get_changelist(self, request, **kwargs):
        changelist = super().get_changelist(request, **kwargs)
        # The list has a row for each mistake; its export, a row for each finding the rows stand for.
        return changelist if exporting(request) else _one_row_each(changelist)

    def work_label(self, finding: Finding) -> str:
        seat = f", seat {finding.seat}" if finding.seat else ""
        bets = getattr(finding, "mistake_bets", [])
        together = f" ({', '.join(bet for bet, _ in bets)}: moved together)" if bets else ""
        return f"{finding.code} — {finding.round}{seat}{together}"

    def work_labels(self, findings: list[Finding]) -> list[str]:
        bets = mistakes.bets_of(findings)
        for finding in findings:
            finding.mistake_bets = bets.get(finding.pk, [])
        return super().work_labels(findings)

    @admin.display(description="dealt at", ordering="round__dealt_at")
    def dealt(self, finding: Finding) -> str:
        """When its round was dealt, by the casino's clock, as the rounds list writes it (the round
        names its table); when the finding was received is on its page."""
        return moment_shown(finding.round.dealt_at)

    @admin.display(description="round", ordering="round__round_id")
    def round_link(self, finding: Finding):
        return admin_change_link(str(finding.round), "rounds.round", finding.round_id)

    @admin.display(description="dealer", ordering="round__dealer")
    def dealer(self, finding: Finding) -> str:
        return finding.round.dealer

    @admin.display(description="seat · bet")
    def seat_bet(self, finding: Finding) -> str:
        """The seat and the bet; for a row that stands for a mistake's findings, each bet it reached."""
        bets = getattr(finding, "mistake_bets", [])
        bet = ", ".join(name for name, _ in bets) if bets else finding.bet
        return " · ".join(str(part) for part in (finding.seat, bet) if part) or "–"

    @admin.display(description="at stake", ordering="stake")
    def at_stake(self, finding: Finding) -> str:
        return money(finding.stake, finding.round.config_version.currency) if finding.stake is not None else "–"

    @admin.display(description="expected", ordering="expected")
    def expected_shown(self, finding: Finding) -> str:
        return money(finding.expected)

    @admin.display(description="claimed", ordering="claimed")
    def claimed_shown(self, finding: Finding) -> str:
        bets = getattr(finding, "mistake_bets", [])
        return " · ".join(money(claimed) for _, claimed in bets) if bets else money(finding.claimed)

    @admin.display(description="expected")
    def expected_money(self, finding: Finding) -> str:
        """On the finding's page, in its round's currency (the list's column names it in "at stake")."""
        return money(finding.expected, finding.round.config_version.currency)

    @admin.display(description="claimed")
    def claimed_money(self, finding: Finding) -> str:
        return money(finding.claimed, finding.round.config_version.currency)

    @admin.display(description="moved by", ordering="state_changed_by_name")
    def worked_by(self, finding: Finding) -> str:
        return finding.state_changed_by_name or "–"

    @admin.display(description="the same mistake")
    def same_mistake(self, finding: Finding) -> SafeString | str:
        """The findings one mistake raised with this one on other bets, moved and worked with it."""
        mates = mistakes.mates_of(finding)
        if not mates:
            return "– (this finding is a mistake of its own)"
        links = format_html_join(", ", "{} ({})", ((admin_change_link(f"#{mate.pk}", "rounds.finding", mate.pk),
                                                   mate.bet or "–") for mate in mates))
        return format_html("{}: moved, assigned and escalated together with this one", links)

    @admin.display(description="video")
    def video(self, finding: Finding) -> SafeString | str:
        """The casino's video of the round at the finding's seat (its table's template, ``rounds.video``)."""
        link = video_of(finding.round, finding.seat)
        return format_html('<a class="video-link" href="{}" rel="noopener" target="_blank">the video of this moment</a>',
                           link) if link else "– (the table has no video link)"
