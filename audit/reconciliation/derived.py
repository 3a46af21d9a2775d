"""Every stored round's computed columns derived again, and each one that differs named.

What the service computes of a round (its status, findings, settled
amounts, meter events and meter after) follows from what cannot be
rewritten unseen: the kept body (``rounds.proof`` holds the stored record to
it), the configuration version as the audit chain recorded it
(``rounds.proof_versions``) and the pool's ledger. The paid amounts are the
body's own. So each round is judged again by the nightly report's own
comparison (``reverify.stored_against_derived``), against the recorded
numbers rather than the row, which whoever passes the triggers can edit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Max, Min

from progressive.models import PoolVersion
from rounds.models import Round, Table, TableConfigVersion
from rounds.proof_versions import config_rules_recorded

from .reverify import cached, stored_against_derived
from .selectors import stored_rounds


@dataclass(frozen=True, slots=True)
class ColumnDifference:
    table: str
    round_id: str
    round_pk: int
    column: str
    stored: object
    derived: object

    def __str__(self) -> str:
        return (f"table {self.table} round {self.round_id} (#{self.round_pk}): {self.column} "
                f"stored {self.stored}, derived {self.derived}")


def stored_columns_differences(*, recorded: dict[int, dict], rounds=None) -> Iterator[ColumnDifference]:
    """Each stored column of every round (or of each table's days that ``rounds``, a queryset, touch)
    that its body, recorded version and ledger do not give.

    ``recorded`` is ``rounds.proof_versions.config_versions_recorded()``: a
    version the chain never recorded is judged by its row (and named by the
    versions' own check).
    """
    table_rules = cached(lambda pk: config_rules_recorded(recorded[pk]) if pk in recorded
                         else TableConfigVersion.objects.get(pk=pk).rules())
    pool_rules = cached(lambda pk: PoolVersion.objects.select_related("pool").get(pk=pk).rules())
    codes = dict(Table.objects.values_list("pk", "code"))
    if rounds is None:
        spans = Round.objects.order_by("table_id").values("table_id").annotate(first=Min("gaming_day"),
                                                                              last=Max("gaming_day"))
    else:
        # Day by day: one late round must not make the span every day since.
        days = rounds.order_by("table_id", "gaming_day").values_list("table_id", "gaming_day").distinct()
        spans = [{"table_id": table_id, "first": day, "last": day} for table_id, day in days]
    for span in spans:
        code = codes.get(span["table_id"], str(span["table_id"]))
        for stored in stored_rounds(table_id=span["table_id"], day_from=span["first"], day_to=span["last"]):
            pool = pool_rules(stored.pool_version_id) if stored.pool_version_id else None
            for difference in stored_against_derived(stored, table_rules(stored.config_version_id), pool,
                                                     settings.CLOCK_TOLERANCE):
                yield ColumnDifference(code, stored.round_id, stored.pk, difference.column,
                                       difference.stored, difference.derived)
