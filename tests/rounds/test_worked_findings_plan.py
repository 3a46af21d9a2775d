"""The nightly check of findings' states reads the worked ones by their index, not every finding ever raised.

A plan assertion (PostgreSQL): with only bitmap scans allowed, the query
``audit.proof_findings`` runs for each kind of finding is answered from
its worked index; without that index (before rounds 0024 and audit 0018)
it could only be a scan of the whole table, every night, over the years.
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from audit.proof_findings import WORKED, worked_findings

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="a PostgreSQL plan"),
]


@pytest.mark.parametrize("model", WORKED, ids=lambda m: m.__name__)
def test_the_worked_findings_are_read_by_their_index(model):
    index = next(i.name for i in model._meta.indexes if i.name.endswith("worked_idx"))
    with transaction.atomic(), connection.cursor() as cursor:
        # Bitmap scans only: a full scan of any index with a filter is a scan of the table too.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("SET LOCAL enable_indexonlyscan = off")
        plan = worked_findings(model, pks=[1, 2]).explain()
    assert index in plan, plan
    assert "Seq Scan" not in plan, plan
