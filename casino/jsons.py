"""JSON where every round passes through: orjson first, the json module where orjson says no.

orjson reads and writes JSON several times faster than the standard library
(docs/SCALING.md has the figures), but it differs in a few corners: it reads
an integer past 64 bits as a float (the json module keeps it exact), and
refuses strings with lone surrogates and NaN. A text with a run of 19 digits
or more goes to the json module unread by orjson, and whatever orjson refuses
the json module does, so every input is judged exactly as before.

Hashes are not made here: a round's record hash and the audit chain keep the
json module's own canonical form (rounds.services.ingest.record_hash,
audit.chain), whose bytes every stored hash was computed over.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import orjson

# 19 digits may already be past a signed 64-bit integer: such a text is the json module's.
_LONG_NUMBER_TEXT = re.compile(r"\d{19}")
_LONG_NUMBER_BYTES = re.compile(rb"\d{19}")


def read_json(text: str | bytes, *, parse_constant: Callable | None = None):
    """``json.loads(text)``, faster. ``parse_constant`` as json's: called for NaN and Infinity,
    which orjson never accepts, so such a text always reaches it through the json module."""
    long_number = _LONG_NUMBER_TEXT if isinstance(text, str) else _LONG_NUMBER_BYTES
    if long_number.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text, parse_constant=parse_constant)


def write_json(value, *, default: Callable) -> str:
    """Compact JSON text of ``value``; ``default`` turns what neither writer knows into JSON."""
    try:
        return orjson.dumps(value, default=default).decode()
    except TypeError:  # orjson.JSONEncodeError: an integer past 64 bits, a lone surrogate
        return json.dumps(value, default=default, separators=(",", ":"))
