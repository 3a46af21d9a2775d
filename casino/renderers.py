"""The JSON every API answer is written in: DRF's, with orjson writing the common case.

A batch's answer is some 2 KB a round, which orjson writes several times
faster than the json module DRF uses (docs/SCALING.md). Only the compact, UTF-8
form DRF gives by default is written by orjson, and only values orjson writes
exactly as DRF would: moments, days and times go to DRF's own encoder (which
writes UTC as ``Z``), as does anything else orjson does not know (lazy
translations, querysets); a Decimal is written as its exact text, where DRF
would write a float. Whatever orjson refuses (a key that is not a string,
an integer past 64 bits) DRF writes itself. Either way U+2028 and U+2029 are
escaped, as DRF does, so the answer is also a strict JavaScript literal.
"""

from __future__ import annotations

from decimal import Decimal

import orjson
from rest_framework import renderers
from rest_framework.utils import encoders

_AS_DRF = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


class MoneyExactEncoder(encoders.JSONEncoder):
    """DRF's encoder, but a Decimal is written as its exact text, never as a float.

    Serializers already give amounts as text; this keeps a Decimal that reaches
    an answer some other way (an error body, a view's own dict) exact too.
    """

    def default(self, obj):
        if isinstance(obj, Decimal):
            return str(obj)
        return super().default(obj)


class JSONRenderer(renderers.JSONRenderer):
    encoder_class = MoneyExactEncoder

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if (
            data is not None and self.compact and not self.ensure_ascii
            and self.get_indent(accepted_media_type, renderer_context or {}) is None
        ):
            try:
                text = orjson.dumps(data, default=self.encoder_class().default, option=_AS_DRF)
            except TypeError:  # orjson.JSONEncodeError
                pass
            else:
                return text.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        return super().render(data, accepted_media_type, renderer_context)
