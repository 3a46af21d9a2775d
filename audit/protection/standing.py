"""A standing suspicion: one finding per subject and code that gathers evidence night after night.

A test that keeps crossing its threshold is one suspicion, not a new
finding each night: the first night raises it, every later night's run
updates its figure, its last day and its evidence, and adds the night's
figure (``now``: the test's figure that night, where ``figure`` is the
highest it reached) to its history (``evidence["history"]``: one point a
gaming day, a rerun of the day replacing its own). Only those columns are written, so a
person working the finding at the same moment keeps his state and note.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from django.db import transaction

from audit.models import ProtectionFinding

PLACES = Decimal("0.000001")


def figure_of(value: float) -> Decimal:
    return Decimal(repr(float(value))).quantize(PLACES)


def standing_raise(
    *, code: str, key: str, day: date, figure: float, threshold: float, evidence: dict, detail: str,
    now: float | None = None, **subject,
) -> bool:
    """Raise the suspicion ``(code, key)`` or bring it up to ``day``; whether it is new. ``subject``:
    the finding's player, dealer, companion, table, currency and first day."""
    point = {"day": day.isoformat(), "figure": round(float(figure if now is None else now), 4)}
    with transaction.atomic():
        known = ProtectionFinding.objects.filter(code=code, key=key).values_list("pk", "evidence", "day_from").first()
        if known is None:
            ProtectionFinding.objects.create(
                code=code, key=key, day_to=day, figure=figure_of(figure), threshold=figure_of(threshold),
                evidence={**evidence, "history": [point]}, detail=detail, **subject,
            )
            return True
        pk, before, day_from = known
        history = [p for p in before.get("history", []) if p["day"] < point["day"]] + [point]
        history += [p for p in before.get("history", []) if p["day"] > point["day"]]
        latest = max(history, key=lambda p: p["day"])["day"]
        if latest != point["day"]:
            # A rerun of an earlier day: its point is kept, the finding stays as the later night left it.
            ProtectionFinding.objects.filter(pk=pk).update(evidence={**before, "history": history})
            return False
        ProtectionFinding.objects.filter(pk=pk).update(
            day_from=min(day_from, subject.get("day_from", day_from)), day_to=day,
            figure=figure_of(figure), threshold=figure_of(threshold),
            evidence={**evidence, "history": history}, detail=detail,
            **{k: v for k, v in subject.items() if k != "day_from"},
        )
        return False
