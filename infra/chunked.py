"""A chunked request body, read where Django would read it as empty.

A body sent ``Transfer-Encoding: chunked`` declares no Content-Length, and
Django reads a request without one as having no body at all. The round
intake (``api.rounds.intake``) and every other endpoint (``casino.middleware``)
read such a body here, one way: to its end where the WSGI server marks its
input as ending with the body (``wsgi.input_terminated``, as gunicorn does),
and never from a server that does not, whose input may run on into the next
request or never end.
"""

from __future__ import annotations

from io import BytesIO

from django.core.handlers.wsgi import LimitedStream
from django.http import UnreadablePostError

# Read in parts of this size, so that a body past the limit is never held whole.
READ_PART = 64 * 1024


class LengthRequired(ValueError):
    def __init__(self):
        super().__init__("A chunked body cannot be read here; send the body with a Content-Length.")


class PastLimit(ValueError):
    """A chunked body past ``limit``: ``read`` is what was read of it, ``limit`` + 1 bytes."""

    def __init__(self, *, limit: int, read: bytes):
        self.limit, self.read = limit, read
        super().__init__(
            f"The body (more than {limit} bytes, sent chunked) is larger than the {limit}-byte limit."
        )


def is_chunked(meta) -> bool:
    """Sent chunked, so read by Django as empty (given a Content-Length too, Django reads that)."""
    return not meta.get("CONTENT_LENGTH") and "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower()


def read_chunked(request, *, limit: int | None) -> bytes:
    """The chunked body of Django's ``request``, read to its end and made the request's body.

    Afterwards the request reads as if the body had come with its
    Content-Length: ``request.body``, ``request.POST`` and DRF's parsers all
    see it. ``LengthRequired`` where the server cannot say where the body
    ends; ``PastLimit`` past ``limit``, having read only one byte past it.
    """
    if not request.META.get("wsgi.input_terminated"):
        raise LengthRequired()
    body = _read_to_end(request.META["wsgi.input"], limit)
    if limit is not None and len(body) > limit:
        raise PastLimit(limit=limit, read=body)
    _as_if_declared(request, body)
    return body


def _read_to_end(stream, limit: int | None) -> bytes:
    parts, size = [], 0
    while limit is None or size <= limit:
        try:
            part = stream.read(READ_PART if limit is None else min(READ_PART, limit + 1 - size))
        except OSError as error:  # a client gone mid-body, as Django reports it for a declared one
            raise UnreadablePostError(*error.args) from error
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def _as_if_declared(request, body: bytes) -> None:
    # What WSGIRequest.__init__ would have made of the same body with its Content-Length.
    request.META["CONTENT_LENGTH"] = str(len(body))
    request.META["wsgi.input"] = BytesIO(body)
    request._stream = LimitedStream(request.META["wsgi.input"], len(body))
