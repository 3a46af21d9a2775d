"""Decimal arithmetic wide enough for every figure the wire contract's amounts can reach.

Python's default context keeps 28 significant digits. ROUND_RECORD.md lets a
wager carry 12 integer digits and a paid amount 15; a report squares wagers
(the variance of the theoretical win) and sums them over every seat of a
range, and keeps those sums to a millionth (``books.figures``):
that is past 28 digits, where ``quantize`` raises and a sum would round
silently. Sixty digits hold the square of the largest paid amount, summed over
a billion seats, to the millionth. Django's own decimal columns convert in a
context of their own, so this changes no stored value.
"""

from __future__ import annotations

import decimal

PRECISION = 60


def decimal_context_widen() -> None:
    """Every Decimal of this process computed at ``PRECISION`` digits: this thread's context
    now, and every thread's made after (``DefaultContext`` is their template)."""
    decimal.DefaultContext.prec = PRECISION
    decimal.getcontext().prec = PRECISION
