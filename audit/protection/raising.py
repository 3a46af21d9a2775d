"""The day's suspicions raised: the leak test of every player who played, the sweetheart test of every dealer.

The leak test's e-values are martingales over each player's whole scored
history, so looking at them again every night spends no more of the error
budget (``game.protection.leak``). A night reads only its own day: each test
goes on from where the night before left it (``leak_state``). A suspicion
stands (``standing``): one finding per player for hole-carding, its tests
(the dealer's cards over all his hands and per dealer) as its evidence, and
one per pair of players for collusion, naming both. The sweetheart test
looks back ``PROTECTION_HISTORY_DAYS`` ending with the day, one finding per
dealer and player.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal

from django.db.models import Count, Max, Min, Q

from audit.models import ProtectionFinding, SeatScore
from game.protection import fingerprints as fp
from game.protection import leak
from game.protection import scoring as sc
from game.protection.codes import ProtectionCode
from infra.locks import one_after_another
from rounds.models import Round

from . import leak_state
from .config import protection_config
from .scores import partners_from_json, score_from_json
from .standing import standing_raise

PLAYERS_AT_ONCE = 200
SWEETHEART = ProtectionCode.SUSPECTED_SWEETHEART_DEALING.value
EVIDENCE_STEPS = 40  # the test's last decisions kept with a finding


def day_findings_raise(*, day: date) -> dict[str, int]:
    """Raise the day's leak and sweetheart findings (or bring standing ones up to the day);
    how many of each code were new."""
    config = protection_config()
    start = day - timedelta(days=config.history_days - 1)
    raised: dict[str, int] = defaultdict(int)
    pairs: dict[tuple[str, str], list[leak.Trace]] = defaultdict(list)
    with one_after_another(leak_state.LOCK):
        for earlier in leak_state.days_to_read_first(day, config.leak.shares):
            for _ in _day_tested(earlier, config.leak):
                pass
        for player, found in _day_tested(day, config.leak):
            crossed = [t for t in found if t.crossed]
            hole_carding = [t for t in crossed if t.test.code == leak.HOLE_CARDING]
            if hole_carding:
                raised[leak.HOLE_CARDING] += _raise_hole_carding(player, hole_carding, found, day, config.leak)
            for trace in crossed:
                if trace.test.code == leak.COLLUSION:
                    pairs[tuple(sorted((player, trace.test.companion or "")))].append(trace)
    for pair, crossed in sorted(pairs.items()):
        raised[leak.COLLUSION] += _raise_collusion(pair, crossed, day, config.leak)
    for suspicion in _sweethearts(start, day, config.sweetheart):
        raised[SWEETHEART] += _raise_sweetheart(suspicion, start, day)
    return {code: count for code, count in raised.items() if count}


def _day_tested(day: date, settings: leak.LeakSettings) -> Iterator[tuple[str, list[leak.Trace]]]:
    """Every test of every player who played ``day``, read on from where the night before left it,
    its new state written; the day kept once every player's is."""
    players = sorted(
        SeatScore.objects.filter(gaming_day=day).exclude(player="").values_list("player", flat=True).distinct()
    )
    dealt = _dealt_within(day)
    for i in range(0, len(players), PLAYERS_AT_ONCE):
        seats = _played(players[i:i + PLAYERS_AT_ONCE], day, dealt)
        held = leak_state.states_before(day, seats, settings.shares)
        by_player: dict[str, list[leak.PlayedSeat]] = defaultdict(list)
        for seat in seats:
            by_player[seat.player].append(seat)
        ran = {player: leak.player_run(player, played, settings, held.players.get(player))
               for player, played in by_player.items()}
        leak_state.states_write(day, held, ((player, after) for player, (_, after) in ran.items()))
        for player, (traces, _) in ran.items():
            yield player, traces
    leak_state.day_kept(day, settings.shares)


def _played(players: list[str], day: date, dealt: dict) -> list[leak.PlayedSeat]:
    """The players' scored seats of ``day``, in the order dealt (a seat whose preflop could not be
    valued too: the test reads the river)."""
    rows = (
        SeatScore.objects.filter(player__in=players, gaming_day=day, **dealt)
        .order_by("player", "dealt_at", "round_id", "seat")
        .values_list("round_id", "seat", "gaming_day", "player", "dealer", "companions", "decisions", "seen",
                     "partners")
    )
    return [
        leak.PlayedSeat(
            (round_pk, seat, gaming_day.isoformat()), player, dealer or None, tuple(companions),
            score_from_json(decisions, seen), gaming_day, partners_from_json(partners),
        )
        for round_pk, seat, gaming_day, player, dealer, companions, decisions, seen, partners
        in rows.iterator(chunk_size=5000)
    ]


def _dealt_within(day: date) -> dict:
    """When the day's seats were dealt, so that a player's seats are found in his index by time,
    not by reading his every day's."""
    span = SeatScore.objects.filter(gaming_day=day).aggregate(first=Min("dealt_at"), last=Max("dealt_at"))
    return {"dealt_at__range": (span["first"], span["last"])} if span["first"] else {}


def _round_names(keys) -> dict[int, tuple[str, str]]:
    """The table's code and its own round id of each seat-round's round (keys as ``_played`` makes them)."""
    pks = {key[0] for key in keys}
    return {pk: (table, round_id) for pk, table, round_id in
            Round.objects.filter(pk__in=pks).values_list("pk", "table__code", "round_id")}


def _step_json(step: leak.Step, names: dict[int, tuple[str, str]]) -> dict:
    round_pk, seat, gaming_day = step.key
    table, round_id = names.get(round_pk, ("", ""))
    decision = step.decision
    return {
        "round": round_pk, "table": table, "round_id": round_id, "seat": seat, "gaming_day": gaming_day,
        "street": decision.street, "chosen": decision.chosen, "best": decision.best,
        "informed": step.informed_option, "values": decision.values,
        "informed_values": decision.informed[step.knowledge].values if step.knowledge in decision.informed else {},
        "chose_informed": step.chose_informed, "agreed": step.agreed, "part": step.part,
        "share": round(step.share, 4), "figure": round(step.figure, 4),
    }


def _test_json(trace: leak.Trace, names: dict[int, tuple[str, str]]) -> dict:
    test = trace.test
    crossed = None
    if trace.crossing is not None:
        table, round_id = names.get(trace.crossing.key[0], ("", ""))
        crossed = {"step": trace.crossing.step, "gaming_day": trace.crossing.key[2], "table": table,
                   "round_id": round_id}
    return {
        "player": test.player, "knowledge": test.knowledge, "dealer": test.dealer, "companion": test.companion,
        "steps": trace.step_count, "chose_informed": round(trace.informed, 1),
        "expected_informed": round(trace.expected, 2),
        "figure": round(trace.figure, 4), "peak": round(trace.peak, 4), "threshold": round(trace.threshold, 4),
        "crossed": crossed,
        "parts": {p: {"steps": n, "figure": round(f, 4)} for p, (n, f) in trace.parts.items()},
        **({"partner": {"steps": trace.state.partner_steps, "chose_informed": round(trace.state.partner_informed, 1),
                        "expected_informed": round(trace.state.partner_expected, 2)}} if test.companion else {}),
    }


def _margin(trace: leak.Trace) -> float:
    return trace.peak - trace.threshold


def _evidence(strongest: leak.Trace, tests: list[leak.Trace], settings: leak.LeakSettings,
              code: str, key: str, day: date) -> dict:
    """What a leak finding keeps: every test of the suspicion, and the strongest test's last decisions
    (a night reads only its own: those the finding kept from the nights before, of the same test, come first)."""
    names = _round_names([*(s.key for s in strongest.steps[-EVIDENCE_STEPS:]),
                          *(t.crossing.key for t in tests if t.crossing is not None)])
    steps = [_step_json(s, names) for s in strongest.steps[-EVIDENCE_STEPS:]]
    test = list(leak.key_of(strongest.test))
    before = ProtectionFinding.objects.filter(code=code, key=key).values_list("evidence", flat=True).first()
    if before and before.get("test") == test and len(steps) < EVIDENCE_STEPS:
        earlier = [s for s in before.get("steps", []) if s["gaming_day"] < day.isoformat()]
        steps = (earlier + steps)[-EVIDENCE_STEPS:]
    return {
        "alpha": settings.alpha, "shares": list(settings.shares), "knowledge": strongest.test.knowledge,
        "test": test, "tests": [_test_json(t, names) for t in tests], "steps": steps,
    }


def _detail(trace: leak.Trace) -> str:
    """What a leak finding says: the choices against an honest player's, and the figure."""
    test, state = trace.test, trace.state
    partner = (
        f"; {test.companion} chose the option that {test.player}'s cards made best at "
        f"{state.partner_informed:g} of {state.partner_steps} decisions where they could have, against "
        f"{state.partner_expected:.1f} expected (the test reads the two together)"
    ) if test.companion else ""
    return (
        f"{test.player} chose the option that {sc.knowledge_words(test.knowledge)} made best at "
        f"{trace.informed:g} of {trace.step_count} decisions where it could have, against "
        f"{trace.expected:.1f} expected of an honest player"
        + (f", dealt by {test.dealer}" if test.dealer else "")
        + partner
        + f"; the test's figure reached {trace.peak:.2f} (threshold {trace.threshold:.2f}), {trace.figure:.2f} now"
    )


def _raise_hole_carding(
    player: str, crossed: list[leak.Trace], every: list[leak.Trace], day: date, settings: leak.LeakSettings,
) -> int:
    strongest = max(crossed, key=_margin)
    tests = [t for t in every if t.test.code == leak.HOLE_CARDING and t.step_count]
    key = f"player={player}"
    return int(standing_raise(
        code=leak.HOLE_CARDING, key=key, day=day,
        figure=strongest.peak, now=strongest.figure, threshold=strongest.threshold,
        evidence=_evidence(strongest, tests, settings, leak.HOLE_CARDING, key, day), detail=_detail(strongest),
        player=player, dealer=strongest.test.dealer or "", day_from=strongest.first_day,
    ))


def _raise_collusion(
    pair: tuple[str, str], crossed: list[leak.Trace], day: date, settings: leak.LeakSettings,
) -> int:
    """One finding for the pair, whichever of the two (or both) chose as if seeing the other's cards."""
    trace = max(crossed, key=_margin)
    player, companion = trace.test.player, trace.test.companion or ""
    also = f"; {companion}'s own test crossed too" if len(crossed) > 1 else ""
    key = f"pair={pair[0]} + {pair[1]}"
    return int(standing_raise(
        code=leak.COLLUSION, key=key, day=day,
        figure=trace.peak, now=trace.figure, threshold=trace.threshold,
        evidence=_evidence(trace, crossed, settings, leak.COLLUSION, key, day), detail=_detail(trace) + also,
        player=player, companion=companion, day_from=min(t.first_day for t in crossed),
    ))


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


def _surprise(p_value: float) -> float:
    """−log10 of a p-value: the larger, the less chance explains it (a figure like the others)."""
    return -math.log10(max(p_value, 1e-300))


def _raise_sweetheart(suspicion: fp.SweetheartSuspicion, start: date, day: date) -> int:
    lines = [
        {"currency": line.currency, "type": line.type.value, "direction": line.direction.value,
         "count": line.count, "amount_for_player": str(line.amount_for_player)}
        for line in suspicion.errors
    ]
    # The window as the data has it: from the pair's first seat in it, not from before any data.
    start = SeatScore.objects.filter(
        dealer=suspicion.dealer, player=suspicion.player, gaming_day__range=(start, day),
    ).aggregate(first=Min("gaming_day"))["first"] or start
    return int(standing_raise(
        code=SWEETHEART, key=f"dealer={suspicion.dealer} player={suspicion.player}", day=day,
        figure=_surprise(float(suspicion.p_value)), threshold=_surprise(suspicion.threshold),
        evidence={
            "pair_seat_rounds": suspicion.pair_seat_rounds, "pair_favourable": suspicion.pair_favourable,
            "dealer_seat_rounds": suspicion.dealer_seat_rounds,
            "dealer_favourable": suspicion.dealer_favourable,
            "p_value": f"{float(suspicion.p_value):.3e}", "window": [start.isoformat(), day.isoformat()],
            "errors": lines,
        },
        detail=(
            f"{suspicion.pair_favourable} of {suspicion.player}'s {suspicion.pair_seat_rounds} seat-rounds "
            f"dealt by {suspicion.dealer} had an error in the player's favour, against "
            f"{suspicion.dealer_favourable} of the dealer's {suspicion.dealer_seat_rounds} in all "
            f"from {start} to {day}: p = {float(suspicion.p_value):.2e} by chance"
        ),
        dealer=suspicion.dealer, player=suspicion.player, day_from=start,
    ))
