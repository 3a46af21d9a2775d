"""The nightly game protection on a real Celery worker, a real broker (Redis) and PostgreSQL.

The worker and its helpers are the reconciliation's (``tests/reconciliation/test_worker.py``):
a ``celery worker`` subprocess on a queue of its own against this test database.
"""

from __future__ import annotations

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask
from django_celery_results.models import TaskResult

from audit.models import ProtectionFinding, SeatScore
from casino.celery import app
from game.protection import players as pl
from game.protection.codes import ProtectionCode
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from tests.examples import last_gaming_day_evening
from tests.game.engine_rules import SE_50KR
from tests.reconciliation.workers import queue, shipped, shipped_after, wait_for, worker  # noqa: F401

from .wire import body_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
PAYS = PayTable.of(SE_50KR)
WAIT = 240  # seconds: two tables of 80 rounds scored on two worker processes


def _post(table_client, code: str, players, rounds: int, seed: int):
    client = table_client(code, "se-50kr")
    start = last_gaming_day_evening(timezone.now())
    for dealt in pl.deal_rounds(players, rounds, seed):
        body = body_of(dealt, table=code, start=start, rules=SE_50KR)
        assert client.post("/api/v1/rounds/", body, format="json").status_code == 201
    return timezone.localtime(start).date()


def test_the_nightly_job_scores_each_table_on_the_workers_once(queue, table_client, tmp_path):  # noqa: F811
    table = shipped_table()
    day = _post(table_client, "S01", [pl.OptimalPlayer("P-a", PAYS, table),
                                      pl.CardReader("P-peeks", PAYS, table)], 80, seed=16)
    _post(table_client, "S02", [pl.WeakPlayer("P-b", PAYS, table)], 80, seed=4)
    log = tmp_path / "worker.log"

    def finished(runs: int):
        return TaskResult.objects.filter(task_name="audit.protect_finish", status="SUCCESS").count() >= runs

    with worker(queue, pool="prefork", concurrency=2, log=log) as process:
        app.send_task("audit.protect_day", kwargs={"day": str(day)}, queue=queue)
        wait_for(lambda: finished(1), what="the day's game protection", process=process, log=log,
                  timeout=WAIT)
        scored = SeatScore.objects.count()
        findings = set(ProtectionFinding.objects.values_list("code", "key"))
        app.send_task("audit.protect_day", kwargs={"day": str(day)}, queue=queue)  # a rerun
        wait_for(lambda: finished(2), what="the rerun", process=process, log=log, timeout=WAIT)

    assert scored == 2 * 80 + 80 == SeatScore.objects.count()
    assert set(ProtectionFinding.objects.values_list("code", "key")) == findings
    assert {p for c, k in findings for p in [k.split()[0]] if c == ProtectionCode.SUSPECTED_HOLE_CARDING.value} \
        == {"player=P-peeks"}
    parts = TaskResult.objects.filter(task_name="audit.protect_table_day", status="SUCCESS")
    assert parts.count() == 4  # two tables, two runs


def test_the_nightly_schedule_scores_before_the_reconciliation():
    from importlib import import_module

    from django.apps import apps

    import_module("audit.migrations.0013_nightly_protection_schedule").schedule(apps, None)
    protection = PeriodicTask.objects.get(name="Nightly game protection")
    assert protection.task == "audit.protect_day" and protection.enabled
    assert (protection.crontab.hour, protection.crontab.minute) == ("6", "30")
    assert str(protection.crontab.timezone) == "Europe/Stockholm"
