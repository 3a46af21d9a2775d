"""What game protection shows: a player's figures and the leak test's course, findings to work.

The base game only (Ante, Blind, Play): Trips and the Progressive do not
depend on any decision, so they neither cost nor show skill. Per currency,
never added across currencies:

- ``win``: what the house won on the player's seats (from the stored settlement);
- ``theoretical_optimal``: what it would expect from optimal play, the Ante
  times the house edge the reconciliation uses (``BASE_GAME_HOUSE_EDGE``);
- ``theoretical_actual``: that plus what the player's own decisions gave up,
  the Ante times the Antes lost (``SeatScore.ev_lost``): what it expects
  from the way this player plays;
- ``skill``: Antes lost per hand, 0 for optimal play.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from django.db.models import Count, DecimalField, F, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from audit.models import ProtectionFinding, SeatScore
from audit.reconciliation.config import reconciliation_settings
from game.protection import leak
from infra.work import UNRESOLVED
from rounds.models import Seat

from .config import protection_config
from .scores import partners_from_json, score_from_json

ZERO = Decimal(0)
FINE = Decimal("0.000001")
_MONEY = DecimalField(max_digits=30, decimal_places=8)


@dataclass(frozen=True, slots=True)
class PlayerFigures:
    currency: str
    hands: int
    scored_hands: int
    handle: Decimal  # Ante + Blind + Play wagered
    win: Decimal  # the house's, on Ante, Blind and Play
    theoretical_optimal: Decimal
    theoretical_actual: Decimal
    skill: Decimal  # Antes lost per scored hand
    telling: int  # decisions some knowledge would have changed


def _days(queryset: QuerySet, day_from: date | None, day_to: date | None) -> QuerySet:
    if day_from:
        queryset = queryset.filter(gaming_day__gte=day_from)
    if day_to:
        queryset = queryset.filter(gaming_day__lte=day_to)
    return queryset


def player_figures(*, player: str, day_from: date | None = None, day_to: date | None = None) -> list[PlayerFigures]:
    """The player's figures per currency over the days (all of them when not given)."""
    edge = reconciliation_settings().base_edge
    seats = _days(Seat.objects.filter(player=player, round__void=False, round__voided_at=None), day_from, day_to)
    played = {
        row["round__config_version__currency"]: row
        for row in seats.values("round__config_version__currency").annotate(
            hands=Count("id"),
            handle=Coalesce(Sum(F("ante") + F("blind") + F("play")), ZERO),
            result=Coalesce(Sum(F("settled_ante") + F("settled_blind") + F("settled_play")), ZERO),
        )
    }
    scored = {
        row["currency"]: row
        for row in _days(SeatScore.objects.filter(player=player, scored=True), day_from, day_to)
        .values("currency").annotate(
            hands=Count("id"),
            antes=Coalesce(Sum("ante"), ZERO),
            lost=Coalesce(Sum(F("ante") * F("ev_lost"), output_field=_MONEY), ZERO),
            antes_lost=Coalesce(Sum("ev_lost"), ZERO),
            told=Coalesce(Sum("telling"), 0),
        )
    }
    figures = []
    for currency in sorted(set(played) | set(scored)):
        p = played.get(currency, {"hands": 0, "handle": ZERO, "result": ZERO})
        s = scored.get(currency, {"hands": 0, "antes": ZERO, "lost": ZERO, "antes_lost": ZERO, "told": 0})
        optimal = (s["antes"] * edge).quantize(FINE)
        figures.append(PlayerFigures(
            currency=currency, hands=p["hands"], scored_hands=s["hands"], handle=p["handle"],
            win=-p["result"], theoretical_optimal=optimal,
            theoretical_actual=(optimal + s["lost"]).quantize(FINE),
            skill=(s["antes_lost"] / s["hands"]).quantize(FINE) if s["hands"] else ZERO,
            telling=s["told"],
        ))
    return figures


@dataclass(frozen=True, slots=True)
class CoursePoint:
    dealt_at: datetime
    round: int
    seat: int
    figure: float
    chose_informed: bool
    share: float  # the chance an honest player's choice is the informed one


# What a test's course says of the player, in the words the pages and the API use.
SUSPECTED, NOT_SUSPECTED, NOT_ENOUGH = "suspected", "not suspected", "not enough decisions to judge"


@dataclass(frozen=True, slots=True)
class CompanionSide:
    """A companion's choices about the player's cards, which a companion's test reads with his own."""

    steps: int
    informed: float
    expected: float


@dataclass(frozen=True, slots=True)
class TestCourse:
    """One of the player's leak tests (``leak.player_tests``) over his history, decision by decision."""

    code: str
    knowledge: str
    dealer: str | None
    companion: str | None
    threshold: float
    figure: float
    peak: float
    verdict: str
    informed: float  # decisions at which he chose the informed option (a dealer card's: the share of the two)
    expected: float  # how many an honest player would have
    points: list[CoursePoint]
    companion_side: CompanionSide | None = None  # a companion's test only


def player_leak_course(*, player: str, day_to: date | None = None) -> list[TestCourse]:
    """Every leak test of the player over his whole scored history up to ``day_to``, as the nightly
    test reads it: the figure after each decision it reads, and what it says."""
    config = protection_config()
    rows = _days(SeatScore.objects.filter(player=player), None, day_to).order_by(
        "dealt_at", "round_id", "seat"
    ).values_list("round_id", "seat", "dealt_at", "gaming_day", "dealer", "companions", "decisions", "seen",
                  "partners")
    seats = [
        leak.PlayedSeat(
            (round_pk, seat, dealt_at), player, dealer or None, tuple(companions),
            score_from_json(stored, seen), gaming_day, partners_from_json(partners),
        )
        for round_pk, seat, dealt_at, gaming_day, dealer, companions, stored, seen, partners
        in rows.iterator(chunk_size=5000)
    ]
    courses = []
    for trace in leak.leak_traces(seats, config.leak).get(player, []):
        test = trace.test
        verdict = SUSPECTED if trace.crossed else NOT_ENOUGH if len(trace.steps) < config.leak.enough else NOT_SUSPECTED
        courses.append(TestCourse(
            test.code, test.knowledge, test.dealer, test.companion, trace.threshold, trace.figure, trace.peak,
            verdict, trace.informed, trace.expected,
            [CoursePoint(s.key[2], s.key[0], s.key[1], s.figure, s.chose_informed, s.share) for s in trace.steps],
            CompanionSide(trace.state.partner_steps, trace.state.partner_informed, trace.state.partner_expected)
            if test.companion else None,
        ))
    return courses


def player_leak_verdict(courses: list[TestCourse]) -> str:
    """What the player's tests say together: suspected by any; else not enough decisions to judge
    while his tests of the dealer's cards over all his hands have too few; else not suspected."""
    if any(c.verdict == SUSPECTED for c in courses):
        return SUSPECTED
    overall = [c for c in courses if c.code == leak.HOLE_CARDING and c.dealer is None]
    if not overall or any(c.verdict == NOT_ENOUGH for c in overall):
        return NOT_ENOUGH
    return NOT_SUSPECTED


def player_hands(*, player: str, limit: int = 50) -> QuerySet[SeatScore]:
    """The player's most recent scored seats, newest first."""
    return SeatScore.objects.filter(player=player).order_by("-dealt_at", "-round_id")[:limit]


def protection_findings(*, unresolved_only: bool = False) -> QuerySet[ProtectionFinding]:
    findings = ProtectionFinding.objects.all()
    return findings.filter(state__in=UNRESOLVED) if unresolved_only else findings


def players_ranked(*, search: str = "") -> QuerySet:
    """Players with scored seats, the most hands first (one row each: id, hands, Antes lost,
    telling decisions, hands with an error in their favour): what a page of players is cut from."""
    scores = SeatScore.objects.exclude(player="")
    if search:
        scores = scores.filter(player__icontains=search)
    return scores.values("player").annotate(
        hands=Count("id"), lost=Coalesce(Sum("ev_lost"), ZERO), told=Coalesce(Sum("telling"), 0),
        favourable=Count("id", filter=Q(favourable_errors__gt=0)),
    ).order_by("-hands", "player")


def players_seen(rows) -> list[dict]:
    """``players_ranked`` rows (a page of them) with Antes lost per hand and open findings."""
    rows = list(rows)
    open_findings = dict(
        ProtectionFinding.objects.filter(state__in=UNRESOLVED, player__in=[row["player"] for row in rows])
        .values_list("player").annotate(n=Count("id")).values_list("player", "n")
    )
    return [
        {**row, "skill": (row["lost"] / row["hands"]).quantize(FINE),
         "open_findings": open_findings.get(row["player"], 0)}
        for row in rows
    ]
