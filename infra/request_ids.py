"""A request's id: the one its client sent in ``X-Request-ID`` when it is safe to log, else a new one.

Every audit event, log line and error body names it, so that one request can
be followed through all three. ``casino.middleware.RequestIdMiddleware`` sets
it on each request and answers with it.
"""

from __future__ import annotations

import re
import uuid

HEADER = "X-Request-ID"
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def request_id_given(request) -> str:
    """The client's id if it is one a log can hold as it is, else a new one."""
    given = request.headers.get(HEADER, "")
    return given if _SAFE_ID.match(given) else uuid.uuid4().hex


def request_id_of(request) -> str:
    """The id of ``request`` (Django's, or DRF's wrapping it); "" before the middleware ran."""
    return getattr(request, "request_id", "") or getattr(
        getattr(request, "_request", None), "request_id", ""
    )
