"""Stints: the time a dealer (or a table) was dealing, without the breaks between.

A stint is one dealer's consecutive rounds at one table: a gap between two of
them longer than ``STINT_BREAK_MINUTES`` is a break, and ends it. A stint lasts
from its first round to its last, so a rate over stints (hands an hour) counts
the time dealt, not the breaks a day's first-to-last span would count too: a
dealer of two stints of three and a half hours with a break between deals at
his table's pace, not at half of it. A table's own stints are its rounds by
any dealer, a gap longer than a break ending one (the table was closed).

Plain Python: the rounds come in as (table, dealer, moment, tag), in order;
a stint keeps its first round's tag (the gaming day and currency it is
counted under, say).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from .figures import hours_of, per_hour


@dataclass(frozen=True, slots=True)
class Stint:
    table: str
    dealer: str
    first: datetime
    last: datetime
    rounds: int
    tag: object = None  # its first round's

    @property
    def span(self) -> timedelta:
        return self.last - self.first

    @property
    def rate(self) -> Decimal | None:
        """Rounds an hour over the stint (none over less than ``figures.SHORTEST_RATE``)."""
        return per_hour(self.rounds, hours_of(self.span))


def stints_of(rounds: Iterable[tuple[str, str, datetime, object]], *, gap: timedelta) -> list[Stint]:
    """The stints of ``rounds`` (table, dealer, dealt at, tag), sorted by table, dealer and moment: a
    new one at each change of table or dealer, and after a gap longer than ``gap``."""
    stints: list[Stint] = []
    table = dealer = first = last = tag = None
    count = 0
    for where, who, at, what in rounds:
        if (where, who) != (table, dealer) or at - last > gap:
            if count:
                stints.append(Stint(table, dealer, first, last, count, tag))
            table, dealer, first, tag, count = where, who, at, what, 0
        last = at
        count += 1
    if count:
        stints.append(Stint(table, dealer, first, last, count, tag))
    return stints
