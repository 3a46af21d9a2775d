"""A table's gaming day scored: each seat's decisions, its dealer errors, the table's pay lines.

Rounds are read as the reconciliation reads them (``stored_rounds``) and
judged again exactly as when stored (``reverify.judge_stored``): the verdict
gives the payout mismatches to fingerprint and the paid lines to test the
pay table with. A round already scored is not scored again, so a rerun only
adds what is missing; a round voided later, or one whose cards cannot be
trusted (``scoring.score_round``), gets no scores. The table's day of lines
(every judged round's) weighs each companion's possible cards in the
collusion test's shares (``game.protection.lines``): a round scored on a
rerun is weighed by the day as it then stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.conf import settings

from audit.models import LineCounts, SeatScore
from audit.reconciliation.reverify import cached, judge_stored
from audit.reconciliation.selectors import stored_rounds
from game.evaluator import CATEGORIES, CATEGORY_INDEX
from game.protection import conformance, fingerprints, leak, scoring
from game.protection.codes import ProtectionCode
from game.protection.flop_table import shipped_table as shipped_flop_table
from game.protection.lines import LineModel
from game.protection.preflop import shipped_table
from game.protection.seen import SeenVerdict
from game.protection.streets import Street
from game.protection.values import PayTable
from progressive.models import PoolVersion
from rounds.models import Table, TableConfigVersion

from .config import protection_config
from .standing import standing_raise

BATCH = 2000  # seats written per INSERT
PLACES = Decimal("0.000001")


def decisions_json(score: scoring.SeatScore) -> list[dict]:
    """A seat's decisions as ``SeatScore.decisions`` keeps them (values to six places)."""
    return [
        {
            "street": d.street, "chosen": d.chosen, "best": d.best, "ev_lost": round(d.ev_lost, 6),
            "hand": CATEGORIES[d.hand],
            "values": {o: round(x, 6) for o, x in d.values.items()},
            **({"seen": d.seen.as_json()} if d.seen is not None else {}),
            "informed": {
                k: {
                    "best": i.best, "values": {o: round(x, 6) for o, x in i.values.items()},
                    **({"shares": i.shares} if i.shares is not None else {}),
                }
                for k, i in d.informed.items()
            },
        }
        for d in score.decisions
    ]


def decisions_from_json(stored: list[dict]) -> tuple[scoring.DecisionScore, ...]:
    return tuple(
        scoring.DecisionScore(
            d["street"], d["chosen"], d["values"],
            {k: scoring.Informed(i["values"], i["best"], i.get("shares")) for k, i in d["informed"].items()},
            CATEGORY_INDEX[d["hand"]], SeenVerdict.from_json(d.get("seen")),
        )
        for d in stored
    )


def partners_json(partners: dict[str, leak.PartnerSteps]) -> dict[str, list[list]]:
    """A seat's companions' steps about its cards as ``SeatScore.partners`` keeps them."""
    return {name: [[chose, share, street] for chose, share, street in steps] for name, steps in partners.items()}


def partners_from_json(stored: dict[str, list[list]]) -> dict[str, leak.PartnerSteps]:
    """(Seats scored before the flop was tested kept river steps only, without their street.)"""
    return {name: tuple((bool(step[0]), step[1], step[2] if len(step) > 2 else Street.RIVER.value) for step in steps)
            for name, steps in stored.items()}


def score_from_json(decisions: list[dict], seen: dict) -> scoring.SeatScore:
    """A stored seat's score as the leak test reads it (a seat scored before the hole-carding test
    read every street has no verdicts, and gives that test no steps)."""
    return scoring.SeatScore(decisions_from_json(decisions), True, SeenVerdict.from_json(seen))


def _fingerprint_json(found: tuple[fingerprints.Fingerprint, ...]) -> list[dict]:
    return [
        {"type": f.type.value, "direction": f.direction.value, "bet": f.bet,
         "amount_for_player": str(f.amount_for_player)}
        for f in found
    ]


@dataclass(frozen=True, slots=True)
class TableDayScore:
    rounds: int  # rounds read
    seats_scored: int  # seats newly scored
    pay_table_findings: int


def table_day_score(*, table_id: int, day: date) -> TableDayScore:
    """Score every seat of the table's day not scored yet, and test its pay lines over the window.

    The pay lines are tested on the day's winning lines and those kept with the
    table's scored seats of the window before it (``SeatScore.pays``), so a
    quiet table adds up; a payout the table's own pay line explains is not kept
    as the dealer's error (the pay-table finding says it, once).
    """
    table = Table.objects.get(pk=table_id)
    config = protection_config()
    preflop = shipped_table()
    flops = shipped_flop_table()
    table_rules = cached(lambda pk: TableConfigVersion.objects.get(pk=pk).rules())
    pool_rules = cached(lambda pk: PoolVersion.objects.select_related("pool").get(pk=pk).rules())
    done = set(
        SeatScore.objects.filter(table_id=table_id, gaming_day=day).values_list("round_id", flat=True)
    )
    pending: list[tuple[SeatScore, tuple[fingerprints.Fingerprint, ...], list[conformance.PayObservation]]] = []
    observations: list[conformance.PayObservation] = []
    rounds = 0
    judged = []
    for stored in stored_rounds(table_id=table_id, day_from=day, day_to=day):
        rounds += 1
        if stored.voided_later:
            continue
        rules = table_rules(stored.config_version_id)
        pool = pool_rules(stored.pool_version_id) if stored.pool_version_id else None
        try:
            record, verdict = judge_stored(stored, rules, pool)
        except Exception:  # reconciliation reports a record the engine cannot read as drift
            continue
        judged.append((stored, rules, record, verdict))
    # The table's lines, the day's every round's and its days' before, weigh each companion's possible
    # cards by his line (made only when a round is left to score: a rerun of a scored day needs none).
    lines = table_lines(table_id, day, [seat for _, _, record, _ in judged for seat in scoring.shown_seats(record)]
                        ) if any(stored.pk not in done for stored, _, _, _ in judged) else None
    for stored, rules, record, verdict in judged:
        paid = conformance.pay_observations(table.code, record, verdict, rules)
        observations += paid
        if stored.pk in done:
            continue
        scores = scoring.score_round(record, PayTable.of(rules), preflop, flops, lines)
        errors = fingerprints.fingerprint_round(record, verdict, rules)
        players = {s.seat: s.player or "" for s in record.seats}
        partners = leak.partner_steps(scores, players)
        dealt_at = datetime.fromisoformat(stored.record["dealt_at"])
        for seat in record.seats:
            score = scores.get(seat.seat)
            if score is None:
                continue
            seat_paid = [o for o in paid if o.seat == seat.seat]
            pending.append((SeatScore(
                round_id=stored.pk, gaming_day=day, table_id=table_id, dealt_at=dealt_at,
                seat=seat.seat, player=players[seat.seat], dealer=stored.record.get("dealer") or "",
                companions=sorted(p for n, p in players.items() if n != seat.seat and p),
                currency=rules.currency, ante=seat.ante, decision=seat.decision, scored=score.scored,
                ev_lost=Decimal(repr(max(score.ev_lost, 0.0))).quantize(PLACES),
                telling=sum(1 for d in score.decisions if any(d.telling(k) for k in d.informed)),
                decisions=decisions_json(score), pays=[_pay_json(o) for o in seat_paid],
                seen=score.seen.as_json() if score.seen is not None else {},
                partners=partners_json(partners.get(seat.seat, {})),
            ), errors.get(seat.seat, ()), seat_paid))
    first = day - timedelta(days=config.history_days - 1)
    earlier = _kept_pays(table, first, day)
    mismatches = conformance.pay_table_mismatches(earlier + observations, config.conformance)
    rows = []
    for row, found, seat_paid in pending:
        explained = {o.bet for o in seat_paid if conformance.explained(o, mismatches)}
        found = tuple(f for f in found if f.bet not in explained)
        row.favourable_errors = sum(1 for f in found if f.direction is fingerprints.Direction.FOR_PLAYER)
        row.errors = _fingerprint_json(found)
        rows.append(row)
    written = sum(_write(rows[i:i + BATCH]) for i in range(0, len(rows), BATCH))
    raised = _pay_table_findings(table, first, day, mismatches, config.conformance)
    return TableDayScore(rounds, written, raised)


def table_lines(table_id: int, day: date, seats: list) -> LineModel:
    """The day's line model pooled with the table's days before it within ``PROTECTION_LINE_DAYS``;
    the day's own counts kept for the days after it."""
    own = LineModel.of(seats)
    LineCounts.objects.update_or_create(table_id=table_id, gaming_day=day, defaults={"counts": own.counts_json()})
    first = day - timedelta(days=settings.PROTECTION_LINE_DAYS - 1)
    earlier = (LineCounts.objects.filter(table_id=table_id, gaming_day__gte=first, gaming_day__lt=day)
               .order_by("gaming_day").values_list("counts", flat=True))
    return own.pooled(LineModel.from_counts_json(counts) for counts in earlier)


def _pay_json(o: conformance.PayObservation) -> dict:
    return {"bet": o.bet, "category": CATEGORIES[o.category], "wager": str(o.wager), "claimed": str(o.claimed),
            "configured": str(o.configured), "minor_unit": str(o.minor_unit)}


def _kept_pays(table: Table, first: date, day: date) -> list[conformance.PayObservation]:
    """The winning lines kept with the table's scored seats from ``first`` to the day before ``day``."""
    rows = SeatScore.objects.filter(table_id=table.pk, gaming_day__range=(first, day - timedelta(days=1))).exclude(
        pays=[]).values_list("seat", "currency", "pays")
    return [
        conformance.PayObservation(
            table.code, p["bet"], CATEGORY_INDEX[p["category"]], Decimal(p["wager"]), Decimal(p["claimed"]),
            Decimal(p["configured"]), Decimal(p["minor_unit"]), currency, seat,
        )
        for seat, currency, pays in rows.iterator(chunk_size=5000) for p in pays
    ]


def _write(rows: list[SeatScore]) -> int:
    # A rerun, or another worker on the same part, may have written some: they are kept.
    return len(SeatScore.objects.bulk_create(rows, ignore_conflicts=True)) if rows else 0


def _pay_table_findings(table: Table, first: date, day: date, mismatches, settings) -> int:
    raised = 0
    for line in mismatches:
        category = CATEGORIES[line.category]
        raised += standing_raise(
            code=ProtectionCode.PAY_TABLE_MISMATCH.value,
            key=f"table={table.code} bet={line.bet} line={category}", day=day,
            figure=line.share, threshold=settings.majority,
            evidence={
                "bet": line.bet, "line": category, "configured": str(line.configured),
                "observed": str(line.observed), "observations": line.observations,
                "fit_observed": line.fit_observed, "fit_configured": line.fit_configured,
                "examples": [[str(w), str(c)] for w, c in line.examples],
            },
            detail=(
                f"table {table.code} paid the {line.bet} {category.replace('_', ' ')} at "
                f"{line.observed}:1 on {line.fit_observed} of {line.observations} wins from {first} to {day}; "
                f"its configuration pays {line.configured}:1"
            ),
            table=table.code, currency=line.currency, day_from=first,
        )
    return raised
