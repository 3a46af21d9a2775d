"""The configuration and pool versions that judge rounds: never changed once written, so each
is read once per process (bounded: a casino has a few dozen)."""

from __future__ import annotations

from functools import lru_cache

from game.rules import PoolRules, TableRules
from progressive.models import PoolVersion
from rounds.models import TableConfigVersion


@lru_cache(maxsize=1024)
def config_version(pk: int) -> tuple[TableConfigVersion, TableRules]:
    version = TableConfigVersion.objects.select_related("config").get(pk=pk)
    return version, version.rules()


@lru_cache(maxsize=1024)
def pool_version(pk: int) -> tuple[PoolVersion, PoolRules]:
    version = PoolVersion.objects.select_related("pool").get(pk=pk)
    return version, version.rules()
