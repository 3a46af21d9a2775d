"""A database that cannot serve (disk full, a lost connection) is a 503 the table may retry.

In-process, on the test's PostgreSQL: a trigger makes the insert of chosen
rounds fail exactly as a full disk does (SQLSTATE 53100, ``DiskFull``),
whatever SQL the ingest path sends. What the table hears is the error shape
of casino/errors.py with ``Retry-After``, never a 500 page or a stack trace;
nothing half-stored stays behind, and the retry stores the round once.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from django.db import OperationalError, connection

from rounds.models import Round, Submission
from tests.api.records import BATCH, ROUNDS, us_record
from tests.insider import as_owner

pytestmark = pytest.mark.django_db


@contextmanager
def disk_full_for(*round_ids: str):
    """Inserting these rounds fails as on a full disk, until the block ends."""
    assert all(r.replace("-", "").isalnum() for r in round_ids)
    listed = ", ".join(f"'{r}'" for r in round_ids)
    with as_owner(), connection.cursor() as cursor:
        cursor.execute(f"""
            CREATE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.round_id IN ({listed}) THEN
                RAISE EXCEPTION 'could not extend file "base/16384/24601": No space left on device'
                  USING ERRCODE = 'disk_full';
              END IF;
              RETURN NEW;
            END $$""")
        cursor.execute("CREATE TRIGGER test_disk_full BEFORE INSERT ON rounds_round "
                       "FOR EACH ROW EXECUTE FUNCTION test_disk_full()")
    try:
        yield
    finally:
        with as_owner(), connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER test_disk_full ON rounds_round")
            cursor.execute("DROP FUNCTION test_disk_full()")


@contextmanager
def failing(statement: str, message: str):
    """Every statement that contains ``statement`` fails as PostgreSQL's would."""

    def execute(run, sql, params, many, context):
        if statement in sql:
            raise OperationalError(message)
        return run(sql, params, many, context)

    with connection.execute_wrapper(execute):
        yield


def assert_503(response):
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    body = response.json()
    assert body["code"] == "service_unavailable" and body["request_id"] == response["X-Request-ID"]
    assert "No space left" not in response.content.decode() and "Traceback" not in response.content.decode()


def test_a_disk_full_while_storing_a_round_is_a_503_and_leaves_nothing_half_stored(table_client):
    client = table_client("U01", "us-30k")
    client.raise_request_exception = False
    with disk_full_for("U-1"):
        assert_503(client.post(ROUNDS, us_record(), format="json"))
    assert not Round.objects.exists()
    # Nothing half-stored, and nothing lost: the body is kept as the 503 it was answered.
    assert list(Submission.objects.values_list("claimed_round", "http_status")) == [("U-1", 503)]

    assert client.post(ROUNDS, us_record(), format="json").status_code == 201
    assert Round.objects.count() == 1


def test_a_lost_connection_on_a_read_is_a_503(table_client):
    from tests.security.people import person_client

    auditor = person_client("auditor")
    with failing("SELECT", "server closed the connection unexpectedly"):
        assert_503(auditor.get(ROUNDS))


def test_a_batch_cut_by_a_full_disk_is_retried_whole_and_each_round_counted_once(table_client):
    client = table_client("U01", "us-30k")
    client.raise_request_exception = False
    first = [us_record(f"U-{n}") for n in range(2)]
    assert client.post(BATCH, {"rounds": first}, format="json").status_code == 200
    rounds = first + [us_record(f"U-{n}") for n in range(2, 5)]
    with disk_full_for("U-3"):
        assert_503(client.post(BATCH, {"rounds": rounds}, format="json"))
    assert sorted(Round.objects.values_list("round_id", flat=True)) == ["U-0", "U-1"]

    again = client.post(BATCH, {"rounds": rounds}, format="json")
    assert [item["status"] for item in again.json()["results"]] == [200, 200, 201, 201, 201]
    assert Round.objects.count() == 5
