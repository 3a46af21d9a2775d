"""One shape for every API error.

``{"code": "...", "message": "...", "errors": {field: [messages]}, "request_id": "..."}``

Expected failures keep their 4xx; a database that cannot serve right now is a
503 the client may retry; anything else stays a 500 and is logged with its
stack trace, never shown to the client.
"""

from __future__ import annotations

import logging

from django.db import OperationalError
from rest_framework import status
from rest_framework.exceptions import APIException, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler

from .middleware import request_id_of

logger = logging.getLogger(__name__)


def error_body(code: str, message: str, request, errors=None) -> dict:
    body = {"code": code, "message": message, "request_id": request_id_of(request)}
    if errors is not None:
        body["errors"] = errors
    return body


def api_exception_handler(exc, context):
    request = context.get("request")
    if isinstance(exc, OperationalError):
        logger.warning("database unavailable: %s", exc)
        response = Response(
            error_body(
                "service_unavailable",
                "The database cannot serve this request right now; retry it.",
                request,
            ),
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
        )
        response["Retry-After"] = "1"
        return response

    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, PermissionDenied) and request is not None:
        _log_refusal(request, exc)
    if isinstance(exc, ValidationError):
        response.data = error_body(
            "invalid", "The request has invalid fields; see errors.", request, response.data
        )
    elif isinstance(exc, APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        response.data = error_body(code, str(exc.detail), request)
    return response


def _log_refusal(request, exc) -> None:
    """Someone who proved who they are tried what their role does not allow: keep a trace."""
    from audit.services import Actor, audit_record

    user = getattr(request, "user", None)
    if getattr(user, "is_table", False):
        actor = Actor.of_table(user.table)
    elif getattr(user, "is_authenticated", False):
        actor = Actor.of_user(user)
    else:
        return
    try:
        audit_record(
            actor=actor, action="api.refused", object_type="endpoint",
            object_id=f"{request.method} {request.path}"[:64],
            object_repr=f"{request.method} {request.path}"[:200],
            after={"detail": str(exc.detail)}, request_id=request_id_of(request),
        )
    except Exception:  # the refusal stands even if its trace cannot be written
        logger.exception("could not audit a refused request")
