"""A body as the wire contract reads it: UTF-8 JSON, no NaN or Infinity, not absurdly deep; and
what the table sent made storable as text, so a refusal quoting it is kept, never a 500."""

from __future__ import annotations

from infra.jsons import read_json


class UnreadableBody(ValueError):
    pass


def storable(value):
    """``value`` as text PostgreSQL keeps: NUL characters and lone surrogates (which
    JSON's ``\\ud800`` escapes can carry, and UTF-8 cannot) written out as escapes.

    Error messages may quote what the table sent (an unknown decision, an
    unknown ``paid`` key); the refusal must still be kept, not turn into a 500.
    """
    if isinstance(value, str):
        if value.isascii():
            return value.replace("\x00", "\\x00")
        return value.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value


def _no_constants(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(body: bytes):
    """JSON as tables must send it: UTF-8, no NaN or Infinity, not absurdly deep."""
    try:
        return read_json(body, parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        raise UnreadableBody(f"The body is not valid JSON: {exc}") from None
