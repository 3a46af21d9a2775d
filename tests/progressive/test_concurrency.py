"""Many tables of one pool at once, on PostgreSQL: no increment lost, none doubled.

Eight threads, each with its own database connection, post distinct rounds for
four tables of ``us-progressive`` through the API; two of them also race each
other with the very same rounds, and a supervisor adjusts the meter meanwhile.
Whatever order the pool's row lock gives them, the ledger must then account
for every lit wager exactly once and prove the meter row by row.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from decimal import Decimal

import pytest
from django.db import connection
from rest_framework.test import APIClient

from progressive.models import MeterEvent, Pool
from progressive.selectors import pool_ledger_check
from rounds.models import Round, Submission
from rounds.services import table_register
from tests.progressive.records import ROUNDS, contribution, lit_wagers, us_rounds
from trail.services import SYSTEM

THREADS = 8
TABLES = ("Q01", "Q02", "Q03", "Q04")
ROUNDS_PER_THREAD = 9
RACED = 6  # rounds both racing threads post, identical
ADJUSTMENTS = [Decimal("7.00"), Decimal("-3.00"), Decimal("2.50"), Decimal("-1.25")]


def _run(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"


def _in_own_connection(work, errors: list, start: threading.Barrier):
    def run():
        try:
            start.wait(timeout=60)
            work()
        except BaseException as exc:  # noqa: BLE001 - every failure is reported by the test
            errors.append(exc)
        finally:
            connection.close()  # each thread's own connection, never the test's

    return threading.Thread(target=run)


@pytest.mark.django_db(transaction=True)
def test_concurrent_tables_on_one_pool_lose_and_double_nothing(supervisor):
    pool = Pool.objects.get(code="us-progressive")
    keys = {code: table_register(code=code, config_name="us-30k", actor=SYSTEM).key for code in TABLES}
    # Thread i posts for table i % 4. Threads 0 and 4 (both table Q01) start with
    # the same raced rounds, so each of those arrives twice at once; then their own.
    plans: list[tuple[str, list[dict]]] = []
    raced = us_rounds(TABLES[0], "raced", RACED, start=20)
    for i in range(THREADS):
        table = TABLES[i % len(TABLES)]
        own = us_rounds(table, f"t{i}", ROUNDS_PER_THREAD, start=i * 4)
        plans.append((table, (raced if i % len(TABLES) == 0 else []) + own))
    answers: dict[int, list[tuple[str, int]]] = defaultdict(list)
    adjusted: list[int] = []
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS + 1)

    def table_work(i: int, table: str, records: list[dict]):
        def work():
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {keys[table]}")
            for record in records:
                response = client.post(ROUNDS, record, format="json")
                answers[i].append((record["round"], response.status_code))
        return work

    def supervisor_work():
        client = APIClient()
        client.force_authenticate(supervisor)
        for delta in ADJUSTMENTS:
            response = client.post(
                f"/api/v1/pools/{pool.code}/adjustments",
                {"delta": str(delta), "reason": "concurrency test"}, format="json",
            )
            adjusted.append(response.status_code)

    threads = [_in_own_connection(table_work(i, *plan), errors, start) for i, plan in enumerate(plans)]
    threads.append(_in_own_connection(supervisor_work, errors, start))
    _run(threads)
    assert not errors, errors

    # Every distinct round stored once; each raced one accepted once and replayed once.
    distinct = {(table, r["round"]): r for table, records in plans for r in records}
    statuses = Counter(status for thread in answers.values() for _, status in thread)
    assert statuses == {201: len(distinct), 200: RACED}, statuses
    raced_ids = {r["round"] for r in raced}
    for round_id in raced_ids:
        assert sorted(s for i in (0, 4) for rid, s in answers[i] if rid == round_id) == [200, 201]
    stored = Round.objects.filter(table__code__in=TABLES)
    assert stored.count() == len(distinct)
    assert Submission.objects.filter(outcome="replayed", table__code=TABLES[0]).count() == RACED
    assert adjusted == [201] * len(ADJUSTMENTS)

    # No event lost or doubled: one contribution per lit wager of a distinct round.
    events = list(MeterEvent.objects.filter(pool=pool).order_by("seq"))
    contributions = [e for e in events if e.kind == "contribution"]
    wagers = [w for record in distinct.values() for w in lit_wagers(record)]
    assert len(contributions) == len(wagers)
    assert sum(e.amount for e in contributions) == sum(contribution(w) for w in wagers)
    per_round = Counter(e.round_id for e in contributions)
    for round_ in stored:
        assert per_round[round_.pk] == len(lit_wagers(round_.record)), round_.round_id
    assert max(Counter((e.round_id, e.seat, e.kind) for e in events if e.round_id).values()) == 1

    # seq runs 1..n with no gap, and each round's events sit together, in one run.
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    pool.refresh_from_db()
    assert pool.last_event_seq == len(events)
    by_round = defaultdict(list)
    for e in events:
        if e.round_id:
            by_round[e.round_id].append(e.seq)
    for round_pk, seqs in by_round.items():
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), f"round {round_pk} interleaved"
        # The round read the meter under the lock: its meter_before is the event just before it.
        round_ = next(r for r in stored if r.pk == round_pk)
        assert round_.meter_before == events[seqs[0] - 2].meter_after

    # meter = reseeds + contributions - awards ± adjustments, and the ledger proves it row by row.
    total = defaultdict(Decimal)
    for e in events:
        total[e.kind] += e.delta
    adjustments = [e.delta for e in events if e.kind == "adjustment"]
    assert sorted(adjustments) == sorted(ADJUSTMENTS)
    assert pool.meter == (
        total["reseed"] + total["contribution"] + total["award"] + total["adjustment"]
    )
    assert total["award"] == -sum(e.amount for e in events if e.kind == "award")
    assert {e.kind for e in events} <= {"reseed", "contribution", "award", "fixed_award", "adjustment"}
    assert any(e.kind == "award" for e in events) and any(e.kind == "reseed" and e.round_id for e in events)
    check = pool_ledger_check(pool=pool)
    assert check.ok, check.problem
    assert check.events == len(events)
