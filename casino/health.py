"""``/healthz`` and ``/readyz``: whether this process lives, and whether it can serve.

Load balancers and orchestrators ask these, unauthenticated and often, and
over plain HTTP with a Host header of their own (an address). So the answer
says nothing an outsider could use: ``/readyz`` names only the checks that
failed, never a host, an exception's text or a version; what went wrong goes
to the application's log, for the operator.

``ProbesMiddleware``, first in ``MIDDLEWARE``, answers these two and
``/metrics`` before the rest of the stack: no HTTPS redirect (a probe over
HTTP would only ever see the redirect), no ALLOWED_HOSTS check, no session,
no table key, no throttle. ``casino/urls.py`` routes the same views, so
they are in the URL inventory as well.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from trail.models import ChainHead

from .celery import app
from .metrics_endpoint import metrics

logger = logging.getLogger("casino.health")

# Probes come every few seconds from each balancer; one set of checks serves
# every probe that arrives within this many seconds in a process.
READY_FOR_SECONDS = 1.0
BROKER_TIMEOUT_SECONDS = 2.0


@never_cache
@require_safe
def healthz(request):
    """The process answers: nothing else is asked, so a database outage never restarts it."""
    return _answer({"status": "alive"}, 200)


@never_cache
@require_safe
def readyz(request):
    failing, degraded = readiness_failing(), readiness_degraded()
    if failing:
        return _answer({"status": "unavailable", "failing": failing} | ({"degraded": degraded} if degraded else {}),
                       503)
    if degraded:
        # Still ready: what is degraded costs no round and no page (a balancer must keep sending).
        return _answer({"status": "degraded", "degraded": degraded}, 200)
    return _answer({"status": "ready"}, 200)


def _answer(body: dict, status: int) -> JsonResponse:
    response = JsonResponse(body, status=status)
    response["X-Content-Type-Options"] = "nosniff"
    return response


def readiness_failing() -> list[str]:
    """The names of the checks that fail now (empty: ready), at most once a ``READY_FOR_SECONDS``."""
    return _failing(CHECKS, _LAST)


def readiness_degraded() -> list[str]:
    """The names of the checks that fail now but leave the service serving: the cache, whose
    throttles then let requests through (``api.throttling``). Checked at the same pace."""
    return _failing(DEGRADATIONS, _DEGRADED)


def _failing(checks, memo: list) -> list[str]:
    with _LAST_LOCK:
        at, failing = memo
        if time.monotonic() - at < READY_FOR_SECONDS:
            return list(failing)
    failing = [name for name, check in checks if not _passes(name, check)]
    with _LAST_LOCK:
        memo[:] = [time.monotonic(), failing]
    return list(failing)


def readiness_forget() -> None:
    """The next probe checks again (for tests, and after a change an operator made)."""
    with _LAST_LOCK:
        _LAST[:] = [float("-inf"), []]
        _DEGRADED[:] = [float("-inf"), []]


def _passes(name: str, check) -> bool:
    try:
        return check() is not False
    except Exception:
        logger.warning("readiness check %s failed", name, exc_info=True)
        return False


def database_reachable() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def migrations_applied() -> bool:
    global _MIGRATED
    if _MIGRATED:
        # The code of a running process never gains a migration, and none is ever unapplied.
        return True
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        logger.warning("readiness: %d migrations not applied", len(plan))
        return False
    _MIGRATED = True
    return True


def broker_reachable() -> None:
    """The Celery broker answers, when there is one (without, tasks run inline)."""
    if not settings.CELERY_BROKER_URL:
        return
    with app.connection_for_write(settings.CELERY_BROKER_URL, connect_timeout=BROKER_TIMEOUT_SECONDS) as broker:
        broker.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=BROKER_TIMEOUT_SECONDS)


def cache_reachable() -> None:
    cache.get("readyz-probe")


def audit_chain_head_readable() -> None:
    list(ChainHead.objects.filter(pk=1).values_list("seq", "hash"))


CHECKS = (
    ("database", database_reachable),
    ("migrations", migrations_applied),
    ("broker", broker_reachable),
    ("audit_chain", audit_chain_head_readable),
)

DEGRADATIONS = (
    ("cache", cache_reachable),
)

_MIGRATED = False
_LAST_LOCK = threading.Lock()
_LAST: list = [float("-inf"), []]
_DEGRADED: list = [float("-inf"), []]


class ProbesMiddleware:
    """Answers ``/healthz``, ``/readyz`` and ``/metrics`` ahead of every other middleware."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.views = {"/healthz": healthz, "/readyz": readyz, "/metrics": metrics}

    def __call__(self, request):
        view = self.views.get(request.path_info)
        if view is None:
            return self.get_response(request)
        return view(request)
