"""Query counts on the hot endpoints: a table's POST, and the auditors' round list."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from .records import ROUNDS, us_record

pytestmark = pytest.mark.django_db

# Round trips to the database, counted on 2026-11-30 (savepoints included; the
# test's savepoint stands where production has BEGIN and COMMIT): the look (stored round ids, the configuration's versions, a key for
# the new round, sent as one string); the pool's row lock with its versions;
# the round, its seats, meter events, the pool's meter, the kept body and the
# audit chain's head lock (one string); the audit event and the new head (one
# statement). The answer is built from the rows just written, not read back.
# Production adds the wait for the disk after COMMIT (rounds.services.ingest).
# The table's key is looked up only when this process has not proven it in the
# last TABLE_KEY_CACHE_SECONDS (api.authentication._ProvenKeys): one more.
# It was 21 before rounds.services.ingest sent its writes together.
# If this number moves, read the queries (pytest -vv prints them) first.
POST_QUERIES = 6
KEY_LOOKUP = 1


def test_posting_a_four_seat_round_with_progressive(table_client, django_assert_num_queries):
    client = table_client("U01", "us-30k")
    assert client.post(ROUNDS, us_record("U-0"), format="json").status_code == 201
    with django_assert_num_queries(POST_QUERIES):
        response = client.post(ROUNDS, us_record("U-1"), format="json")
    assert response.status_code == 201
    assert len(response.json()["progressive"]["events"]) == 4


def test_without_the_key_cache_every_post_looks_the_key_up(table_client, settings, django_assert_num_queries):
    settings.TABLE_KEY_CACHE_SECONDS = 0
    client = table_client("U01", "us-30k")
    assert client.post(ROUNDS, us_record("U-0"), format="json").status_code == 201
    with django_assert_num_queries(POST_QUERIES + KEY_LOOKUP):
        assert client.post(ROUNDS, us_record("U-1"), format="json").status_code == 201


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
