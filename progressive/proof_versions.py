"""Pool versions held to what the audit chain recorded when each was made.

A pool version's numbers (its wager, rate, reseed, ceiling and award lines)
settle every Progressive dealt under it, as a configuration version's settle
the rest of the round (``rounds.proof_versions``, the same check): a row
edited past the triggers is named field by field, and a version the chain
never recorded is named. A pool's first version is recorded with the pool
(``pool.created``); the next ones as each is made (``pool.version_created``);
the shipped pool's on the ``migrate`` that makes it (``pool.version_recorded``).
"""

from __future__ import annotations

from collections.abc import Iterator

from trail.recorded import VersionDifference, snapshots_recorded, versions_differences, versions_record

from .models import Pool, PoolVersion
from .services import pool_version_snapshot

RECORDED = ("pool.version_created", "pool.version_recorded")


def pool_versions_recorded() -> dict[int, dict]:
    """Each pool version's snapshot as the chain last recorded it, by the version's pk: two reads."""
    recorded = snapshots_recorded(object_type=PoolVersion._meta.label_lower, actions=RECORDED)
    created = snapshots_recorded(object_type=Pool._meta.label_lower, actions=("pool.created",))
    firsts = dict(PoolVersion.objects.filter(version=1, pool_id__in=list(created)).values_list("pool_id", "pk"))
    for pool_pk, after in created.items():
        if pool_pk in firsts:
            recorded.setdefault(firsts[pool_pk], after)
    return recorded


def pool_versions_differences(*, recorded: dict[int, dict] | None = None) -> Iterator[VersionDifference]:
    return versions_differences(
        kind="pool", snapshot=pool_version_snapshot,
        versions=PoolVersion.objects.select_related("pool").order_by("pk"),
        recorded=pool_versions_recorded() if recorded is None else recorded,
    )


def pool_versions_record(**_signal) -> int:
    """The shipped pool versions recorded in the chain (connected to ``post_migrate``)."""
    return versions_record(
        versions=PoolVersion.objects.select_related("pool").order_by("pk"),
        snapshot=pool_version_snapshot, action="pool.version_recorded", recorded=pool_versions_recorded(),
    )
