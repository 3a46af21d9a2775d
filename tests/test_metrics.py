"""/metrics: refused to whoever settings do not allow; its figures move with what tables post;
nothing secret in it; gunicorn's workers added up through the multiprocess directory."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from infra.metrics import multiprocess_dir_prepare
from tests.api.records import BATCH, ROUNDS, record

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "scrape-token-of-this-test-0123456789"


def scrape(client=None, **headers) -> str:
    response = (client or Client()).get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return response.content.decode()


def value(text: str, name: str, **labels) -> float:
    """The sample ``name`` with exactly these labels (0 when there is none)."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


def now_record(round_id: str) -> dict:
    return record(round_id, dealt_at=(timezone.now() - timedelta(minutes=1)).isoformat())


# ---- who may scrape ------------------------------------------------------------------------


@pytest.mark.django_db
def test_with_nothing_set_only_loopback_may_scrape():
    assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="::1").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="10.0.0.7").status_code == 403


@pytest.mark.django_db
def test_a_proxy_not_trusted_is_not_loopback(settings):
    # nginx on this machine forwards the world from 127.0.0.1: without TRUSTED_PROXIES, nobody known.
    settings.TRUSTED_PROXIES = []
    assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1",
                        HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 403


@pytest.mark.django_db
def test_allowed_networks_behind_a_trusted_proxy(settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    settings.METRICS_ALLOWED = ["10.8.0.0/24", "192.0.2.15"]
    via_proxy = {"REMOTE_ADDR": "127.0.0.1"}
    assert Client().get("/metrics", **via_proxy, HTTP_X_FORWARDED_FOR="10.8.0.44").status_code == 200
    assert Client().get("/metrics", **via_proxy, HTTP_X_FORWARDED_FOR="192.0.2.15").status_code == 200
    assert Client().get("/metrics", **via_proxy, HTTP_X_FORWARDED_FOR="10.9.0.44").status_code == 403
    # Loopback itself is no longer allowed once networks are named.
    assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403


@pytest.mark.django_db
def test_a_token_is_required_once_set(settings):
    settings.METRICS_TOKEN = TOKEN
    assert Client().get("/metrics").status_code == 403  # loopback alone is not enough now
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 403
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}",
                        REMOTE_ADDR="198.51.100.3").status_code == 200


@pytest.mark.django_db
def test_token_and_networks_together_need_both(settings):
    settings.METRICS_TOKEN = TOKEN
    settings.METRICS_ALLOWED = ["10.8.0.0/24"]
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}
    assert Client().get("/metrics", **bearer, REMOTE_ADDR="10.8.0.2").status_code == 200
    assert Client().get("/metrics", **bearer, REMOTE_ADDR="10.9.0.2").status_code == 403
    assert Client().get("/metrics", REMOTE_ADDR="10.8.0.2").status_code == 403


@pytest.mark.django_db
def test_the_refusal_says_nothing(settings):
    response = Client().get("/metrics", REMOTE_ADDR="10.0.0.7")
    assert response.content == b"Not allowed.\n"


# ---- what it says --------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_figures_move_when_a_table_posts(table_client):
    client = table_client("S01", "se-50kr")
    first = now_record("M-1")
    before = scrape()
    assert client.post(ROUNDS, first, format="json").status_code == 201
    answered = client.post(BATCH, {"rounds": [now_record("M-2"), now_record("M-3"), first]}, format="json")
    assert [item["status"] for item in answered.json()["results"]] == [201, 201, 200]
    after = scrape()

    assert value(after, "table_audit_rounds_today", table="S01", status="verified") == 3
    assert value(before, "table_audit_rounds_today", table="S01", status="verified") == 0
    for endpoint in ("round", "batch"):
        moved = (value(after, "table_audit_ingest_seconds_count", endpoint=endpoint)
                 - value(before, "table_audit_ingest_seconds_count", endpoint=endpoint))
        assert moved == 1, endpoint
    assert value(after, "table_audit_batch_rounds_count") - value(before, "table_audit_batch_rounds_count") == 1
    assert value(after, "table_audit_batch_rounds_sum") - value(before, "table_audit_batch_rounds_sum") == 3
    # The pool the migrations ship, at its meter; and the chain has grown by the posts.
    assert value(after, "table_audit_pool_meter", pool="us-progressive", currency="USD") > 0
    assert value(after, "table_audit_audit_chain_events") >= value(before, "table_audit_audit_chain_events") + 3


@pytest.mark.django_db
def test_unworked_findings_by_code_and_the_last_report(table_client):
    from audit.models import ReconciliationReport
    from rounds.models import Finding

    client = table_client("S01", "se-50kr")
    wrong = now_record("F-1")
    wrong["seats"][1]["paid"]["ante"] = "-90"  # the dealer took less than the ante lost
    assert client.post(ROUNDS, wrong, format="json").status_code == 201
    codes = list(Finding.objects.values_list("code", flat=True))
    assert codes
    text = scrape()
    for code in set(codes):
        assert value(text, "table_audit_findings_unworked", code=code, state="open") == codes.count(code)

    Finding.objects.update(state="resolved")
    assert "table_audit_findings_unworked{" not in scrape()

    report = ReconciliationReport.objects.create(
        day_from=timezone.localdate(), day_to=timezone.localdate(), version=1, status="complete",
        engine_version="test")
    ReconciliationReport.objects.filter(pk=report.pk).update(
        finished_at=report.created_at + timedelta(seconds=42.5))
    assert value(scrape(), "table_audit_reconciliation_last_seconds", status="complete") == 42.5


@pytest.mark.django_db
def test_each_tables_clock_against_the_services(table_client):
    fast, right = table_client("S01", "se-50kr"), table_client("S02", "se-50kr")
    ahead = record("R-ahead", table="S01", dealt_at=(timezone.now() + timedelta(hours=1)).isoformat())
    assert fast.post(ROUNDS, ahead, format="json").status_code == 201
    assert right.post(ROUNDS, now_record("R-now") | {"table": "S02"}, format="json").status_code == 201
    text = scrape()
    assert 3590 < value(text, "table_audit_table_clock_offset_seconds", table="S01") <= 3600
    assert -70 < value(text, "table_audit_table_clock_offset_seconds", table="S02") < -50


@pytest.mark.django_db
def test_a_clock_that_dates_its_round_into_the_next_gaming_day_is_still_measured(table_client, settings):
    # The day ends within the hour: the fast table's round is dated into the next gaming day.
    local = timezone.now().astimezone(ZoneInfo(settings.GAMING_DAY_TIME_ZONE))
    settings.GAMING_DAY_CUTOFF_HOUR = (local.hour + 1) % 24
    fast = table_client("S01", "se-50kr")
    ahead = record("R-ahead", table="S01", dealt_at=(timezone.now() + timedelta(hours=1)).isoformat())
    assert fast.post(ROUNDS, ahead, format="json").status_code == 201
    assert 3590 < value(scrape(), "table_audit_table_clock_offset_seconds", table="S01") <= 3600


@pytest.mark.django_db
def test_task_outcomes_are_counted():
    from casino.celery import app

    @app.task(name="tests.metrics.fine")
    def fine():
        return 1

    @app.task(name="tests.metrics.broken")
    def broken():
        raise ValueError("no")

    before = scrape()
    fine.apply()
    fine.apply()
    broken.apply(throw=False)
    after = scrape()
    for task, outcome, times in (("tests.metrics.fine", "success", 2), ("tests.metrics.broken", "failure", 1)):
        moved = (value(after, "table_audit_celery_tasks_total", task=task, outcome=outcome)
                 - value(before, "table_audit_celery_tasks_total", task=task, outcome=outcome))
        assert moved == times, (task, outcome)


@pytest.mark.django_db
def test_nothing_secret_is_in_it(table_client, django_user_model, settings):
    from rounds.models import TableKey
    from rounds.services import split_key

    settings.METRICS_TOKEN = TOKEN
    client = table_client("S01", "se-50kr")
    key = client._credentials["HTTP_AUTHORIZATION"].split(" ", 1)[1]
    assert client.post(ROUNDS, now_record("S-1"), format="json").status_code == 201
    django_user_model.objects.create_user("auditor-x", password="a-test-password-of-anna")
    text = scrape(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    hashes = list(TableKey.objects.values_list("key_hash", flat=True))
    assert hashes and "table_audit_rounds_today" in text
    # the secret is everything after the key id: it may itself hold "_", so split as the service does
    for secret in (key, split_key(key)[1], *hashes, "a-test-password-of-anna", settings.SECRET_KEY, TOKEN,
                   settings.DATABASES["default"].get("PASSWORD") or "\x00no-password"):
        assert secret not in text


# ---- several worker processes --------------------------------------------------------------


OBSERVE = (
    "import sys; from infra.metrics import BATCH_ROUNDS; BATCH_ROUNDS.observe(int(sys.argv[1]))"
)
COLLECT = (
    "from casino.metrics_endpoint import process_figures; print(process_figures().decode())"
)


def test_every_workers_figures_are_added_up(tmp_path):
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
           "DJANGO_SETTINGS_MODULE": "casino.settings"}
    for size in ("7", "30"):
        subprocess.run([sys.executable, "-c", OBSERVE, size], cwd=ROOT, env=env, check=True)
    collect = "import django; django.setup(); " + COLLECT
    done = subprocess.run([sys.executable, "-c", collect], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)
    assert value(done.stdout, "table_audit_batch_rounds_count") == 2
    assert value(done.stdout, "table_audit_batch_rounds_sum") == 37


def test_a_new_run_forgets_the_files_of_processes_gone(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / f"histogram_{gone}.db").write_bytes(b"x")
    (tmp_path / f"counter_{os.getpid()}.db").write_bytes(b"x")
    assert multiprocess_dir_prepare(str(tmp_path)) == [f"histogram_{gone}.db"]
    assert [p.name for p in tmp_path.iterdir()] == [f"counter_{os.getpid()}.db"]


@pytest.mark.django_db
def test_ended_days_without_their_report_and_a_report_stuck_running(settings):
    """Operators see a day left without its report, and a report that has run too long."""
    from datetime import UTC, datetime

    from audit.models import ReconciliationReport
    from audit.reconciliation.config import day_to_reconcile
    from rounds.window import window_opens

    from tests.reconciliation.test_missing_days import _dealt_on

    settings.ROUND_WINDOW_OPENS = day_to_reconcile() - timedelta(days=40)
    opens, ended = window_opens(), day_to_reconcile()
    # The days that had rounds: a day nothing was dealt on is missing no report.
    _dealt_on(opens, ended - timedelta(days=1), ended)
    days = 3
    text = scrape()
    assert value(text, "table_audit_reconciliation_days_missing") == days
    assert value(text, "table_audit_reconciliation_oldest_running_seconds") == 0

    for day in (ended, ended - timedelta(days=1)):
        ReconciliationReport.objects.create(day_from=day, day_to=day, version=1, status="complete",
                                            engine_version="test")
    # A range's report is not a day's own, and a failed one is no report.
    ReconciliationReport.objects.create(day_from=opens, day_to=ended, version=1, status="complete",
                                        engine_version="test")
    ReconciliationReport.objects.create(day_from=opens, day_to=opens, version=1, status="failed",
                                        engine_version="test")
    stuck = ReconciliationReport.objects.create(day_from=opens, day_to=opens, version=2, status="running",
                                                engine_version="test")
    ReconciliationReport.objects.filter(pk=stuck.pk).update(created_at=timezone.now() - timedelta(minutes=90))

    text = scrape()
    assert value(text, "table_audit_reconciliation_days_missing") == days - 2
    assert value(text, "table_audit_reconciliation_last_complete_day_timestamp_seconds") == datetime(
        ended.year, ended.month, ended.day, tzinfo=UTC).timestamp()
    assert 90 * 60 <= value(text, "table_audit_reconciliation_oldest_running_seconds") < 95 * 60


@pytest.mark.django_db
def test_a_notice_that_did_not_go_is_counted_until_a_retry_goes(table_client, settings, staff):
    from audit.notices import RETRY_AFTER, notices_send
    from rounds.models import Finding

    settings.NOTICE_MISMATCH_AT_LEAST = {"SEK": Decimal("0.01")}
    settings.EMAIL_BACKEND = "tests.audit.test_notices.RefusingBackend"
    settings.NOTICES_TO = ["surveillance@casino.example"]
    client = table_client("S01", "se-50kr")
    wrong = now_record("F-1")
    wrong["seats"][1]["paid"]["ante"] = "-90"
    assert client.post(ROUNDS, wrong, format="json").status_code == 201
    assert Finding.objects.filter(code="payout_mismatch").exists()
    assert value(scrape(), "table_audit_notices_unsent", why="payout_mismatch") == 0
    assert notices_send()["round_findings"] == 1
    unsent = value(scrape(), "table_audit_notices_unsent", why="payout_mismatch")
    assert unsent == Finding.objects.filter(code="payout_mismatch").count() >= 1
    # ... and said on the tonight page, where the supervisors look first.
    page = staff("supervisor").get("/admin/").content.decode()
    assert "Notices of the last 24 hours not sent" in page and f"payout_mismatch {int(unsent)}." in page
    # The retry an hour later goes: nothing is left unsent.
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert notices_send(now=timezone.now() + RETRY_AFTER + timedelta(minutes=1))["round_findings"] == 1
    assert value(scrape(), "table_audit_notices_unsent", why="payout_mismatch") == 0
    assert "Notices of the last 24 hours not sent" not in staff("supervisor", "second").get("/admin/").content.decode()
