"""The hash of an audit event over a canonical serialisation (no Django here)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any

GENESIS = "0" * 64
HASHED_FIELDS = (
    "seq", "at", "actor_kind", "actor_id", "actor_name", "action",
    "object_type", "object_id", "object_repr", "before", "after", "request_id", "prev_hash",
)


def canonical(fields: dict[str, Any]) -> bytes:
    data = {}
    for name in HASHED_FIELDS:
        value = fields[name]
        if isinstance(value, datetime):
            value = value.astimezone(timezone.utc).isoformat(timespec="microseconds")
        data[name] = value
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def event_hash(fields: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(fields)).hexdigest()
