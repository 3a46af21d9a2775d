"""The day's suspicions raised: the leak test of every player who played, the sweetheart test of every dealer.

Both look back over ``PROTECTION_HISTORY_DAYS`` ending with the day, so a
cheat who works a little every night still adds up. A suspicion's key names
its subject and the round where its test crossed (the leak test) or the day
(the sweetheart test): scoring the same day again finds it and keeps it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Q

from audit.models import ProtectionFinding, SeatScore
from rounds.protection import fingerprints as fp
from rounds.protection import leak
from rounds.protection import scoring as sc
from rounds.protection.codes import ProtectionCode

from .config import protection_config
from .scores import PLACES, decisions_from_json

PLAYERS_AT_ONCE = 200
SWEETHEART = ProtectionCode.SUSPECTED_SWEETHEART_DEALING.value
EVIDENCE_STEPS = 40  # the telling decisions kept with a finding, up to where the test crossed


def day_findings_raise(*, day: date) -> dict[str, int]:
    """Raise the day's leak and sweetheart findings; how many of each code were new."""
    config = protection_config()
    start = day - timedelta(days=config.history_days - 1)
    raised: dict[str, int] = defaultdict(int)
    players = sorted(
        SeatScore.objects.filter(gaming_day=day).exclude(player="").values_list("player", flat=True).distinct()
    )
    for i in range(0, len(players), PLAYERS_AT_ONCE):
        seats = _played(players[i:i + PLAYERS_AT_ONCE], start, day)
        for suspicion in leak.leak_suspicions(seats, config.leak):
            raised[suspicion.code] += _raise_leak(suspicion, config.leak)
    for suspicion in _sweethearts(start, day, config.sweetheart):
        raised[SWEETHEART] += _raise_sweetheart(suspicion, start, day)
    return {code: count for code, count in raised.items() if count}


def _played(players: list[str], start: date, day: date) -> list[leak.PlayedSeat]:
    rows = (
        SeatScore.objects.filter(player__in=players, gaming_day__range=(start, day), scored=True)
        .order_by("player", "dealt_at", "round_id", "seat")
        .values_list("round_id", "seat", "gaming_day", "player", "dealer", "companions", "decisions")
    )
    return [
        leak.PlayedSeat(
            (round_pk, seat, gaming_day.isoformat()), player, dealer or None, tuple(companions),
            sc.SeatScore(decisions_from_json(decisions), True),
        )
        for round_pk, seat, gaming_day, player, dealer, companions, decisions in rows.iterator(chunk_size=5000)
    ]


def _step_json(step: leak.Step) -> dict:
    round_pk, seat, gaming_day = step.key
    decision = step.decision
    return {
        "round": round_pk, "seat": seat, "gaming_day": gaming_day, "street": decision.street,
        "chosen": decision.chosen, "best": decision.best, "informed": step.informed_option,
        "values": decision.values, "informed_values": decision.informed[step.knowledge].values,
        "chose_informed": step.chose_informed, "error_rate": round(step.error_rate, 4),
        "llr": round(step.llr, 4), "figure": round(step.figure, 4),
    }


def _raise_leak(suspicion: leak.LeakSuspicion, settings: leak.LeakSettings) -> int:
    trace = suspicion.trace
    crossed = trace.steps[trace.crossed_at]
    round_pk, seat, crossed_day = crossed.key
    subject = f"player={suspicion.player}"
    if suspicion.dealer:
        subject += f" dealer={suspicion.dealer}"
    if suspicion.companion:
        subject += f" with={suspicion.companion}"
    kept = trace.steps[max(0, trace.crossed_at + 1 - EVIDENCE_STEPS): trace.crossed_at + 1]
    informed = sum(1 for s in trace.steps[: trace.crossed_at + 1] if s.chose_informed)
    what = sc.KNOWLEDGE_WORDS[suspicion.knowledge]
    with transaction.atomic():
        _, created = ProtectionFinding.objects.get_or_create(
            code=suspicion.code,
            key=f"{subject} knowledge={suspicion.knowledge} crossed_at={round_pk}/{seat}",
            defaults={
                "player": suspicion.player, "dealer": suspicion.dealer or "",
                "companion": suspicion.companion or "",
                "day_from": date.fromisoformat(trace.steps[0].key[2]), "day_to": date.fromisoformat(crossed_day),
                "figure": Decimal(repr(crossed.figure)).quantize(PLACES),
                "threshold": Decimal(repr(settings.threshold)).quantize(PLACES),
                "evidence": {
                    "knowledge": suspicion.knowledge, "telling": trace.crossed_at + 1,
                    "chose_informed": informed, "share": settings.share, "steps": [_step_json(s) for s in kept],
                },
                "detail": (
                    f"{suspicion.player} chose the option that {what} made best at {informed} of "
                    f"{trace.crossed_at + 1} decisions where it changed the best option"
                    + (f", dealt by {suspicion.dealer}" if suspicion.dealer else "")
                    + (f", sitting with {suspicion.companion}" if suspicion.companion else "")
                    + f"; the test's figure reached {crossed.figure:.2f} (threshold {settings.threshold:.2f})"
                ),
            },
        )
    return int(created)


def _sweethearts(start: date, day: date, settings: fp.SweetheartSettings) -> list[fp.SweetheartSuspicion]:
    """The sweetheart test over the window, its denominators counted in the database."""
    window = SeatScore.objects.filter(gaming_day__range=(start, day)).exclude(dealer="")
    dealers = set(window.filter(gaming_day=day).values_list("dealer", flat=True).distinct())
    if not dealers:
        return []
    window = window.filter(dealer__in=dealers)
    favourable = Count("id", filter=Q(favourable_errors__gt=0))
    erring = Count("id", filter=~Q(errors=[]))
    by_dealer: dict[str, fp.Tallies] = defaultdict(dict)
    by_pair: dict[tuple[str, str], fp.Tallies] = defaultdict(dict)
    for dealer, currency, n, k, e in window.values_list("dealer", "currency").annotate(
        n=Count("id"), k=favourable, e=erring,
    ).values_list("dealer", "currency", "n", "k", "e"):
        by_dealer[dealer][currency] = fp.Tally(seat_rounds=n, erring=e, favourable=k)
    for dealer, player, currency, n, k, e in window.exclude(player="").values_list(
        "dealer", "player", "currency"
    ).annotate(n=Count("id"), k=favourable, e=erring).values_list("dealer", "player", "currency", "n", "k", "e"):
        if k >= settings.min_favourable:
            by_pair[dealer, player][currency] = fp.Tally(seat_rounds=n, erring=e, favourable=k)
    # The error lines of the pairs that can make a case, from their few erring seats.
    for dealer, player, currency, errors in window.filter(favourable_errors__gt=0).values_list(
        "dealer", "player", "currency", "errors"
    ):
        tally = by_pair.get((dealer, player), {}).get(currency)
        if tally is None:
            continue
        for error in errors:
            key = (fp.ErrorType(error["type"]), fp.Direction(error["direction"]))
            tally.counts[key] += 1
            tally.amounts[key] = tally.amounts.get(key, Decimal(0)) + Decimal(error["amount_for_player"])
    return fp.suspected_sweetheart_dealing(fp.ErrorTallies(dict(by_dealer), dict(by_pair)), settings)


def _surprise(p_value: float) -> Decimal:
    """−log10 of a p-value: the larger, the less chance explains it (a figure like the others)."""
    return Decimal(repr(-math.log10(max(p_value, 1e-300)))).quantize(PLACES)


def _raise_sweetheart(suspicion: fp.SweetheartSuspicion, start: date, day: date) -> int:
    lines = [
        {"currency": line.currency, "type": line.type.value, "direction": line.direction.value,
         "count": line.count, "amount_for_player": str(line.amount_for_player)}
        for line in suspicion.errors
    ]
    with transaction.atomic():
        _, created = ProtectionFinding.objects.get_or_create(
            code=SWEETHEART,
            key=f"dealer={suspicion.dealer} player={suspicion.player} day={day}",
            defaults={
                "dealer": suspicion.dealer, "player": suspicion.player, "day_from": start, "day_to": day,
                "figure": _surprise(float(suspicion.p_value)),
                "threshold": _surprise(suspicion.threshold),
                "evidence": {
                    "pair_seat_rounds": suspicion.pair_seat_rounds, "pair_favourable": suspicion.pair_favourable,
                    "dealer_seat_rounds": suspicion.dealer_seat_rounds,
                    "dealer_favourable": suspicion.dealer_favourable,
                    "p_value": f"{float(suspicion.p_value):.3e}", "errors": lines,
                },
                "detail": (
                    f"{suspicion.pair_favourable} of {suspicion.player}'s {suspicion.pair_seat_rounds} seat-rounds "
                    f"dealt by {suspicion.dealer} had an error in the player's favour, against "
                    f"{suspicion.dealer_favourable} of the dealer's {suspicion.dealer_seat_rounds} in all "
                    f"from {start} to {day}: p = {float(suspicion.p_value):.2e} by chance"
                ),
            },
        )
    return int(created)
