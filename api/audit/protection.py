"""Game protection for auditors and surveillance: its findings, the scored seats, a player's figures.

Read only. The findings are worked as every finding is (``infra.work``), the
seats are what ``audit.protection.scores`` wrote, and a player's figures and
the course of his leak test are ``audit.protection.selectors``' own. Money is
text with its currency beside it, never summed across currencies; values of
decisions are expectations in Antes, not money.
"""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import OuterRef, QuerySet, Subquery
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from api.rounds.views import DealtAtCursor
from audit.models import ProtectionFinding, SeatScore
from audit.protection.config import protection_config
from audit.protection.selectors import player_figures, player_leak_course, player_leak_verdict
from game.protection.codes import PROTECTION_CODES
from game.protection.scoring import DEALER_CARD_AT, SEEN_CARD, companion_knowledge
from infra.filters import StrictBooleanFilter
from infra.openapi import EVERY_REQUEST, STAFF_ONLY, answers, refusal, staff_item, staff_pages
from infra.permissions import IsStaffReader
from infra.replicas import ReplicaReads
from infra.work import State
from rounds.models import Round, Seat
from rounds.wire.fields import MoneyField, NoneIfBlankCharField

from .reports import AUTHENTICATION, NewestFirst

TAGS = ["protection"]
ANTES = {"max_digits": 12, "decimal_places": 6}  # SeatScore.ev_lost's
FIGURE = {"max_digits": 18, "decimal_places": 6}  # ProtectionFinding.figure's
# A player's sums over many seats: wider than one stake, and the expectations keep six places.
SUM_MONEY_DIGITS = 30
EXPECTED = {"max_digits": SUM_MONEY_DIGITS + 4, "decimal_places": 6}
PLAYER_MAX_LENGTH = Seat._meta.get_field("player").max_length

NO_FINDING = "No game-protection finding has this id."
NO_PLAYER = "No stored round has a seat of this player."
BAD_DAYS = ("day_from or day_to is not a date (YYYY-MM-DD), or day_to is before day_from; "
            "errors names the field.")


# ---- filters --------------------------------------------------------------------------------


class DayRangeForm(forms.Form):
    """A filter form whose range of gaming days must run forwards: a range the wrong way
    round matches nothing, and saying so is kinder than an empty page."""

    def clean(self):
        cleaned = super().clean()
        first, last = cleaned.get("day_from"), cleaned.get("day_to")
        if first and last and last < first:
            self.add_error("day_to", "Must not be before day_from.")
        return cleaned


class ProtectionFindingFilter(django_filters.FilterSet):
    code = django_filters.ChoiceFilter(choices=[(c, c) for c in PROTECTION_CODES])
    state = django_filters.ChoiceFilter(choices=State.choices)
    player = django_filters.CharFilter()
    dealer = django_filters.CharFilter()
    table = django_filters.CharFilter(label="Table code")
    # On the last day a finding covers: the day its test crossed, or the night it was raised.
    day_from = django_filters.DateFilter(field_name="day_to", lookup_expr="gte",
                                         label="Findings whose last day is on or after this gaming day")
    day_to = django_filters.DateFilter(field_name="day_to", lookup_expr="lte",
                                       label="Findings whose last day is on or before this gaming day")

    class Meta:
        model = ProtectionFinding
        fields = ["code", "state", "player", "dealer", "table"]
        form = DayRangeForm


class SeatScoreFilter(django_filters.FilterSet):
    player = django_filters.CharFilter()
    dealer = django_filters.CharFilter()
    table = django_filters.CharFilter(field_name="table__code", label="Table code")
    gaming_day = django_filters.DateFilter()
    day_from = django_filters.DateFilter(field_name="gaming_day", lookup_expr="gte",
                                         label="Seats of this gaming day or later")
    day_to = django_filters.DateFilter(field_name="gaming_day", lookup_expr="lte",
                                       label="Seats of this gaming day or earlier")
    telling = StrictBooleanFilter(method="filter_telling",
                                  label="Only seats with (true) or without (false) a telling decision")

    class Meta:
        model = SeatScore
        fields = ["player", "dealer", "table", "gaming_day"]
        form = DayRangeForm

    def filter_telling(self, scores, name, value):
        if value is None:
            return scores
        return scores.filter(telling__gt=0) if value else scores.filter(telling=0)


def seat_score_list() -> QuerySet[SeatScore]:
    """Scored seats with what their answer names, in one query: the table, and the round's
    own id, looked up with its gaming day so that only the round's partition is read."""
    sent_id = Round.objects.filter(
        pk=OuterRef("round_id"), gaming_day=OuterRef("gaming_day")
    ).order_by().values("round_id")
    return SeatScore.objects.select_related("table").annotate(sent_round_id=Subquery(sent_id[:1]))


# ---- answers --------------------------------------------------------------------------------


class ProtectionCodeField(serializers.ChoiceField):
    def __init__(self, **kwargs):
        super().__init__(choices=PROTECTION_CODES, **kwargs)


class ProtectionCodeFieldSchema(OpenApiSerializerFieldExtension):
    """The codes as a component named for what they are: left to drf-spectacular, it would be
    named after the field, "code", which the round findings' codes already are."""

    target_class = ProtectionCodeField

    def map_serializer_field(self, auto_schema, direction):
        component = ResolvedComponent(
            name="ProtectionCodeEnum", type=ResolvedComponent.SCHEMA, object="ProtectionCodeEnum",
            schema={"type": "string", "enum": list(PROTECTION_CODES)},
        )
        auto_schema.registry.register_on_missing(component)
        return component.ref


class ProtectionFindingSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    code = ProtectionCodeField()
    player = NoneIfBlankCharField(allow_null=True)
    dealer = NoneIfBlankCharField(allow_null=True)
    companion = NoneIfBlankCharField(allow_null=True,
                                     help_text="The other player, for suspected collusion.")
    table = NoneIfBlankCharField(allow_null=True,
                                 help_text="The table's code, for a pay table mismatch.")
    currency = NoneIfBlankCharField(allow_null=True)
    day_from = serializers.DateField(help_text="First gaming day the test looked at.")
    day_to = serializers.DateField(help_text="The gaming day the test crossed its threshold.")
    figure = serializers.DecimalField(**FIGURE, help_text="The test's figure: the larger, the stronger.")
    threshold = serializers.DecimalField(**FIGURE,
                                         help_text="The figure at which the test raises a finding.")
    detail = serializers.CharField()
    state = serializers.ChoiceField(choices=State.choices)
    state_changed_at = serializers.DateTimeField(allow_null=True)
    state_changed_by = NoneIfBlankCharField(source="state_changed_by_name", allow_null=True)
    state_note = serializers.CharField()
    created_at = serializers.DateTimeField()


class ProtectionFindingSerializer(ProtectionFindingSummarySerializer):
    key = serializers.CharField(
        help_text="What the finding is about, exactly; a rerun finds it by this.")
    evidence = serializers.DictField(help_text="Every number behind the finding, as its test gave it.")


class RoundReferenceSerializer(serializers.Serializer):
    """The round a seat was dealt in, as the progressive ledger names it."""

    id = serializers.IntegerField(source="round_id",
                                  help_text="The round's id in this API (/rounds/{id}/).")
    table = serializers.CharField(source="table.code")
    round = serializers.CharField(source="sent_round_id", allow_null=True,
                                  help_text="The id the table sent.")
    dealt_at = serializers.DateTimeField()


class InformedSerializer(serializers.Serializer):
    best = serializers.CharField()
    values = serializers.DictField(child=serializers.FloatField(),
                                   help_text="Each option's value, in Antes; empty for a companion's cards on "
                                             "the flop, whose best is a rule's verdict, not a valuation.")
    shares = serializers.DictField(
        child=serializers.FloatField(), required=False,
        help_text="On the flop and the river, for a companion's cards only: per option, the share of the "
                  "pairs of cards the player could not see that, known to be the companion's, would have "
                  "made it best, each weighed by the companion's shown line (the chance an honest player's "
                  "choice of it is the informed one).",
    )


class SeenSerializer(serializers.Serializer):
    informed = serializers.ListField(
        child=serializers.BooleanField(), min_length=2, max_length=2,
        help_text="Whether the choice is what the dealer's first and second listed card, seen, made best.",
    )
    share = serializers.FloatField(help_text="The chance an honest player's choice is: the share of the cards "
                                             "no seat held and the board did not show that make it best.")


class DecisionSerializer(serializers.Serializer):
    street = serializers.CharField()
    chosen = serializers.CharField()
    best = serializers.CharField(help_text="The best option from what the player could see.")
    hand = serializers.CharField(help_text="The hand category the player held when deciding "
                                           "(his cards and the board he had seen).")
    ev_lost = serializers.FloatField(help_text="Antes given up against the best option.")
    values = serializers.DictField(child=serializers.FloatField(),
                                   help_text="Each option's value in Antes, from what the player could see.")
    informed = serializers.DictField(
        child=InformedSerializer(),
        help_text="The options valued again with knowledge no player may have, by knowledge "
                  f"({', '.join(DEALER_CARD_AT)}, and on the flop and the river {companion_knowledge('<player>')} "
                  "for each companion).",
    )
    seen = SeenSerializer(required=False, help_text="The choice against what a seen dealer card made best "
                                                    "(absent on a seat scored before every street was tested).")


class DealerErrorSerializer(serializers.Serializer):
    type = serializers.CharField()
    direction = serializers.CharField()
    bet = serializers.CharField()
    amount_for_player = MoneyField(max_digits=SUM_MONEY_DIGITS, help_text="In the seat's currency.")


class SeatScoreSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    round = RoundReferenceSerializer(source="*")
    gaming_day = serializers.DateField()
    seat = serializers.IntegerField()
    player = NoneIfBlankCharField(allow_null=True)
    dealer = NoneIfBlankCharField(allow_null=True)
    companions = serializers.ListField(child=serializers.CharField(),
                                       help_text="The other players at the table.")
    currency = serializers.CharField()
    ante = MoneyField(max_digits=SUM_MONEY_DIGITS)
    decision = serializers.CharField()
    scored = serializers.BooleanField(help_text="False: a street could not be valued.")
    ev_lost = serializers.DecimalField(
        **ANTES, help_text="Antes given up against the best options, all streets.")
    telling = serializers.IntegerField(help_text="Decisions some knowledge would have changed.")
    favourable_errors = serializers.IntegerField(help_text="Payout mismatches in the player's favour.")
    errors = DealerErrorSerializer(many=True)
    decisions = DecisionSerializer(many=True)


class PlayerFiguresSerializer(serializers.Serializer):
    currency = serializers.CharField()
    hands = serializers.IntegerField()
    scored_hands = serializers.IntegerField()
    handle = MoneyField(max_digits=SUM_MONEY_DIGITS, help_text="Ante, Blind and Play wagered.")
    win = MoneyField(max_digits=SUM_MONEY_DIGITS, help_text="The house's, on Ante, Blind and Play.")
    theoretical_optimal = serializers.DecimalField(**EXPECTED,
                                                   help_text="What the house expects from optimal play.")
    theoretical_actual = serializers.DecimalField(**EXPECTED,
                                                  help_text="What it expects from the way this player plays.")
    skill = serializers.DecimalField(**ANTES, help_text="Antes lost per scored hand; 0 is optimal play.")
    telling = serializers.IntegerField(help_text="Decisions some knowledge would have changed.")


class PlayerSerializer(serializers.Serializer):
    player = serializers.CharField()
    day_from = serializers.DateField(allow_null=True)
    day_to = serializers.DateField(allow_null=True)
    figures = PlayerFiguresSerializer(many=True,
                                      help_text="One entry per currency the player played in.")


class CoursePointSerializer(serializers.Serializer):
    dealt_at = serializers.DateTimeField()
    round = serializers.IntegerField(help_text="The round's id in this API (/rounds/{id}/).")
    seat = serializers.IntegerField()
    figure = serializers.FloatField(help_text="The test's figure (ln of its e-value) after this decision.")
    chose_informed = serializers.BooleanField()
    share = serializers.FloatField(help_text="The chance an honest player's choice is the informed one.")


VERDICTS = ("suspected", "not suspected", "not enough decisions to judge")


class CompanionSideSerializer(serializers.Serializer):
    steps = serializers.IntegerField(help_text="The companion's decisions about this player's cards that the test read.")
    informed = serializers.FloatField(help_text="At how many of them he chose what this player's cards made best.")
    expected = serializers.FloatField(help_text="How many an honest companion would have.")


class TestCourseSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=PROTECTION_CODES)
    knowledge = serializers.CharField(help_text=f"{SEEN_CARD} (either of the dealer's cards, every street) or "
                                                f"{companion_knowledge('<player>')} (the flop and the river).")
    dealer = serializers.CharField(allow_null=True, help_text="The dealer the test is split by, or null: all.")
    companion = serializers.CharField(allow_null=True)
    threshold = serializers.FloatField(help_text="The figure at which this test raises a finding.")
    figure = serializers.FloatField()
    peak = serializers.FloatField()
    verdict = serializers.ChoiceField(choices=VERDICTS)
    points = CoursePointSerializer(many=True)
    companion_side = CompanionSideSerializer(
        allow_null=True, help_text="A companion's test only (null otherwise): it reads the hands the two shared both "
                                   "ways, this player's choices about the companion's cards (points) and the "
                                   "companion's about his, counted here.")


class LeakTestSerializer(serializers.Serializer):
    player = serializers.CharField()
    day_to = serializers.DateField(allow_null=True)
    alpha = serializers.FloatField(help_text="The chance that an honest player is ever suspected by any test.")
    verdict = serializers.ChoiceField(choices=VERDICTS)
    tests = TestCourseSerializer(many=True)


# ---- what is asked ---------------------------------------------------------------------------


class DaysSerializer(serializers.Serializer):
    day_from = serializers.DateField(required=False, help_text="First gaming day, inclusive.")
    day_to = serializers.DateField(required=False, help_text="Last gaming day, inclusive.")

    def validate(self, attrs):
        first, last = attrs.get("day_from"), attrs.get("day_to")
        if first and last and last < first:
            raise serializers.ValidationError({"day_to": ["Must not be before day_from."]})
        return attrs


class LastDaySerializer(serializers.Serializer):
    day_to = serializers.DateField(required=False, help_text="Last gaming day, inclusive.")


def _seatable(player: str) -> bool:
    """Whether ``player`` is text a seat can hold: anything else is nobody, and is not asked of
    the database (which refuses a NUL outright)."""
    return 0 < len(player) <= PLAYER_MAX_LENGTH and "\x00" not in player


def _known(player: str) -> bool:
    """Whether some stored round has a seat of ``player``."""
    return Seat.objects.filter(player=player).exists()


PLAYER = OpenApiParameter("player", OpenApiTypes.STR, OpenApiParameter.PATH,
                          description="The player's id, as tables send it.")
DAY_FROM = OpenApiParameter("day_from", OpenApiTypes.DATE, description="First gaming day, inclusive.")
DAY_TO = OpenApiParameter("day_to", OpenApiTypes.DATE, description="Last gaming day, inclusive.")


# ---- views ----------------------------------------------------------------------------------


@extend_schema_view(get=extend_schema(tags=TAGS, operation_id="listProtectionFindings"))
@staff_pages(ProtectionFindingSummarySerializer)
class ProtectionFindingListView(ReplicaReads, generics.ListAPIView):
    """Game protection's findings, newest first, with the state auditors moved them to."""

    authentication_classes = AUTHENTICATION
    permission_classes = [IsStaffReader]
    serializer_class = ProtectionFindingSummarySerializer
    filterset_class = ProtectionFindingFilter
    pagination_class = NewestFirst
    queryset = ProtectionFinding.objects.all()


@extend_schema_view(get=extend_schema(tags=TAGS, operation_id="getProtectionFinding"))
@staff_item(ProtectionFindingSerializer, NO_FINDING)
class ProtectionFindingDetailView(ReplicaReads, generics.RetrieveAPIView):
    """One game-protection finding: what it is about, its evidence and its worked state."""

    authentication_classes = AUTHENTICATION
    permission_classes = [IsStaffReader]
    serializer_class = ProtectionFindingSerializer
    queryset = ProtectionFinding.objects.all()


@extend_schema_view(get=extend_schema(tags=TAGS, operation_id="listSeatScores"))
@staff_pages(SeatScoreSerializer)
class SeatScoreListView(ReplicaReads, generics.ListAPIView):
    """Scored seats, the newest dealt first: each decision's options, what was chosen, what it cost."""

    authentication_classes = AUTHENTICATION
    permission_classes = [IsStaffReader]
    serializer_class = SeatScoreSerializer
    filterset_class = SeatScoreFilter
    pagination_class = DealtAtCursor
    queryset = seat_score_list()


class PlayerView(APIView):
    authentication_classes = AUTHENTICATION
    permission_classes = [IsStaffReader]
    queryset = SeatScore.objects.none()  # IsStaffReader asks for view_seatscore

    @extend_schema(
        tags=TAGS, operation_id="getPlayer", parameters=[PLAYER, DAY_FROM, DAY_TO],
        responses=answers({200: PlayerSerializer, 400: refusal(BAD_DAYS), 404: refusal(NO_PLAYER)},
                          STAFF_ONLY, EVERY_REQUEST),
        summary="A player's figures",
        description=(
            "Per currency the player played in, over the gaming days asked for (all of them when "
            "none): hands, handle and the house's win on Ante, Blind and Play; what the house "
            "expects from optimal play and from the way this player plays; Antes lost per hand."
        ),
    )
    def get(self, request, player: str):
        asked = DaysSerializer(data=request.query_params)
        asked.is_valid(raise_exception=True)
        days = asked.validated_data
        if not _seatable(player):
            raise NotFound(NO_PLAYER)
        figures = player_figures(player=player, day_from=days.get("day_from"), day_to=days.get("day_to"))
        # A player with seats but none in the days asked is known, and has no figures there.
        if not figures and not _known(player):
            raise NotFound(NO_PLAYER)
        return Response(PlayerSerializer({
            "player": player, "day_from": days.get("day_from"), "day_to": days.get("day_to"),
            "figures": figures,
        }).data)


class PlayerLeakTestView(APIView):
    authentication_classes = AUTHENTICATION
    permission_classes = [IsStaffReader]
    queryset = SeatScore.objects.none()

    @extend_schema(
        tags=TAGS, operation_id="getPlayerLeakTest", parameters=[PLAYER, DAY_TO],
        responses=answers({
            200: LeakTestSerializer,
            400: refusal("day_to is not a date (YYYY-MM-DD); errors names it."),
            404: refusal(NO_PLAYER),
        }, STAFF_ONLY, EVERY_REQUEST),
        summary="The course of a player's leak test",
        description=(
            "Every leak test of the player (each dealer card over all his hands and per dealer, each "
            "companion's cards), over his whole history up to day_to: the figure after each decision "
            "it reads, oldest first, its threshold and what it says; a finding is raised where a "
            "figure reaches its threshold (docs/PROTECTION.md)."
        ),
    )
    def get(self, request, player: str):
        asked = LastDaySerializer(data=request.query_params)
        asked.is_valid(raise_exception=True)
        day_to = asked.validated_data.get("day_to")
        if not (_seatable(player) and _known(player)):
            raise NotFound(NO_PLAYER)
        course = player_leak_course(player=player, day_to=day_to)
        return Response(LeakTestSerializer({
            "player": player, "day_to": day_to, "alpha": protection_config().leak.alpha,
            "verdict": player_leak_verdict(course), "tests": course,
        }).data)
