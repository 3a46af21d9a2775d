"""A round's ``held`` held to what made it: its finding, and the placement in the chain.

A round is held apart from the books exactly when the service found it dealt
outside the window (its ``dealt_outside_window`` finding) and no supervisor has
placed it since (a ``round.placed`` event). ``held`` is a column the service
may change, so whoever can write the database could hide a round from every
report, or put one in the books without a supervisor: each round whose
``held`` says otherwise is named.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from game.findings import DEALT_OUTSIDE_WINDOW
from rounds.models import Finding, Round
from trail.models import AuditEvent


@dataclass(frozen=True, slots=True)
class HeldDifference:
    round_pk: int
    stored: bool
    derived: bool

    def __str__(self) -> str:
        why = ("found outside the window and never placed" if self.derived
               else "never found outside the window, or placed by a supervisor since")
        return f"round #{self.round_pk}: held stored {self.stored}, derived {self.derived} ({why})"


def held_differences() -> Iterator[HeldDifference]:
    """Each round whose ``held`` its finding and the chain's placements do not give: three small
    reads (the held rounds by their own index, the findings by code, the placements by action)."""
    held = set(Round.objects.filter(held=True).values_list("pk", flat=True))
    outside = set(Finding.objects.filter(code=DEALT_OUTSIDE_WINDOW).values_list("round_id", flat=True))
    placed = {int(pk) for pk in AuditEvent.objects.filter(
        action="round.placed", object_type=Round._meta.label_lower).values_list("object_id", flat=True)
        if pk.isdigit()}
    derived = outside - placed
    for pk in sorted(held ^ derived):
        yield HeldDifference(pk, pk in held, pk in derived)
