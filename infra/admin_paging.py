"""An admin list's count of its rows, stopped once it passes what anyone pages through."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.utils.functional import cached_property

# Rows counted before a list says "more than": a hundred pages of a hundred.
COUNT_CAP = 10_000


class CappedCountPaginator(Paginator):
    """Counts the list's rows up to ``COUNT_CAP`` and one more.

    Counting every match of a common filter (a finding code over a year of
    rounds) reads every one of them, and grows with the history, for a figure
    nobody pages to the end of. Past the cap the list says "more than
    10,000" (``admin/pagination.html``) and pages up to the cap; a narrower
    filter, or the CSV export, reaches the rest.
    """

    capped = False  # whether the rows went past the cap: known once counted

    @cached_property
    def count(self) -> int:
        # Its rows alone, neither ordered nor annotated: the list's columns are the page's work.
        counted = self.object_list.order_by().values("pk")[: COUNT_CAP + 1].count()
        self.capped = counted > COUNT_CAP
        return min(counted, COUNT_CAP)
