"""A request id on every request: taken from the proxy or made here, echoed back."""

from __future__ import annotations

import re
import uuid

from django.http import HttpRequest, HttpResponse, HttpResponseForbidden

_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
HEADER = "X-Request-ID"


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        given = request.headers.get(HEADER, "")
        request.request_id = given if _SAFE_ID.match(given) else uuid.uuid4().hex
        response = self.get_response(request)
        response[HEADER] = request.request_id
        return response


def request_id_of(request) -> str:
    return getattr(request, "request_id", "") or getattr(
        getattr(request, "_request", None), "request_id", ""
    )


class TableKeyOnAdminMiddleware:
    """A table's key belongs to the table API; shown to the admin, it is refused and logged."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/admin/") and request.headers.get("Authorization", "").startswith("Bearer "):
            from audit.services import Actor, audit_record

            audit_record(
                actor=Actor(kind="table", id="", name="unverified table key"),
                action="admin.table_key_refused", object_type="endpoint",
                object_id=request.path[:64], object_repr=f"{request.method} {request.path}"[:200],
                request_id=request_id_of(request),
            )
            return HttpResponseForbidden("Table keys are for the table API only.")
        return self.get_response(request)
