"""``/metrics``: Prometheus' scrape of the service, for the addresses or the token settings allow.

The figures tell an outsider how busy each table is and how large each
jackpot stands, so the endpoint is not for anyone who can reach the service:

- ``METRICS_TOKEN`` set: the scrape must carry ``Authorization: Bearer <token>``;
- ``METRICS_ALLOWED`` set (addresses or networks): it must come from one of them;
- both set: both; neither: only from this machine (loopback).

The caller's address is the one ``infra.client_address`` finds behind
``TRUSTED_PROXIES``. A request that a proxy not trusted forwarded
(``X-Forwarded-For`` from an address not among them) is from nobody known,
so it is never taken for loopback: nginx on the same machine forwards every
client from 127.0.0.1.

Besides what the processes measured (``infra.metrics``), each scrape reads
a few figures from the database, where they are the same for every worker:
the gaming day's rounds by table and status, the findings still to work by
code and state, each pool's meter, the audit chain's length, the last
finished reconciliation report, and whether every ended gaming day has its
report (days missing one, the last day reported, the oldest report running).
"""

from __future__ import annotations

import hmac
import os
from datetime import UTC, datetime, time, timedelta

from django.conf import settings
from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET
from django.db.models import Count, OuterRef, Subquery
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily

from audit.models import ReconciliationReport
from audit.notices import notices_unsent
from audit.tonight import late_rounds
from audit.reconciliation.config import day_to_reconcile
from audit.reconciliation.selectors import reports_kept
from infra.client_address import client_address, within
from infra.gaming_day import gaming_day_of, gaming_day_window
from infra.work import State
from progressive.models import Pool
from rounds.models import Finding, Round, Table
from rounds.window import window_opens
from trail.models import ChainHead

LOOPBACK = ("127.0.0.0/8", "::1/128")


@csrf_exempt
@never_cache
@require_GET
def metrics(request):
    if not scrape_allowed(request):
        return HttpResponse("Not allowed.\n", status=403, content_type="text/plain; charset=utf-8")
    return HttpResponse(process_figures() + database_figures(), content_type=CONTENT_TYPE_LATEST)


def scrape_allowed(request) -> bool:
    token = settings.METRICS_TOKEN
    networks = settings.METRICS_ALLOWED or ([] if token else list(LOOPBACK))
    if token and not _token_given(request, token):
        return False
    if networks and not _from(request, networks):
        return False
    return True


def _token_given(request, token: str) -> bool:
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    return scheme == "Bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def _from(request, networks: list[str]) -> bool:
    remote = request.META.get("REMOTE_ADDR", "")
    if "HTTP_X_FORWARDED_FOR" in request.META and not within(remote, settings.TRUSTED_PROXIES):
        return False
    return within(client_address(request) or "", networks)




def process_figures() -> bytes:
    """The instruments of ``infra.metrics``: every worker's, added up, in multiprocess mode."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry)


def database_figures() -> bytes:
    registry = CollectorRegistry()
    registry.register(DatabaseFigures())
    return generate_latest(registry)


class DatabaseFigures:
    """Gauges read from the database at each scrape: exact whichever worker answers."""

    def collect(self):
        day = gaming_day_of(timezone.now())
        rounds = GaugeMetricFamily(
            "table_audit_rounds_today", "Rounds stored for the current gaming day, by table and status.",
            labels=["table", "status"])
        # The day's partition only, by its (gaming_day, table) index: a scrape never counts every round.
        for row in (Round.objects.filter(gaming_day=day).values("table__code", "status")
                    .order_by().annotate(n=_count())):
            rounds.add_metric([row["table__code"], row["status"]], row["n"])
        yield rounds

        findings = GaugeMetricFamily(
            "table_audit_findings_unworked", "Findings open or acknowledged, by code and state.",
            labels=["code", "state"])
        for row in (Finding.objects.filter(state__in=[State.OPEN, State.ACKNOWLEDGED])
                    .values("code", "state").order_by().annotate(n=_count())):
            findings.add_metric([row["code"], row["state"]], row["n"])
        yield findings

        meter = GaugeMetricFamily("table_audit_pool_meter", "Each pool's meter, in its currency.",
                                  labels=["pool", "currency"])
        reserve = GaugeMetricFamily("table_audit_pool_reserve", "Each pool's reseed reserve.",
                                    labels=["pool", "currency"])
        overflow = GaugeMetricFamily("table_audit_pool_overflow", "Each pool's overflow.",
                                     labels=["pool", "currency"])
        for pool in Pool.objects.order_by("code").values("code", "currency", "meter", "reserve", "overflow"):
            labels = [pool["code"], pool["currency"]]
            meter.add_metric(labels, float(pool["meter"]))
            reserve.add_metric(labels, float(pool["reserve"]))
            overflow.add_metric(labels, float(pool["overflow"]))
        yield from (meter, reserve, overflow)

        head = ChainHead.objects.filter(pk=1).values_list("seq", flat=True).first() or 0
        yield GaugeMetricFamily("table_audit_audit_chain_events", "Events in the audit chain.", value=head)

        last = GaugeMetricFamily(
            "table_audit_reconciliation_last_seconds",
            "Seconds the last finished reconciliation report took, from opening to its end, by status.",
            labels=["status"])
        finished = GaugeMetricFamily(
            "table_audit_reconciliation_last_finished_timestamp_seconds",
            "When the last reconciliation report of each status finished (Unix time).",
            labels=["status"])
        Status = ReconciliationReport.Status
        for status in (Status.COMPLETE, Status.FAILED):
            report = (ReconciliationReport.objects.filter(status=status, finished_at__isnull=False)
                      .order_by("-finished_at").values("created_at", "finished_at").first())
            if report:
                last.add_metric([status], (report["finished_at"] - report["created_at"]).total_seconds())
                finished.add_metric([status], report["finished_at"].timestamp())
        yield from (last, finished)
        yield from _reports_kept()
        yield _clock_offsets(day)
        yield _notices_unsent()
        yield _late_rounds()


def _notices_unsent() -> GaugeMetricFamily:
    """Notices of the last day not sent yet (the mail server refused them and no retry has gone,
    or nobody could be told), by why: above zero, the supervisors may not know what they must."""
    unsent = GaugeMetricFamily(
        "table_audit_notices_unsent",
        "Notices of the last 24 hours not sent yet (refused with no retry sent since, or nobody to tell), by why.",
        labels=["why"])
    for why, n in notices_unsent(since=timezone.now() - timedelta(days=1)).items():
        unsent.add_metric([why], n)
    return unsent


def _late_rounds() -> GaugeMetricFamily:
    """Each table's rounds stored in the last hour for days already ended (each makes a reported
    day stale): past LATE_ROUNDS_ALERT_PER_HOUR the tonight page marks the table."""
    late = GaugeMetricFamily(
        "table_audit_late_rounds_last_hour",
        "Rounds each table stored in the last hour for gaming days already ended.", labels=["table"])
    for one in late_rounds(since=timezone.now() - timedelta(hours=1)):
        late.add_metric([one.table], one.rounds)
    return late


def _reports_kept():
    """Whether every ended gaming day since the books opened has its report, and whether one is stuck."""
    kept = reports_kept(books_open=window_opens(), last_ended=day_to_reconcile())
    yield GaugeMetricFamily(
        "table_audit_reconciliation_days_missing",
        "Ended gaming days since the earliest open month without a current report of their own.",
        value=kept.days_missing)
    yield GaugeMetricFamily(
        "table_audit_reconciliation_days_stale",
        "Ended gaming days whose current report was made before late rounds of the day were stored.",
        value=kept.days_stale)
    if kept.last_complete_day is not None:
        yield GaugeMetricFamily(
            "table_audit_reconciliation_last_complete_day_timestamp_seconds",
            "The latest gaming day whose own report is current (its date, 00:00 UTC, as Unix time).",
            value=datetime.combine(kept.last_complete_day, time(), tzinfo=UTC).timestamp())
    yield GaugeMetricFamily(
        "table_audit_reconciliation_oldest_running_seconds",
        "Seconds since the oldest reconciliation report still running was opened (0: none runs).",
        value=(timezone.now() - kept.oldest_running_since).total_seconds() if kept.oldest_running_since else 0)


def _clock_offsets(day) -> GaugeMetricFamily:
    """Each table's clock against the service's, by its round received last today: dealt_at
    minus received_at (a round is in flight a moment, so a little below 0 is a right clock;
    past the clock tolerance the round is flagged dealt_in_future). A wrong clock dates its
    rounds into the day before or after: those days are read too, by when they were received."""
    offsets = GaugeMetricFamily(
        "table_audit_table_clock_offset_seconds",
        "dealt_at minus received_at of each table's round received last in the current gaming day.",
        labels=["table"])
    began, _ = gaming_day_window(day, time_zone=settings.GAMING_DAY_TIME_ZONE,
                                 cutoff_hour=settings.GAMING_DAY_CUTOFF_HOUR)
    latest = Round.objects.filter(
        table=OuterRef("pk"), gaming_day__range=(day - timedelta(days=1), day + timedelta(days=1)),
        received_at__gte=began,
    ).order_by("-received_at")
    tables = Table.objects.annotate(
        dealt=Subquery(latest.values("dealt_at")[:1]), received=Subquery(latest.values("received_at")[:1]),
    ).filter(received__isnull=False).order_by("code").values_list("code", "dealt", "received")
    for code, dealt, received in tables:
        offsets.add_metric([code], (dealt - received).total_seconds())
    return offsets


def _count():
    return Count("id")
