"""JSON where every round passes through: orjson first, the json module where orjson says no.

orjson reads and writes JSON several times faster than the standard library
(docs/SCALING.md has the figures), but it differs in a few corners: it reads
an integer past 64 bits as a float (the json module keeps it exact), and
refuses strings with lone surrogates and NaN. A text with a run of 19 digits
or more goes to the json module unread by orjson, and whatever orjson refuses
the json module does, so every input is judged exactly as before.

Hashes are not made here: a round's record hash and the audit chain keep the
json module's own canonical form (rounds.services.ingest.record_hash,
trail.chain), whose bytes every stored hash was computed over.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import orjson

# 19 digits in a row may already be past a 64-bit integer: such a text is the json
# module's. Every digit made "0" and every other byte " ", such a run is 19 zeros:
# one translate and one substring search, several times cheaper than a regular
# expression (docs/SCALING.md, "Figures behind the comments").
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_NINETEEN_DIGITS = b"0" * 19


def _long_number(text: str | bytes) -> bool:
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    return _NINETEEN_DIGITS in raw.translate(_DIGITS_AS_ZERO)


def read_json(text: str | bytes, *, parse_constant: Callable | None = None):
    """``json.loads(text)``, faster. ``parse_constant`` as json's: called for NaN and Infinity,
    which orjson never accepts, so such a text always reaches it through the json module."""
    if not _long_number(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text, parse_constant=parse_constant)


def write_json(value, *, default: Callable | None = None) -> str:
    """Compact JSON text of ``value``; ``default`` turns what neither writer knows into JSON.

    What orjson refuses the json module writes in ASCII, escapes and all: a
    lone surrogate, which UTF-8 cannot hold, still reads back as itself.
    """
    try:
        return orjson.dumps(value, default=default).decode()
    except TypeError:  # orjson.JSONEncodeError: an integer past 64 bits, a lone surrogate
        return json.dumps(value, default=default, separators=(",", ":"))
