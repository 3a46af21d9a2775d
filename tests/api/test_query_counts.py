"""Query counts on the hot endpoints: a table's POST, and the auditors' round list."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from .records import ROUNDS, us_record

pytestmark = pytest.mark.django_db

# Counted on 2026-11-30 (savepoints included): key lookup; the round's row
# lock; config version; pool lock; pool version; inserts of the round, its
# seats (one bulk insert) and meter events (one); the pool update; the kept
# submission; the audit chain (head lock, event, head update); and the four
# reads of the answer (round, seats, findings, meter events). The key's
# last_used_at is not written: the warm-up post touched it a moment before.
# If this number moves, read the queries (pytest -vv prints them) first.
POST_QUERIES = 21


def test_posting_a_four_seat_round_with_progressive(table_client, django_assert_num_queries):
    client = table_client("U01", "us-30k")
    assert client.post(ROUNDS, us_record("U-0"), format="json").status_code == 201
    with django_assert_num_queries(POST_QUERIES):
        response = client.post(ROUNDS, us_record("U-1"), format="json")
    assert response.status_code == 201
    assert len(response.json()["progressive"]["events"]) == 4


def test_the_post_costs_the_same_for_one_seat_and_seven(table_client):
    client = table_client("U01", "us-30k")
    assert client.post(ROUNDS, us_record("U-0"), format="json").status_code == 201
    counts = []
    for seats in (1, 7):
        with CaptureQueriesContext(connection) as queries:
            response = client.post(ROUNDS, us_record(f"U-{seats}", seats=seats), format="json")
        assert response.status_code == 201
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def _list_queries(client) -> tuple[int, int]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(ROUNDS)
    assert response.status_code == 200
    return len(response.json()["results"]), len(queries)


def test_listing_rounds_costs_the_same_for_3_and_30(table_client, auditor_client):
    client = table_client("U01", "us-30k")
    auditor_client.get(ROUNDS)  # the first request loads the auditor's permissions once
    for n in range(3):
        assert client.post(ROUNDS, us_record(f"U-{n}"), format="json").status_code == 201
    few = _list_queries(auditor_client)
    for n in range(3, 30):
        assert client.post(ROUNDS, us_record(f"U-{n}"), format="json").status_code == 201
    many = _list_queries(auditor_client)
    assert (few[0], many[0]) == (3, 30)
    assert few[1] == many[1], (few, many)
