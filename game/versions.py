"""Which version of a configuration or pool judges a round: the one rule, for every caller."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime


def in_force[Key](versions: Iterable[tuple[Key, datetime, int]], at: datetime) -> Key:
    """Of (key, effective_from, version number), the key of the version in force at ``at``.

    The latest to have started by ``at`` (a later number wins a tie); a round
    dealt before the first version started is judged by the first.
    """
    versions = list(versions)
    if not versions:
        raise LookupError("no version to choose from")
    started = [v for v in versions if v[1] <= at]
    if started:
        return max(started, key=lambda v: (v[1], v[2]))[0]
    return min(versions, key=lambda v: (v[1], v[2]))[0]
