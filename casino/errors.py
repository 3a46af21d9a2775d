"""Every API error in its one shape (``infra.error_shape``).

Expected failures keep their 4xx (Django's own 404 and 403, and a body past
the size limit, 413, included); a database that cannot serve right now is a
503 the client may retry; anything else stays a 500 and is logged with its
stack trace, never shown to the client.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError
from django.http import Http404, JsonResponse
from rest_framework import status
from rest_framework.exceptions import (
    APIException,
    NotFound,
    ParseError,
    PermissionDenied,
    ValidationError,
)
from rest_framework.response import Response
from rest_framework.views import exception_handler

from infra.error_shape import error_body
from infra.request_ids import request_id_of
from trail.services import Actor, audit_record

from .error_pages import page_not_found_page, permission_denied_page

logger = logging.getLogger(__name__)


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

    if isinstance(exc, RequestDataTooBig):
        # Django would answer its bare HTML 400; the round intake's 413 is the one shape.
        message = f"The body is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE}-byte limit."
        return Response(
            error_body("body_too_large", message, request, {"body": [message]}),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )

    # DRF turns Django's own 404 and 403 (get_object_or_404, a missing object)
    # into its exceptions inside its handler only; turn them here so that they
    # get the error shape too, not {"detail": ...}.
    if isinstance(exc, Http404):
        exc = NotFound(*exc.args[:1])
    elif isinstance(exc, DjangoPermissionDenied):
        exc = PermissionDenied(*exc.args[:1])

    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, PermissionDenied) and request is not None:
        _log_refusal(request, exc)
    if isinstance(exc, ValidationError):
        response.data = error_body(
            "invalid", "The request has invalid fields; see errors.", request, response.data
        )
    elif isinstance(exc, ParseError):
        # A body that is not JSON at all: named as the body's fault, as the round intake does.
        response.data = error_body("parse_error", str(exc.detail), request, {"body": [str(exc.detail)]})
    elif isinstance(exc, APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        # A conflict about one field (an approver tied to the asker) names it, as a 400 does.
        response.data = error_body(code, str(exc.detail), request, getattr(exc, "field_errors", None))
    return response


def _log_refusal(request, exc) -> None:
    """Someone who proved who they are tried what their role does not allow: keep a trace."""
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


def page_not_found(request, exception=None):
    """A path no route matches: the API's error shape under /api/, the admin's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            error_body("not_found", f"No endpoint at {request.path}.", request), status=404
        )
    return page_not_found_page(request)


def permission_denied(request, exception=None):
    """A refusal outside the API's views: the error shape under /api/, the admin's page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            error_body("permission_denied", "You do not have permission to perform this action.", request),
            status=403,
        )
    return permission_denied_page(request)
