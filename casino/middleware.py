"""A request id on every request; a table's key kept off the admin; a chunked body read for
every endpoint but a table's posts; the people's middleware kept off a table's posts; a NUL in a
person's address or form refused before a page reads it."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware as _AuthenticationMiddleware
from django_otp.middleware import OTPMiddleware as _OTPMiddleware
from django.contrib.messages.middleware import MessageMiddleware as _MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware as _SessionMiddleware
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, JsonResponse
from rest_framework.exceptions import AuthenticationFailed, Throttled

from api.authentication import TableKeyAuthentication
from casino.error_pages import bad_request_page
from infra.chunked import LengthRequired, PastLimit, is_chunked, read_chunked
from infra.error_shape import error_body
from infra.refusals import REFUSALS
from infra.request_ids import HEADER, request_id_given, request_id_of
from trail.services import Actor, audit_record


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.request_id = request_id_given(request)
        response = self.get_response(request)
        response[HEADER] = request.request_id
        return response


# Where tables post rounds (api/rounds/urls.py under casino/urls.py's "api/v1/").
TABLE_POSTS = frozenset({"/api/v1/rounds/", "/api/v1/rounds/batch"})


class TableKeyOnAdminMiddleware:
    """A table's key belongs to the table API; shown to the admin, it is refused.

    A key in force is an authenticated table: its refusal is an audit event of
    that table. Any other (a junk key, anyone's) goes to the application's log,
    throttled (``infra.refusals``): nobody unproven writes to the audit log.

    It also marks a table's post of rounds (``request.table_post``): a table
    key's ``POST`` to ``TABLE_POSTS``, which only ``TableKeyAuthentication``
    can authenticate. Such a request never uses a session, a Django user or
    messages, so their middleware (``_people_only`` below) stands aside for it.
    (Django's and django-axes' checks look for CSRF's and axes' middleware by
    name, and both cost little here: they stay.)
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.META.get("HTTP_AUTHORIZATION", "").startswith("Bearer "):
            return self.get_response(request)
        if request.method == "POST" and request.path_info in TABLE_POSTS:
            request.table_post = True
            return self.get_response(request)
        if request.path.startswith("/admin/"):
            table = _table_proven(request)
            if table is None:
                # Nobody proved who they are: the application's log, throttled, never the audit log.
                REFUSALS.note("table key on the admin", f"{request.method} {request.path}"[:200])
            else:
                audit_record(
                    actor=Actor.of_table(table), action="admin.table_key_refused", object_type="endpoint",
                    object_id=request.path[:64], object_repr=f"{request.method} {request.path}"[:200],
                    request_id=request_id_of(request),
                )
            return HttpResponseForbidden("Table keys are for the table API only.")
        return self.get_response(request)


def _table_proven(request: HttpRequest):
    """The table whose key the request carries, if the key is one in force; None otherwise."""
    try:
        proven = TableKeyAuthentication().authenticate(request)
    except (AuthenticationFailed, Throttled):  # Throttled: too many wrong keys from its address
        return None
    return proven[0].table if proven else None


class ChunkedBodyMiddleware:
    """A chunked body read to its end before anything reads the request (``infra.chunked``),
    so that every endpoint sees it as if it had come with its Content-Length.

    A table's post of rounds is left to the round intake, which keeps every
    body it refuses, on a round's own limit. Any other is refused 411 from a
    server that cannot say where the body ends and 413 past
    ``DATA_UPLOAD_MAX_MEMORY_SIZE``, in the error shape under /api/.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_chunked(request.META) and not _is_table_post(request):
            try:
                read_chunked(request, limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
            except LengthRequired as refusal:
                return _body_refused(request, 411, "length_required", str(refusal))
            except PastLimit as refusal:
                return _body_refused(request, 413, "body_too_large", str(refusal))
        return self.get_response(request)


def _is_table_post(request: HttpRequest) -> bool:
    return request.method == "POST" and request.path_info in TABLE_POSTS


def _body_refused(request: HttpRequest, status: int, code: str, message: str) -> HttpResponse:
    if not request.path_info.startswith("/api/"):
        return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    return JsonResponse(error_body(code, message, request, {"body": [message]}), status=status)


def _people_only(middleware: type) -> type:
    """``middleware``, standing aside for a table's post of rounds (``request.table_post``).

    A subclass, so that Django's checks still find the middleware the admin needs.
    """

    def __call__(self, request):
        if getattr(request, "table_post", False):
            return self.get_response(request)
        return middleware.__call__(self, request)

    body = {"__call__": __call__, "__module__": __name__, "__doc__": f"{middleware.__name__}, for people's requests."}
    if hasattr(middleware, "process_view"):
        def process_view(self, request, *args):
            if getattr(request, "table_post", False):
                return None
            return middleware.process_view(self, request, *args)

        body["process_view"] = process_view
    return type(middleware.__name__, (middleware,), body)


SessionMiddleware = _people_only(_SessionMiddleware)
AuthenticationMiddleware = _people_only(_AuthenticationMiddleware)
# Whether the person's session has proven his second factor (``request.user.is_verified()``).
OTPMiddleware = _people_only(_OTPMiddleware)
MessageMiddleware = _people_only(_MessageMiddleware)


class NulRefusedMiddleware:
    """A person's page whose address or form holds a NUL character answers 400, naming the value.

    PostgreSQL keeps no NUL in text, so a list filtered, searched or ordered by
    one could only fail, on every page that reads its address its own way. The
    API's views word their own refusals, field by field, and a table's post is
    read by the round record's rules.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith("/api/") and not getattr(request, "table_post", False):
            found = _holding_nul(request.GET) or (request.method == "POST" and _holding_nul(request.POST))
            if found:
                return bad_request_page(request, f"The value of {found} holds a NUL character, which no page reads.")
        return self.get_response(request)


def _holding_nul(values) -> str:
    for name, listed in values.lists():
        if "\x00" in name or any("\x00" in value for value in listed):
            return repr(name.replace("\x00", "\\x00"))
    return ""
