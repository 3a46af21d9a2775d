"""Single posts that arrive together share a transaction (rounds.services.combiner).

These run outside the test's transaction, as a web worker does: the
process's round writer has a connection of its own and commits for real.
"""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.db.models import Sum
from rest_framework.test import APIClient

from progressive.models import MeterEvent, Pool
from rounds.models import Round, Submission
from rounds.services import ingest, table_register
from trail.selectors import audit_chain_verify
from trail.services import SYSTEM

from .records import ROUNDS, us_record

pytestmark = pytest.mark.django_db(transaction=True)
TABLES = 6


@pytest.fixture
def combining(settings, monkeypatch):
    """The writer holds its first transaction back a moment, so the other posts queue behind it."""
    settings.INGEST_COMBINE = True
    held = threading.Event()
    real = ingest.ingest_entries

    def first_waits(entries, **kwargs):
        if not held.is_set():
            held.set()
            threading.Event().wait(0.5)
        return real(entries, **kwargs)

    monkeypatch.setattr(ingest, "ingest_entries", first_waits)
    ingest._COMBINER.largest = 0
    yield ingest._COMBINER
    ingest._COMBINER.stop()  # its connections closed, so the test database can be dropped


def post_together(records_by_table: dict[str, list[dict]]) -> dict[str, list]:
    keys = {code: table_register(code=code, config_name="us-30k", actor=SYSTEM).key for code in records_by_table}
    answers: dict[str, list] = {code: [] for code in records_by_table}
    start = threading.Barrier(len(records_by_table))

    def table(code: str) -> None:
        client = APIClient()
        client.raise_request_exception = False
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {keys[code]}")
        try:
            start.wait()
            for record in records_by_table[code]:
                answers[code].append(client.post(ROUNDS, record, format="json"))
        finally:
            connection.close()

    threads = [threading.Thread(target=table, args=(code,)) for code in records_by_table]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers


def test_rounds_posted_together_are_stored_together_each_answered_on_its_own(combining, auditor_client):
    sent = {f"C{n:02d}": [us_record(f"C{n:02d}-{k}", table=f"C{n:02d}") for k in range(3)] for n in range(TABLES)}
    answers = post_together(sent)

    assert combining.largest >= 2, "no two posts shared a transaction"
    for code, responses in answers.items():
        assert [r.status_code for r in responses] == [201, 201, 201], code
        for response in responses:
            assert response.json() == auditor_client.get(f"{ROUNDS}{response.json()['id']}/").json()
    assert Round.objects.count() == 3 * TABLES
    assert Submission.objects.filter(outcome="accepted").count() == 3 * TABLES
    assert audit_chain_verify().ok
    pool = Pool.objects.get(code="us-progressive")
    # Four lit 5.00 wagers a round, each contributing its share to the meter.
    assert pool.meter == MeterEvent.objects.filter(pool=pool).aggregate(s=Sum("delta"))["s"]
    assert pool.meter > Decimal("10000.00")


def test_a_record_that_breaks_the_shared_transaction_fails_alone(combining, monkeypatch):
    real_read = ingest.round_from_wire

    def read(wire):
        if wire["round"] == "C00-1":
            raise RuntimeError("an engine bug that only this record meets")
        return real_read(wire)

    monkeypatch.setattr(ingest, "round_from_wire", read)
    sent = {f"C{n:02d}": [us_record(f"C{n:02d}-{k}", table=f"C{n:02d}") for k in range(2)] for n in range(TABLES)}
    answers = post_together(sent)

    statuses = {code: [r.status_code for r in responses] for code, responses in answers.items()}
    assert statuses.pop("C00") == [201, 500]
    assert all(s == [201, 201] for s in statuses.values()), statuses
    assert not Round.objects.filter(round_id="C00-1").exists()
    assert Submission.objects.get(claimed_round="C00-1").http_status == 500  # its body kept
    assert Round.objects.count() == 2 * TABLES - 1
    assert audit_chain_verify().ok


def test_inside_a_callers_transaction_the_round_is_written_by_the_caller(settings):
    settings.INGEST_COMBINE = True
    assert ingest._COMBINER.serves(connection)
    with transaction.atomic():
        assert not ingest._COMBINER.serves(connection)
    settings.INGEST_COMBINE = False
    assert not ingest._COMBINER.serves(connection)


def test_a_committed_round_whose_durability_cannot_be_confirmed_is_a_503_to_send_again(settings, monkeypatch):
    """The round is stored; only the disk's word failed: the table is told to send it again
    (answered then as the resubmission it is), never that the service failed to store it."""
    from rounds.services import combiner

    settings.INGEST_COMBINE, settings.INGEST_ASYNC_COMMIT = True, True

    def unconfirmed():
        raise RuntimeError("the flush could not be confirmed")

    monkeypatch.setattr(combiner, "make_durable", unconfirmed)
    key = table_register(code="D01", config_name="us-30k", actor=SYSTEM).key
    client = APIClient()
    client.raise_request_exception = False
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    try:
        response = client.post(ROUNDS, us_record("D-1", table="D01"), format="json")
        assert response.status_code == 503
        assert Round.objects.filter(round_id="D-1").exists()
        monkeypatch.undo()
        settings.INGEST_COMBINE = True
        assert client.post(ROUNDS, us_record("D-1", table="D01"), format="json").status_code == 200
    finally:
        ingest._COMBINER.stop()
