"""Log lines as JSON objects naming their request id, table and person; gunicorn's access line too."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.signals import request_finished
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.functional import SimpleLazyObject

from casino.logs import (
    TABLE_ENVIRON,
    USER_ENVIRON,
    JsonFormatter,
    RequestContextFilter,
    RequestLogContextMiddleware,
)
from tests.api.records import ROUNDS, record

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def lines():
    """The JSON lines the root logger writes meanwhile, as the settings' ``json`` handler writes them."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestContextFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        root.removeHandler(handler)


@pytest.mark.django_db
def test_a_tables_request_logs_its_request_id_and_table(table_client, lines, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("the store broke")

    monkeypatch.setattr("api.rounds.intake.ingest_round", broken)
    client = table_client("S01", "se-50kr")
    response = client.post(ROUNDS, record("L-1"), format="json", HTTP_X_REQUEST_ID="req-logs-1")
    assert response.status_code == 500
    written = [line for line in lines() if line["logger"] == "api.rounds.intake"]
    assert len(written) == 1
    line = written[0]
    assert list(line)[:7] == ["timestamp", "level", "logger", "message", "request_id", "table", "user"]
    assert line["level"] == "ERROR"
    assert line["message"] == "round L-1 of table S01 could not be stored"
    assert (line["request_id"], line["table"], line["user"]) == ("req-logs-1", "S01", "")
    assert "RuntimeError: the store broke" in line["exc_info"]
    datetime.fromisoformat(line["timestamp"])
    # Django's own line about the failed request, written after the middleware returned, names it too.
    [django_line] = [line for line in lines() if line["logger"] == "django.request"]
    assert (django_line["request_id"], django_line["table"], django_line["status_code"]) == ("req-logs-1", "S01", 500)
    assert "request" not in django_line  # the request object itself is never written out
    # Outside any request the same fields are there, empty.
    logging.getLogger("tests.logs").warning("after the request")
    after = lines()[-1]
    assert (after["message"], after["request_id"], after["table"], after["user"]) == ("after the request", "", "", "")


def test_a_persons_request_logs_the_username_and_leaves_it_for_the_access_line(lines, django_user_model):
    person = django_user_model(username="auditor-anna")

    def view(request):
        request.user = person  # as Django's or DRF's authentication leaves it
        logging.getLogger("tests.logs").info("looked at findings")
        return HttpResponse()

    request = RequestFactory().get("/api/v1/findings/")
    request.request_id = "req-logs-2"
    logging.getLogger("tests.logs").setLevel(logging.INFO)
    try:
        RequestLogContextMiddleware(view)(request)
        request_finished.send(sender=None)
    finally:
        logging.getLogger("tests.logs").setLevel(logging.NOTSET)
    line = lines()[-1]
    assert (line["message"], line["request_id"], line["table"], line["user"]) == (
        "looked at findings", "req-logs-2", "", "auditor-anna")
    assert (request.META[TABLE_ENVIRON], request.META[USER_ENVIRON]) == ("", "auditor-anna")


# request_finished also closes old database connections, which a test before may have left.
@pytest.mark.django_db
def test_a_user_not_yet_looked_up_is_not_looked_up_for_a_log_line(lines):
    looked_up = []

    def view(request):
        request.user = SimpleLazyObject(lambda: looked_up.append(1) or AnonymousUser())
        logging.getLogger("tests.logs").warning("early")
        return HttpResponse()

    request = RequestFactory().get("/admin/")
    request.request_id = "req-logs-3"
    RequestLogContextMiddleware(view)(request)
    request_finished.send(sender=None)
    assert looked_up == []
    assert (lines()[-1]["request_id"], lines()[-1]["user"]) == ("req-logs-3", "")


def test_the_settings_write_json_lines_when_asked():
    script = "import django, logging; django.setup(); logging.getLogger('tests.logs').warning('hello %s', 'there')"
    env = {**os.environ, "LOG_FORMAT": "json", "DJANGO_SETTINGS_MODULE": "casino.settings"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True)
    line = json.loads(done.stderr.strip().splitlines()[-1])
    assert (line["level"], line["logger"], line["message"]) == ("WARNING", "tests.logs", "hello there")
    assert (line["request_id"], line["table"], line["user"]) == ("", "", "")


def test_celery_logs_through_the_same_settings():
    script = ("import django, logging; django.setup(); from casino.celery import app; "
              "app.log.setup(loglevel='INFO'); logging.getLogger('celery.app.trace').info('task done')")
    env = {**os.environ, "LOG_FORMAT": "json", "DJANGO_SETTINGS_MODULE": "casino.settings"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True)
    line = json.loads(done.stderr.strip().splitlines()[-1])
    assert (line["logger"], line["message"], line["request_id"]) == ("celery.app.trace", "task done", "")


ACCESS = """
import runpy, sys
from datetime import timedelta
from types import SimpleNamespace
from gunicorn.config import Config
from gunicorn.glogging import Logger

conf = runpy.run_path("gunicorn.conf.py")
cfg = Config()
for name in ("accesslog", "errorlog", "loglevel", "logconfig_dict"):
    cfg.set(name, conf[name])
log = Logger(cfg)
environ = {"REQUEST_METHOD": "POST", "RAW_URI": "/api/v1/rounds/?x=\\\\\\"", "SERVER_PROTOCOL": "HTTP/1.1",
           "PATH_INFO": "/api/v1/rounds/", "QUERY_STRING": "x=\\\\\\"", "REMOTE_ADDR": "10.1.2.3",
           "HTTP_USER_AGENT": 'table "S01" firmware', "table_audit.table": "S01", "table_audit.user": ""}
resp = SimpleNamespace(status="201 Created", sent=512, headers=[("X-Request-ID", "req-access-1")])
req = SimpleNamespace(headers=[("USER-AGENT", 'table "S01" firmware')])
log.access(resp, req, environ, timedelta(milliseconds=12, microseconds=345))
for handler in log.access_log.handlers:
    handler.flush()
"""


def test_gunicorns_access_line_is_json_with_the_request_id_and_table(tmp_path):
    access = tmp_path / "access.log"
    env = {**os.environ, "LOG_FORMAT": "json", "GUNICORN_ACCESS_LOG": str(access)}
    subprocess.run([sys.executable, "-c", ACCESS], cwd=ROOT, env=env, check=True, capture_output=True)
    [line] = [json.loads(text) for text in access.read_text().splitlines()]
    assert line["request_id"] == "req-access-1"
    assert (line["table"], line["user"]) == ("S01", "")
    assert (line["method"], line["path"], line["status"], line["bytes"]) == ("POST", "/api/v1/rounds/", 201, 512)
    assert line["remote"] == "10.1.2.3"
    assert line["duration_ms"] == 12.345
    assert line["user_agent"] == 'table "S01" firmware'
    assert line["message"] == 'POST /api/v1/rounds/?x=\\" HTTP/1.1'  # as the table sent it
    assert line["logger"] == "gunicorn.access"


def test_access_log_on_by_default_and_off_when_emptied():
    read = "import runpy; print(runpy.run_path('gunicorn.conf.py')['accesslog'])"
    env = {k: v for k, v in os.environ.items() if k != "GUNICORN_ACCESS_LOG"}
    on = subprocess.run([sys.executable, "-c", read], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    off = subprocess.run([sys.executable, "-c", read], cwd=ROOT, env={**env, "GUNICORN_ACCESS_LOG": ""},
                         capture_output=True, text=True, check=True)
    assert (on.stdout.strip(), off.stdout.strip()) == ("-", "None")


def test_a_refusal_is_one_line_and_a_failure_keeps_its_traceback():
    """A 403 (Django passes its PermissionDenied along) is logged without a traceback; a 500's is kept."""
    from casino.logs import RefusalsWithoutTraceback

    def logged(status: int) -> logging.LogRecord:
        try:
            raise RuntimeError("refused")
        except RuntimeError:
            record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Forbidden: %s",
                                       ("/admin/x/",), sys.exc_info())
        record.status_code = status
        assert RefusalsWithoutTraceback().filter(record)
        return record

    assert logged(403).exc_info is None and logged(400).exc_info is None
    assert logged(500).exc_info is not None


def test_the_console_handler_drops_a_refusal_s_traceback(settings):
    assert "refusals" in settings.LOGGING["handlers"]["console"]["filters"]
    assert settings.LOGGING["filters"]["refusals"]["()"] == "casino.logs.RefusalsWithoutTraceback"
