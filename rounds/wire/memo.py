"""A bounded memo: what a pure function gave for a key, remembered until there are too many."""

from __future__ import annotations

from collections.abc import Callable, Hashable


class BoundedMemo(dict):
    """``memo[key]`` is ``work(key)``, worked out on first use and remembered.

    For the few values a hot path meets again and again (the same stakes,
    the same results all evening). A hit is one dictionary lookup in C,
    cheaper than a call through ``functools.lru_cache``; a miss calls
    ``work``. Whatever ``work`` raises is raised and nothing is kept. Past
    ``most`` keys everything is forgotten at once, as a table could send any
    number of different values: memory stays bounded, and the few common
    values come straight back.
    """

    __slots__ = ("work", "most")

    def __init__(self, work: Callable[[Hashable], object], most: int = 4096):
        super().__init__()
        self.work = work
        self.most = most

    def __missing__(self, key):
        value = self.work(key)
        if len(self) >= self.most:
            self.clear()
        self[key] = value
        return value
