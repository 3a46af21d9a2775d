"""What must hold of the stored data whatever tables, supervisors and faults did.

Each function returns the problems it finds (empty when all is well), so a
test can assert on them and a benchmark can print them.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from game.progressive import Meters
from game.record import round_from_wire
from game.rules import BETS
from game.verdict import judge_round
from progressive.models import MeterEvent, Pool
from progressive.selectors import pool_ledger_check
from rounds.models import Round

ZERO_BETS = dict.fromkeys(BETS, 0)


def rounds_stored_once(accepted: dict[tuple[str, str], str]) -> list[str]:
    """Every accepted ``(table, round id)`` stored exactly once, with the record hash it was accepted with."""
    stored = list(Round.objects.values_list("table__code", "round_id", "record_hash"))
    problems = [f"{key} stored {n} times" for key, n in Counter((t, r) for t, r, _ in stored).items() if n > 1]
    by_key = {(t, r): h for t, r, h in stored}
    problems += [f"{key} accepted but not stored" for key in accepted.keys() - by_key.keys()]
    problems += [f"{key} stored but never accepted" for key in by_key.keys() - accepted.keys()]
    problems += [
        f"{key} stored with another body" for key, digest in accepted.items()
        if key in by_key and digest is not None and by_key[key] != digest
    ]
    return problems


def meters_are_their_ledgers() -> list[str]:
    """Each pool's meter is the sum of its ledger's deltas, and the ledger proves it row by row."""
    problems = []
    for pool in Pool.objects.all():
        check = pool_ledger_check(pool=pool)
        if not check.ok:
            problems.append(f"pool {pool.code}: {check.problem}")
        if check.meter != check.delta_sum:
            problems.append(f"pool {pool.code}: meter {check.meter} but its events add up to {check.delta_sum}")
        if pool.meter < 0:
            problems.append(f"pool {pool.code}: meter {pool.meter} below zero")
    return problems


def results_are_the_engine_verdict() -> list[str]:
    """No money made or lost between the engine and the tables: each stored round, judged again.

    The stored record, judged by the configuration and pool versions the round
    stores, at the meters its pool's ledger shows just before the round's first
    event, must give exactly the stored seats' ``settled_*`` and exactly the
    round's own meter events. A round a supervisor voided is settled at zero.
    """
    problems = []
    ledgers: dict[int, list[MeterEvent]] = defaultdict(list)
    for event in MeterEvent.objects.order_by("pool_id", "seq"):
        ledgers[event.pool_id].append(event)
    rounds = Round.objects.select_related("config_version", "pool_version__pool", "table").prefetch_related("seats")
    for round_ in rounds:
        label = f"{round_.table.code}/{round_.round_id}"
        stored = {s.seat: {bet: getattr(s, f"settled_{bet}") for bet in BETS} for s in round_.seats.all()}
        if round_.voided_at is not None:
            if any(v != 0 for bets in stored.values() for v in bets.values()):
                problems.append(f"{label}: voided, yet settled {stored}")
            continue
        pool_rules = meters = None
        own: list[MeterEvent] = []
        if round_.pool_version_id is not None:
            pool_rules = round_.pool_version.rules()
            ledger = ledgers[round_.pool_version.pool_id]
            own = [e for e in ledger if e.round_id == round_.pk and e.kind != MeterEvent.Kind.REVERSAL]
            if own:
                before = ledger[own[0].seq - 2]
                meters = Meters(before.meter_after, before.overflow_after, before.reserve_after)
                if round_.meter_before != before.meter_after:
                    problems.append(f"{label}: meter_before {round_.meter_before}, ledger {before.meter_after}")
            else:
                meters = Meters(round_.meter_before)
        verdict = judge_round(round_from_wire(round_.record), round_.config_version.rules(), pool_rules, meters)
        expected = {s.seat: dict(s.settled) for s in verdict.seats}
        if stored != expected:
            problems.append(f"{label}: stored {stored}, the engine settles {expected}")
        stored_events = [(e.kind, e.seat, e.amount) for e in own]
        judged_events = [(e.kind, e.seat, e.amount) for e in verdict.events]
        if stored_events != judged_events:
            problems.append(f"{label}: ledger {stored_events}, the engine's events {judged_events}")
    return problems


def state_of_the_books() -> tuple:
    """Everything a refused write must leave exactly as it was."""
    return (
        list(Round.objects.order_by("pk").values_list("pk", "status", "record_hash", "voided_at")),
        list(MeterEvent.objects.order_by("pk").values_list("pk")),
        list(Pool.objects.order_by("pk").values_list("meter", "overflow", "reserve", "last_event_seq")),
    )
