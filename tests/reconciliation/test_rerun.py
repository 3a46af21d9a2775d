"""Rerun safety: one current report per day, unfinished reports never current, drift shouts."""

from __future__ import annotations

import io
import re
import logging

import pytest
from django.core.management import call_command
from django.db import connection

from audit.models import ReconciliationPart, ReconciliationReport
from audit.reconciliation import services
from audit.reconciliation.selectors import report_current
from audit.tasks import reconcile_day
from trail.models import AuditEvent
from django_celery_beat.models import PeriodicTask
from tests import examples
from tests.insider import as_owner

from .days import DAY

pytestmark = pytest.mark.django_db
Status = ReconciliationReport.Status


@pytest.fixture
def few_rounds(table_client):
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl")[:12]:
        assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    return client


def _current_count() -> int:
    return ReconciliationReport.objects.filter(day_from=DAY, day_to=DAY, status=Status.COMPLETE).count()


def test_running_a_day_twice_keeps_one_current_report_and_the_old_one(few_rounds):
    first = services.report_run(day_from=DAY)
    second = services.report_run(day_from=DAY)
    first.refresh_from_db()
    assert (first.version, first.status) == (1, Status.SUPERSEDED)
    assert (second.version, second.status) == (2, Status.COMPLETE)
    assert report_current(day_from=DAY) == second
    same = ("casino", "tables", "dealers", "shifts", "players", "pools", "reverification", "flags")
    assert {k: first.figures[k] for k in same} == {k: second.figures[k] for k in same}
    assert _current_count() == 1


def test_an_unfinished_report_is_never_current_and_a_rerun_completes_it(few_rounds):
    report = services.report_start(day_from=DAY)
    parts = services.report_parts_to_compute(report=report)
    services.report_part_compute(part_id=parts[0])  # then the worker "dies"
    assert report_current(day_from=DAY) is None
    with pytest.raises(services.ReportNotReady):
        services.report_finish(report_id=report.pk)

    rerun = services.report_run(day_from=DAY)
    assert rerun.pk == report.pk and rerun.version == 1
    assert rerun.status == Status.COMPLETE
    assert ReconciliationReport.objects.filter(day_from=DAY).count() == 1
    assert rerun.figures["casino"]["SEK"]["rounds"] == 12
    first_part = ReconciliationPart.objects.get(pk=parts[0])
    assert first_part.attempts == 1  # kept, not computed again


def test_new_rounds_after_an_abandoned_run_make_a_new_version_that_supersedes_it(few_rounds):
    abandoned = services.report_start(day_from=DAY)
    record = dict(examples.load("se-50kr.jsonl")[20]["record"])
    assert few_rounds.post("/api/v1/rounds/", record, format="json").status_code == 201
    report = services.report_run(day_from=DAY)
    abandoned.refresh_from_db()
    assert report.version == 2 and report.figures["casino"]["SEK"]["rounds"] == 13
    assert abandoned.status == Status.SUPERSEDED
    assert _current_count() == 1


def test_a_late_finish_of_an_older_version_does_not_displace_the_newer(few_rounds):
    old = services.report_start(day_from=DAY)
    for part_id in services.report_parts_to_compute(report=old):
        services.report_part_compute(part_id=part_id)
    record = dict(examples.load("se-50kr.jsonl")[20]["record"])
    few_rounds.post("/api/v1/rounds/", record, format="json")
    new = services.report_run(day_from=DAY)
    late = services.report_finish(report_id=old.pk)
    assert late.status == Status.SUPERSEDED
    assert report_current(day_from=DAY) == new


def test_a_failing_part_fails_the_report_and_the_rerun_finishes_it(few_rounds, monkeypatch):
    real = services._pool_part

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(services, "_pool_part", broken)
    with pytest.raises(RuntimeError):
        services.report_run(day_from=DAY)
    report = ReconciliationReport.objects.get(day_from=DAY)
    assert report.status == Status.FAILED and "disk on fire" in report.error
    assert report_current(day_from=DAY) is None

    monkeypatch.setattr(services, "_pool_part", real)
    rerun = services.report_run(day_from=DAY)
    assert rerun.pk == report.pk and rerun.status == Status.COMPLETE


def test_a_stored_verdict_that_today_s_engine_disagrees_with_is_drift(few_rounds, caplog):
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE rounds_seat SET settled_ante = settled_ante + 50 WHERE id = "
            "(SELECT min(s.id) FROM rounds_seat s JOIN rounds_round r ON r.id = s.round_id "
            " WHERE r.void = false)"
        )
    with caplog.at_level(logging.ERROR, logger="audit.reconciliation"):
        report = services.report_run(day_from=DAY)
    assert report.drift == 1
    example = report.figures["reverification"]["examples"][0]
    assert any("ante" in d and "is now" in d for d in example["differences"])
    assert any("DRIFT" in alert for alert in report.figures["alerts"])
    assert any("DRIFT" in r.getMessage() for r in caplog.records)
    # The house win is the stored settlement: the report shows what was booked.
    assert report.figures["casino"]["SEK"]["win"]["ante"] != "0"


def test_completing_a_report_is_in_the_audit_log(few_rounds):
    report = services.report_run(day_from=DAY)
    event = AuditEvent.objects.filter(action="reconciliation.completed").get()
    assert event.object_id == str(report.pk) and event.after["rounds"] == 12


def test_the_nightly_task_runs_inline_without_a_broker(few_rounds):
    report_id = reconcile_day.delay(day=str(DAY), requested_by="test").get()
    report = ReconciliationReport.objects.get(pk=report_id)
    assert report.status == Status.COMPLETE and report.rounds == 12
    assert report.requested_by == "test"


def test_the_nightly_schedule_is_in_the_database_for_beat():
    task = PeriodicTask.objects.get(name="Nightly reconciliation")
    assert task.task == reconcile_day.name and task.enabled
    assert (task.crontab.hour, task.crontab.minute) == ("7", "0")
    assert str(task.crontab.timezone) == "Europe/Stockholm"


def test_the_reconcile_command_prints_progress_and_the_figures(few_rounds):
    out = io.StringIO()
    call_command("reconcile", "--day", str(DAY), stdout=out)
    text = out.getvalue()
    assert "] 4/4" in text  # the table S01, the players, the pool and the audit chain
    assert "rounds 12" in text and "drift 0" in text and "audit chain intact" in text
    # Money as every page writes it: grouped, to the cent, with its currency; never a Decimal's digits.
    assert re.search(r"house win -?[0-9,]+\.[0-9]{2} SEK, hold", text), text
    assert not re.search(r"[0-9]\.[0-9]{3,}", text), text
    assert report_current(day_from=DAY).requested_by == "manage.py reconcile"


def test_the_reconcile_command_refuses_a_bad_date():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="not a date"):
        call_command("reconcile", "--day", "28/11/2026")


def test_the_chain_is_checked_in_segments_and_a_changed_event_is_found(few_rounds, monkeypatch):
    from audit.reconciliation import chain

    monkeypatch.setattr(chain, "SEGMENT", 5)
    events = AuditEvent.objects.count()  # the chain as the report starts
    report = services.report_run(day_from=DAY)
    assert report.chain_ok is True
    assert report.figures["chain"]["checked"] == events
    assert report.parts.filter(kind="chain").count() == -(-events // 5) > 2

    with as_owner(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER audit_auditevent_append_only")
        cursor.execute("UPDATE audit_auditevent SET action = 'round.forged' WHERE seq = 7")
        cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER audit_auditevent_append_only")
    broken = services.report_run(day_from=DAY)
    assert broken.chain_ok is False
    assert broken.figures["chain"]["break_seq"] == 7
    assert "changed" in broken.figures["chain"]["problem"]
    assert any("audit chain broken" in alert for alert in broken.figures["alerts"])
