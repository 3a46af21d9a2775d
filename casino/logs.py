"""Log lines as JSON, each carrying the request it was written for.

Operators search the logs of many web workers and threads at once; a line
that names its request id, its table and its person can be followed across
them without guessing which request wrote it. ``RequestLogContextMiddleware``
keeps the request in a context variable for as long as it is served (each
thread of a worker has its own), ``RequestContextFilter`` copies who and
which request onto every record written meanwhile, and ``JsonFormatter``
(python-json-logger) writes the record as one JSON object per line.

gunicorn writes its access line after the response has left Django, when the
context variable is gone, so the middleware also leaves the table and the
person in the request's WSGI environ, where gunicorn's access record can read
them (``AccessJsonFormatter``, configured by gunicorn.conf.py).

Nothing here imports Django at import time: gunicorn's master loads these
formatters before the application.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

from django.core.signals import request_finished
from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

_REQUEST: ContextVar = ContextVar("table_audit_request", default=None)

# Where the middleware leaves who made the request for gunicorn's access line.
TABLE_ENVIRON = "table_audit.table"
USER_ENVIRON = "table_audit.user"

# The fields every line has first, in this order; anything passed in ``extra`` follows.
FIELDS = ("timestamp", "level", "logger", "message", "request_id", "table", "user")


class RequestLogContextMiddleware:
    """Makes the request being served the one its log lines name.

    The request stays named until Django has finished it (``request_finished``),
    not only while the middleware runs: Django writes its own line about a
    refused or failed request (``django.request``) after every middleware has
    returned, and that line is the one an operator looks for first.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        request_finished.connect(_request_forget, dispatch_uid="casino.logs.request_forget")

    def __call__(self, request):
        _REQUEST.set(request)
        try:
            return self.get_response(request)
        finally:
            table, user = who_of(request)
            request.META[TABLE_ENVIRON], request.META[USER_ENVIRON] = table, user


def _request_forget(**kwargs) -> None:
    _REQUEST.set(None)


def who_of(request) -> tuple[str, str]:
    """The table code and the person's username the request was authenticated as, if known yet.

    A person's user is read only once Django or DRF has found it: reading an
    unevaluated lazy user from a log line would query the session in the
    middle of logging, perhaps while a query's own log line is written.
    """
    user = request.__dict__.get("user")
    # A lazy user's ``_wrapped`` is read without looking the user up: until then it is
    # Django's ``empty`` marker, which is neither a table nor a person.
    found = getattr(user, "_wrapped", user)
    table = getattr(found, "table", None)
    if table is not None:
        return getattr(table, "code", ""), ""
    if getattr(found, "is_authenticated", False):
        return "", found.get_username()
    return "", ""


class RequestContextFilter(logging.Filter):
    """Adds ``request_id``, ``table`` and ``user`` to every record (empty outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = _REQUEST.get()
        if request is None:
            record.request_id = getattr(record, "request_id", "")
            record.table = getattr(record, "table", "")
            record.user = getattr(record, "user", "")
            return True
        table, user = who_of(request)
        record.request_id = getattr(request, "request_id", "")
        record.table = table
        record.user = user
        return True


class RefusalsWithoutTraceback(logging.Filter):
    """A request refused as the person's own doing (403, 400: ``status_code`` below 500) is one log
    line: Django passes the exception along, and its traceback says nothing wrong with the service
    while it buries the lines that do."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and 400 <= getattr(record, "status_code", 500) < 500:
            record.exc_info = None
            record.exc_text = None
        return True


class JsonFormatter(_JsonFormatter):
    """One JSON object per line: when, how bad, which logger, the message, the request's context."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        kwargs.setdefault("timestamp", True)
        kwargs.setdefault("json_ensure_ascii", False)
        # Django's request log passes the request itself: its path is in the message already.
        kwargs.setdefault("reserved_attrs", [*RESERVED_ATTRS, "request"])
        super().__init__(*args, fmt=["levelname", "name", "message"], **kwargs)

    def add_fields(self, log_data: dict, record: logging.LogRecord, message_dict: dict) -> None:
        super().add_fields(log_data, record, message_dict)
        for name in ("request_id", "table", "user"):
            log_data.setdefault(name, getattr(record, name, ""))
        rest = dict(log_data)
        log_data.clear()
        log_data.update({name: rest.pop(name) for name in FIELDS if name in rest})
        log_data.update(rest)


class AccessJsonFormatter(JsonFormatter):
    """gunicorn's access record (its atoms in ``record.args``) as one JSON line.

    ``access_log_format`` is not used for the line: gunicorn escapes quotes in
    its atoms but not backslashes, so a JSON template could write lines that
    do not parse.
    """

    def add_fields(self, log_data: dict, record: logging.LogRecord, message_dict: dict) -> None:
        atoms = record.args if isinstance(record.args, dict) else {}
        super().add_fields(log_data, record, message_dict)
        if not atoms:
            return
        log_data["message"] = _atom(atoms, "r")
        log_data["request_id"] = _atom(atoms, "{x-request-id}o")
        log_data["table"] = _atom(atoms, "{%s}e" % TABLE_ENVIRON)
        log_data["user"] = _atom(atoms, "{%s}e" % USER_ENVIRON)
        log_data.update({
            "remote": _atom(atoms, "h"),
            "method": _atom(atoms, "m"),
            "path": _atom(atoms, "U"),
            "status": int(atoms["s"]) if str(atoms.get("s", "")).isdigit() else atoms.get("s"),
            "bytes": atoms.get("B") or 0,
            "duration_ms": round(atoms.get("D", 0) / 1000, 3),
            "user_agent": _atom(atoms, "a"),
        })


def _atom(atoms: dict, name: str) -> str:
    value = atoms.get(name, "")
    # gunicorn's SafeAtoms writes '-' for what is missing and escapes quotes for its own format.
    return "" if value in (None, "-") else str(value).replace('\\"', '"')
