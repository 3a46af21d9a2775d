"""The API's one error shape (``infra.error_shape``) and the refusals its operations share,
as docs/openapi.yaml states them.

Each view lists every status it can answer; a refusal that means the same
wherever it is answered is worded here, once, and a view takes the sets that
apply to the way it reads its caller and its input.
"""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers

from . import openapi_pydantic  # noqa: F401 (answers declared as pydantic models, in OpenAPI 3.0)

ERROR = inline_serializer(
    "Error",
    {
        "code": serializers.CharField(),
        "message": serializers.CharField(),
        "request_id": serializers.CharField(),
        "errors": serializers.DictField(required=False),
    },
)


def refusal(when: str) -> OpenApiResponse:
    """An answer in the error shape, and when it is given."""
    return OpenApiResponse(ERROR, when)


def answers(*sets: dict) -> dict:
    """``extend_schema``'s responses: the sets merged (a later one words a status its own way),
    in the order of their statuses."""
    merged = {status: answer for one in sets for status, answer in one.items()}
    return dict(sorted(merged.items(), key=lambda item: _code(item[0])))


def _code(status) -> int:
    """A response's status, however it is keyed: 201, "202" or (200, "text/csv")."""
    return int(status[0] if isinstance(status, tuple) else status)


# DRF answers these before the view reads anything: content negotiation first,
# the throttles once the caller is known and allowed.
EVERY_REQUEST = {
    406: refusal("The Accept header admits neither application/json nor the browsable API's HTML."),
    429: refusal("The caller's request rate is spent (code throttled); retry after Retry-After seconds."),
}

# The CSV exports negotiate as every view does, before the CSV is written: text/csv
# is not among what they negotiate, so a client asks with */* or no Accept at all.
CSV_REQUEST = {
    **EVERY_REQUEST,
    406: refusal("The Accept header admits neither application/json nor the browsable API's HTML; "
                 "one of text/csv alone is refused too, so send Accept */* or none."),
}

# Where a table's key or a password is asked for before a session, a caller nobody
# vouches for is told so with a challenge.
NOT_AUTHENTICATED = {
    401: refusal("No credentials, or ones that prove nobody: a table key unknown, expired or revoked, "
                 "a wrong password, or a login locked out after repeated failures."),
}

STAFF_ONLY = {
    **NOT_AUTHENTICATED,
    403: refusal("A table's key, or a person without read access to this data."),
}

# Where a session is asked for first: it has no challenge, so a caller nobody vouches
# for is refused as one not allowed.
STAFF_ONLY_SESSION_FIRST = {
    403: refusal("No credentials or ones that prove nobody (a wrong password, a login locked out), "
                 "a table's key, or a person without read access to this data."),
}

PERSON_WRITE = {
    **NOT_AUTHENTICATED,
    403: refusal("A table's key, a person whose role does not allow this, or a session's write "
                 "without its CSRF token."),
}

# A body read by DRF's JSON parser (every write but a table's post of rounds).
JSON_BODY = {
    400: refusal("The body is not JSON, or a field of it is invalid; errors names them."),
    413: refusal("The body is larger than the limit (code body_too_large)."),
    415: refusal("The body's Content-Type is not application/json."),
}

# A list read a page at a time, its filters by django-filter.
FILTERED_PAGES = {
    400: refusal("A filter's value is not one it reads; errors names the filter."),
    404: refusal("The cursor is not one this list handed out."),
}


def staff_pages(serializer, refused: dict = STAFF_ONLY):
    """A staff list's ``GET`` as the schema states it: a page of ``serializer``, or a refusal."""
    return extend_schema_view(get=extend_schema(
        responses=answers({200: serializer}, refused, FILTERED_PAGES, EVERY_REQUEST),
    ))


def staff_item(serializer, missing: str, refused: dict = STAFF_ONLY):
    """A staff read of one thing: ``serializer``, the 404 when there is no such thing (``missing``
    says so), or a refusal."""
    return extend_schema_view(get=extend_schema(
        responses=answers({200: serializer, 404: refusal(missing)}, refused, EVERY_REQUEST),
    ))
