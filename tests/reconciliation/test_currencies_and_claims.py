"""Money never crosses currencies, an empty range is a report that says so, and a part is computed once."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from audit.models import ReconciliationPart
from audit.reconciliation import services
from books.figures import ByCurrency, CurrencyMismatch, Sums

pytestmark = pytest.mark.django_db
EMPTY_DAY = date(2026, 10, 3)


def test_sums_of_two_currencies_cannot_be_added():
    kronor = Sums(currency="SEK", rounds=1, handle=dict.fromkeys(("ante", "blind", "play", "trips", "progressive"),
                                                                  Decimal(100)))
    with pytest.raises(CurrencyMismatch):
        kronor.add(Sums(currency="USD", rounds=1))
    groups = ByCurrency()
    groups.add(kronor)
    groups.add(Sums(currency="USD", rounds=2))
    groups.add(Sums(currency="SEK", rounds=3))
    assert {c: s.rounds for c, s in groups.items()} == {"SEK": 4, "USD": 2}
    assert ByCurrency.from_json(groups.to_json()) == groups


def test_a_range_without_rounds_is_a_report_that_says_so():
    report = services.report_run(day_from=EMPTY_DAY)
    assert report.status == "complete" and report.rounds == 0
    assert report.figures["currencies"] == [] and report.figures["casino"] == {}
    assert report.figures["tables"] == {} and report.figures["flags"] == []


def test_a_part_is_claimed_once_and_a_claim_whose_lease_ran_out_is_taken_over(settings):
    report = services.report_start(day_from=EMPTY_DAY)
    part_id = services.report_parts_to_compute(report=report)[0]
    first = services.report_part_claim(part_id=part_id)
    assert first and services.report_part_claim(part_id=part_id) is None
    # The run holding it computes nothing twice: a second compute leaves it to that run.
    assert services.report_part_compute(part_id=part_id).status == ReconciliationPart.Status.RUNNING
    ReconciliationPart.objects.filter(pk=part_id).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.RECONCILIATION_LEASE_SECONDS + 1))
    part = services.report_part_compute(part_id=part_id)  # its lease ran out: taken over
    assert part.status == ReconciliationPart.Status.COMPLETE and part.attempts == 2
    assert part.claim != first


def test_a_report_made_before_figures_kept_their_currency_is_never_added_in(admin_client, auditor_client):
    from audit.models import ReconciliationReport
    from books.report_figures import figures_json, summary_of
    from audit.reconciliation.selectors import report_rollup

    stored = {"casino": {"rounds": 5, "handle": {"ante": "100"}}, "tables": {"S01": {"rounds": 5}},
              "pools": {"us-progressive": {"opening": "0", "closing": "5"}}}
    old = ReconciliationReport.objects.create(  # as the migrations left it (audit 0031: its summary)
        day_from=EMPTY_DAY, day_to=EMPTY_DAY, version=1, status="complete", engine_version="old",
        figures=stored, summary=summary_of(stored),
    )
    rolled = figures_json(report_rollup(day_from=EMPTY_DAY, day_to=EMPTY_DAY))
    assert rolled["days"] == [] and rolled["missing_days"] == [str(EMPTY_DAY)] and rolled["casino"] == {}
    page = admin_client.get(f"/admin/audit/reconciliationreport/{old.pk}/change/")
    assert page.status_code == 200 and "reconcile the range again" in page.content.decode()
    csv = auditor_client.get(f"/api/v1/reports/{old.pk}.csv")
    assert csv.status_code == 200 and csv.content.decode().count("\n") == 1  # the header only
    # The next day's report reads no closing from it, and the day after it runs.
    assert services.report_run(day_from=EMPTY_DAY + timedelta(days=1)).status == "complete"


@pytest.mark.django_db(transaction=True)
def test_a_long_part_renews_its_lease_from_a_thread_and_a_part_taken_over_is_never_renewed():
    import time

    from audit.reconciliation.lease import Heartbeat

    report = services.report_start(day_from=EMPTY_DAY)
    part_id = services.report_parts_to_compute(report=report)[0]
    token = services.report_part_claim(part_id=part_id)
    claimed = ReconciliationPart.objects.get(pk=part_id).heartbeat_at
    with Heartbeat(part_id, token, every=0.05):
        time.sleep(0.5)  # one long query: the computing thread says nothing all along
    renewed = ReconciliationPart.objects.get(pk=part_id).heartbeat_at
    assert renewed > claimed
    with Heartbeat(part_id, "another run's", every=0.05):
        time.sleep(0.3)
    assert ReconciliationPart.objects.get(pk=part_id).heartbeat_at == renewed


def test_a_part_retries_database_errors_for_a_time_then_fails_its_report_with_the_reason(monkeypatch, settings):
    import time

    from django.db import OperationalError

    from audit import tasks
    from audit.models import ReconciliationReport

    report = services.report_start(day_from=EMPTY_DAY)
    part = ReconciliationPart.objects.get(pk=services.report_parts_to_compute(report=report)[0])

    def compute(*, part_id):
        raise OperationalError("terminating connection due to administrator command")

    class Retried(Exception):
        pass

    def retry(**options):
        raise Retried(options)

    monkeypatch.setattr(tasks.services, "report_part_compute", compute)
    monkeypatch.setattr(tasks.reconcile_part, "retry", retry)
    with pytest.raises(Retried) as retried:
        tasks.reconcile_part.run(part.pk, report.pk)
    options = retried.value.args[0]
    assert options["kwargs"]["part_id"] == part.pk and options["args"] == ()
    assert options["kwargs"]["failing_since"] <= time.time() and 0 < options["countdown"] <= 1
    settings.RECONCILIATION_RETRY_SECONDS = 600
    with pytest.raises(Retried):  # nine minutes of errors: still tried again
        tasks.reconcile_part.run(part.pk, report.pk, failing_since=time.time() - 540)
    assert ReconciliationReport.objects.get(pk=report.pk).status == "running"
    with pytest.raises(OperationalError):  # ten minutes: the report fails, saying why
        tasks.reconcile_part.run(part.pk, report.pk, failing_since=time.time() - 601)
    failed = ReconciliationReport.objects.get(pk=report.pk)
    assert failed.status == "failed" and "terminating connection" in failed.error and failed.failures == 1
    assert failed.retry_at == failed.finished_at + timedelta(seconds=settings.RECONCILIATION_RETRY_FIRST_SECONDS)


def test_a_blind_table_without_its_own_covariance_is_named_in_the_alerts(caplog):
    from audit.reconciliation.config import reconciliation_settings
    from audit.reconciliation.selectors import covariance_fallbacks, theory_of_version
    from books.report_figures import ChainFigures, ReportFigures, Reverification
    from audit.reconciliation.services import _alerts
    from rounds.models import TableConfig, TableConfigVersion

    shipped = TableConfigVersion.objects.filter(config__name="se-50kr").first()
    fields = {f.name: getattr(shipped, f.name) for f in TableConfigVersion._meta.concrete_fields
              if f.name not in ("id", "config", "created_at")}
    odd = TableConfigVersion.objects.create(
        **fields | {"config": TableConfig.objects.create(name="odd-blind"),
                    "blind_pays": dict(shipped.blind_pays, royal_flush="1000")})
    assert covariance_fallbacks(version_ids=[shipped.pk]) == []
    assert covariance_fallbacks(version_ids=[shipped.pk, odd.pk]) == [str(odd)]
    theory = theory_of_version(version=odd, clock=reconciliation_settings())  # the shipped game's, said in the log
    assert theory.base_covariance > 0 and "no seat covariance derived" in caplog.text
    figures = ReportFigures.model_construct(
        reverification=Reverification(rounds=0, drift=0, examples=[]), chain=ChainFigures.model_construct(ok=True),
        pools={}, flags=[], engine_version="x", covariance_fallbacks=[str(odd)])
    assert any(str(odd) in alert for alert in _alerts(figures))
