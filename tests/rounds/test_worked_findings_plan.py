"""The nightly check of findings' states reads the worked ones by their index, not every finding ever raised.

A plan assertion (PostgreSQL): with only bitmap scans allowed, the query
``audit.proof_findings`` runs for each kind of finding is answered from
its worked index; without that index (before rounds 0024 and audit 0018)
it could only be a scan of the whole table, every night, over the years.
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from django.utils import timezone

from audit.proof_findings import WORKED, worked_findings
from audit.tonight import case_queries

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


@pytest.mark.parametrize("model", WORKED, ids=lambda m: m.__name__)
def test_the_tonight_pages_cases_are_counted_by_their_partial_indexes(model, django_user_model):
    user = django_user_model.objects.create_user("counted")
    for case, rows in case_queries(model, user=user, now=timezone.now()).items():
        # Its own partial index, or the worked one: either holds only the findings somebody worked.
        index = {"mine": "assignee", "overdue": "due", "escalated": "escalated"}[case]
        partial = (f"_case_{index}_idx", "_worked_idx")
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_indexscan = off")
            cursor.execute("SET LOCAL enable_indexonlyscan = off")
            plan = rows.explain()
        assert any(name in plan for name in partial) and "Seq Scan" not in plan, plan
        assert "state_" not in plan.split("Index Scan on ", 1)[1].split(" ", 1)[0], plan
