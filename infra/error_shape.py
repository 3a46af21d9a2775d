"""The one shape of every API error, which tables and staff clients read.

``{"code": "...", "message": "...", "errors": {field: [messages]}, "request_id": "..."}``
"""

from __future__ import annotations

from .request_ids import request_id_of


def error_body(code: str, message: str, request, errors=None) -> dict:
    body = {"code": code, "message": message, "request_id": request_id_of(request)}
    if errors is not None:
        body["errors"] = errors
    return body
