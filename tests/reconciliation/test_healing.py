"""The healing jobs' reads and their effect, in one process: late rounds make a report stale and the
next run supersedes it; the watch finds what the workers dropped and nothing else."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from django.utils import timezone

from audit.models import ReconciliationPart, ReconciliationReport
from audit.reconciliation import services, staleness
from audit.reconciliation.healing import days_to_heal, last_day_to_heal, reports_to_move
from audit.reconciliation.selectors import report_current, reports_kept
from audit.tasks import reconcile_missing
from audit.tonight import Late, late_rounds
from infra.gaming_day import gaming_day_window
from rounds.models import LateRound, Round
from tests import examples

from .days import DAY, client_for, moved, post_day

pytestmark = pytest.mark.django_db
EMPTY_DAY = date(2026, 10, 3)
LONG_AGO = timedelta(minutes=10)


def _other_days_reported(*, but: date, books_open: date) -> None:
    day, last = books_open, last_day_to_heal(now=timezone.now())
    while day <= last:
        if day != but:
            ReconciliationReport.objects.create(day_from=day, day_to=day, version=1, status="complete",
                                                engine_version="earlier", figures={})
        day += timedelta(days=1)


def test_rounds_stored_after_their_days_report_make_it_stale_and_the_next_run_supersedes_it(
        monkeypatch, settings, admin_client):
    # Only rounds stored after the report opened count here (no margin for a commit in flight).
    monkeypatch.setattr(staleness, "COMMIT_MARGIN", timedelta(0))
    settings.ROUND_WINDOW_OPENS = DAY
    post_day(per_table=5)
    first = services.report_run(day_from=DAY)
    _other_days_reported(but=DAY, books_open=DAY.replace(day=1))
    assert staleness.late_rounds_of(first) == {} and days_to_heal(books_open=DAY.replace(day=1),
                                                                   now=timezone.now()) == []
    assert reconcile_missing() == []  # nothing missing, nothing stale: nothing started

    # Table S01 comes back online and sends two rounds of that day it could not send before.
    late = client_for("S09", "se-50kr")
    for n, example in enumerate(examples.load("se-50kr.jsonl")[:2]):
        record = dict(example["record"], table="S09", round=f"late-{n}")
        assert late.post("/api/v1/rounds/", record, format="json").status_code == 201
    assert LateRound.objects.filter(gaming_day=DAY, table__code="S09").count() == 2
    assert staleness.late_rounds_of(first) == {"S09": 2}
    kept = reports_kept(books_open=DAY.replace(day=1), last_ended=last_day_to_heal(now=timezone.now()))
    assert kept.days_stale == 1 and kept.oldest_stale == DAY and kept.days_missing == 0
    assert report_current(day_from=DAY).pk == first.pk  # still current, and says it is stale
    page = admin_client.get(f"/admin/audit/reconciliationreport/{first.pk}/change/").content.decode()
    assert "stale: 2 round(s) of its days stored after it (S09: 2)" in page
    listed = admin_client.get("/admin/audit/reconciliationreport/").content.decode()
    assert "1 day(s) have a stale report" in listed and 'alt="True"' in listed
    assert "1 report stale" in admin_client.get("/admin/").content.decode()  # the tonight page says so too

    assert reconcile_missing() == [DAY.isoformat()]
    second = report_current(day_from=DAY)
    assert second.version == 2 and second.rounds == first.rounds + 2
    assert ReconciliationReport.objects.get(pk=first.pk).status == "superseded"
    assert second.figures["month_to_date"]["casino"] != first.figures["month_to_date"]["casino"]
    assert staleness.late_rounds_of(second) == {} and reconcile_missing() == []


def test_late_rounds_a_report_counted_make_no_alarm(settings, admin_client):
    """The demo's case: a table's late rounds, and the day's report made within a minute of them (the
    margin for a commit in flight). The report counted them: it is not stale, anywhere."""
    settings.ROUND_WINDOW_OPENS = DAY
    late = client_for("S09", "se-50kr")
    for n, example in enumerate(examples.load("se-50kr.jsonl")[:3]):
        record = dict(example["record"], table="S09", round=f"late-{n}")
        assert late.post("/api/v1/rounds/", record, format="json").status_code == 201
    assert LateRound.objects.filter(gaming_day=DAY).count() == 3
    report = services.report_run(day_from=DAY)
    assert report.rounds == 3
    assert staleness.late_rounds_of(report) == {}
    assert staleness.days_stale(books_open=DAY.replace(day=1), last_ended=DAY) == []
    page = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    assert "stale:" not in page
    listed = admin_client.get("/admin/audit/reconciliationreport/").content.decode()
    assert "have a stale report" not in listed
    assert re.search(r'class="field-stale"><img [^>]*alt="False"', listed)
    assert "report stale" not in admin_client.get("/admin/").content.decode()


def test_a_late_round_is_written_only_for_a_day_that_had_ended(settings):
    settings.ROUND_WINDOW_OPENS = DAY
    record = examples.load("se-50kr.jsonl")[0]["record"]
    client = client_for("S09", "se-50kr")
    now = timezone.now()
    today = dict(record, table="S09", round="today", dealt_at=now.isoformat())
    assert client.post("/api/v1/rounds/", today, format="json").status_code == 201
    assert not LateRound.objects.exists()
    assert client.post("/api/v1/rounds/", dict(record, table="S09", round="old"), format="json").status_code == 201
    assert list(LateRound.objects.values_list("gaming_day", flat=True)) == [DAY]


def test_a_late_round_s_page_says_how_late_it_came_and_a_round_of_its_own_day_says_nothing(settings,
                                                                                         admin_client):
    settings.ROUND_WINDOW_OPENS = DAY
    record = examples.load("se-50kr.jsonl")[0]["record"]
    client = client_for("S09", "se-50kr")
    assert client.post("/api/v1/rounds/", dict(record, table="S09", round="today",
                                               dealt_at=timezone.now().isoformat()), format="json").status_code == 201
    assert client.post("/api/v1/rounds/", dict(record, table="S09", round="old"), format="json").status_code == 201
    pages = {r.round_id: admin_client.get(f"/admin/rounds/round/{r.pk}/change/").content.decode()
             for r in Round.objects.filter(table__code="S09")}
    assert "stored late" not in pages["today"]
    (late,) = LateRound.objects.all()
    after = late.received_at - gaming_day_window(DAY)[1]
    assert after > timedelta(days=1)
    assert f"stored late</strong>, {after.days} d, " in pages["old"]


def _age(report: ReconciliationReport) -> None:
    ReconciliationReport.objects.filter(pk=report.pk).update(
        created_at=timezone.now() - LONG_AGO, driven_at=timezone.now() - LONG_AGO)


def test_the_watch_sends_again_what_nobody_moves_on_and_leaves_alone_what_moves():
    report = services.report_start(day_from=EMPTY_DAY)
    parts = services.report_parts_to_compute(report=report)
    assert reports_to_move() == []  # just opened: its tasks are on their way

    _age(report)
    (move,) = reports_to_move()  # nobody picked its parts up: all sent again
    assert move.report_id == report.pk and set(move.parts) == set(parts) and not move.finish

    token = services.report_part_claim(part_id=parts[0])
    assert token and reports_to_move() == []  # a part computes (its lease is live): the queue moves
    ReconciliationPart.objects.filter(pk=parts[0]).update(heartbeat_at=timezone.now() - LONG_AGO)
    (move,) = reports_to_move()  # its holder died
    assert set(move.parts) == set(parts)

    for part_id in parts:
        ReconciliationPart.objects.filter(pk=part_id).update(status="pending", claim="")
        services.report_part_compute(part_id=part_id)
    assert reports_to_move() == []  # the parts have just come in: the merge is on its way
    ReconciliationPart.objects.filter(report=report).update(finished_at=timezone.now() - LONG_AGO)
    (move,) = reports_to_move()  # every part in long ago, and nobody merges
    assert move.finish and move.parts == ()


def test_a_failed_report_is_tried_again_when_its_time_comes_with_backoff(settings):
    report = services.report_start(day_from=EMPTY_DAY)
    services.report_fail(report_id=report.pk, error="OperationalError: the server closed the connection")
    failed = ReconciliationReport.objects.get(pk=report.pk)
    assert failed.retry_at > timezone.now() and reports_to_move() == []
    ReconciliationReport.objects.filter(pk=report.pk).update(retry_at=timezone.now() - timedelta(seconds=1))
    (move,) = reports_to_move()
    assert move.retry == (EMPTY_DAY, EMPTY_DAY)
    # Watches that ran while the workers were busy send it once between them.
    assert services.report_retry_claim(report_id=report.pk) and not services.report_retry_claim(report_id=report.pk)
    assert reports_to_move() == []
    ReconciliationReport.objects.filter(pk=report.pk).update(retry_at=timezone.now() - timedelta(seconds=1))

    services.report_start(day_from=EMPTY_DAY)  # what the retry does: resumed, and no longer due
    resumed = ReconciliationReport.objects.get(pk=report.pk)
    assert resumed.status == "running" and resumed.retry_at is None and "closed the connection" in resumed.error
    services.report_fail(report_id=report.pk, error="again")
    twice = ReconciliationReport.objects.get(pk=report.pk)
    assert twice.failures == 2
    assert twice.retry_at - twice.finished_at == timedelta(seconds=2 * settings.RECONCILIATION_RETRY_FIRST_SECONDS)


def test_rounds_backdated_into_old_days_do_not_keep_a_recent_stale_day_waiting(monkeypatch, settings,
                                                                                admin_client):
    """A table posts late rounds into ten old days, then one into the last ended day: the hourly job's
    few days a run begin with the newest stale day, not the table's oldest."""
    monkeypatch.setattr(staleness, "COMMIT_MARGIN", timedelta(0))
    last = last_day_to_heal(now=timezone.now())
    opens = last - timedelta(days=20)
    settings.ROUND_WINDOW_OPENS = opens.replace(day=1)
    books_open = settings.ROUND_WINDOW_OPENS
    day, reported = books_open, []
    while day <= last:
        reported.append(ReconciliationReport.objects.create(
            day_from=day, day_to=day, version=1, status="complete", engine_version="earlier", figures={}))
        day += timedelta(days=1)
    late = client_for("S09", "se-50kr")
    example = examples.load("se-50kr.jsonl")[0]["record"]
    dealt = date.fromisoformat(example["dealt_at"][:10])
    targets = [opens + timedelta(days=n) for n in range(10)] + [last]
    for n, target in enumerate(targets):
        record = dict(moved(example, hours=24 * (target - dealt).days, prefix=f"back-{n}-"), table="S09")
        assert late.post("/api/v1/rounds/", record, format="json").status_code == 201
    stale = days_to_heal(books_open=books_open, now=timezone.now())
    assert sorted(stale) == sorted(targets)
    assert stale[0] == last and stale[1:] == sorted(targets[:-1], reverse=True)
    # The tonight page counts them, by table, with how many came after their day's report; past
    # LATE_ROUNDS_ALERT_PER_HOUR in an hour the table is marked, and /metrics says how many.
    settings.LATE_ROUNDS_ALERT_PER_HOUR = len(targets)
    assert late_rounds(since=timezone.now() - timedelta(hours=1)) == [
        Late("S09", len(targets), len(targets), len(targets), False)]
    page = admin_client.get("/admin/").content.decode()
    assert f"S09 {len(targets)} ({len(targets)} after the day's report)." in page
    settings.LATE_ROUNDS_ALERT_PER_HOUR = len(targets) - 1
    page = admin_client.get("/admin/").content.decode()
    assert f"{len(targets)} in the last hour, more than {len(targets) - 1}" in page
    from tests.test_metrics import scrape, value

    assert value(scrape(), "table_audit_late_rounds_last_hour", table="S09") == len(targets)
