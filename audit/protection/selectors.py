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
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.db.models import Count, DecimalField, F, Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from audit.models import ProtectionFinding, SeatScore
from audit.reconciliation.config import reconciliation_settings
from casino.work import UNRESOLVED
from rounds.models import Seat
from rounds.protection import leak
from rounds.protection.scoring import DEALER_CARD

from .config import protection_config
from .scores import decisions_from_json

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


def player_leak_course(*, player: str, day_to: date | None = None) -> dict[str, list[CoursePoint]]:
    """The leak test's figure after each telling decision, per knowledge, over the days the
    nightly test reads (``PROTECTION_HISTORY_DAYS`` back from ``day_to``)."""
    config = protection_config()
    # The nightly test's own window (PROTECTION_HISTORY_DAYS), ending with ``day_to`` or the last scored day.
    scores = SeatScore.objects.filter(player=player, scored=True)
    last = day_to or scores.order_by("-gaming_day").values_list("gaming_day", flat=True).first()
    start = last - timedelta(days=config.history_days - 1) if last else None
    rows = _days(scores, start, day_to).order_by(
        "dealt_at", "round_id", "seat"
    ).values_list("round_id", "seat", "dealt_at", "decisions")
    decisions, model = [], leak.ErrorModel(config.leak)
    for round_pk, seat, dealt_at, stored in rows.iterator(chunk_size=5000):
        for decision in decisions_from_json(stored):
            decisions.append(((round_pk, seat, dealt_at), decision))
            model.add(decision)
    course = {}
    for knowledge in (*DEALER_CARD, "other_seats"):
        trace = leak.run_test(decisions, knowledge, model, config.leak)
        course[knowledge] = [
            CoursePoint(s.key[2], s.key[0], s.key[1], s.figure, s.chose_informed) for s in trace.steps
        ]
    return course


def player_hands(*, player: str, limit: int = 50) -> QuerySet[SeatScore]:
    """The player's most recent scored seats, newest first."""
    return SeatScore.objects.filter(player=player).order_by("-dealt_at", "-round_id")[:limit]


def protection_findings(*, unresolved_only: bool = False) -> QuerySet[ProtectionFinding]:
    findings = ProtectionFinding.objects.all()
    return findings.filter(state__in=UNRESOLVED) if unresolved_only else findings


def players_seen(*, search: str = "", limit: int = 100) -> list[dict]:
    """Players with scored seats, the most hands first: id, hands, Antes lost per hand, open findings."""
    scores = SeatScore.objects.exclude(player="")
    if search:
        scores = scores.filter(player__icontains=search)
    open_findings = dict(
        ProtectionFinding.objects.filter(state__in=UNRESOLVED).exclude(player="")
        .values_list("player").annotate(n=Count("id")).values_list("player", "n")
    )
    rows = scores.values("player").annotate(
        hands=Count("id"), lost=Coalesce(Sum("ev_lost"), ZERO), told=Coalesce(Sum("telling"), 0),
        favourable=Count("id", filter=Q(favourable_errors__gt=0)),
    ).order_by("-hands", "player")[:limit]
    return [
        {**row, "skill": (row["lost"] / row["hands"]).quantize(FINE), "open_findings": open_findings.get(row["player"], 0)}
        for row in rows
    ]
