"""What happened cannot be rewritten through the database: rows change only where a service changes them.

An insider with database access (but not a superuser's) tries what issue 14
found possible: rewriting rounds' records and payouts, deleting findings,
editing a configuration version, emptying tables with TRUNCATE.
"""

from __future__ import annotations

from datetime import date

import pytest
from django.db import DatabaseError, connection, transaction

from rounds import partitions
from rounds.models import Finding, Round, Seat
from tests.insider import as_owner

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the database's own protection"),
]
ROUNDS = "/api/v1/rounds/"


@pytest.fixture
def stored(table_client):
    from tests import examples

    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl")[:20]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    partitions.partitions_make([date(2018, 2, 3)])  # the schedule's, as for a month of the window
    late = dict(examples.load("se-50kr.jsonl")[20]["record"], round="late", dealt_at="2018-02-03T21:00:00+01:00")
    assert client.post(ROUNDS, late, format="json").status_code == 201
    assert Finding.objects.exists()
    return Round.objects.filter(findings__isnull=False).order_by("pk").first()


def _refused(statement: str, params=()) -> None:
    """Refused by the database's triggers even to the tables' owner (the application's role
    is refused more: tests/security/test_database_roles.py)."""
    with pytest.raises(DatabaseError, match="refused"), transaction.atomic(), as_owner(), \
            connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's own writes checked, not pending
        cursor.execute(statement, params)


@pytest.mark.parametrize("statement", [
    "UPDATE rounds_round SET record = '{}'::jsonb, record_hash = repeat('0', 64) WHERE id = %s",
    "UPDATE rounds_round SET dealer = 'someone else' WHERE id = %s",
    "UPDATE rounds_seat SET paid_blind = paid_blind + 1 WHERE round_id = %s",
    "UPDATE rounds_seat SET ante = ante + 1 WHERE round_id = %s",
    "UPDATE rounds_finding SET code = 'bet_off_unit' WHERE round_id = %s",
    "DELETE FROM rounds_finding WHERE round_id = %s",
    "DELETE FROM rounds_seat WHERE round_id = %s",
    "DELETE FROM rounds_round WHERE id = %s",
])
def test_a_rounds_record_payouts_and_findings_cannot_be_rewritten(stored, statement):
    _refused(statement, [stored.pk])


def test_a_configuration_version_cannot_be_edited(stored):
    _refused("UPDATE rounds_tableconfigversion SET blind_pays = '{}'::jsonb WHERE id = %s", [stored.config_version_id])


@pytest.mark.parametrize("table", [
    "rounds_round", "rounds_seat", "rounds_finding", "rounds_roundkey", "rounds_submission",
    "rounds_tableconfigversion", "progressive_meterevent", "progressive_pool", "audit_auditevent",
    "audit_chainhead", "rounds_round_p201802", "rounds_seat_p201802", "rounds_round_default",
])
def test_no_table_that_holds_what_happened_can_be_emptied(stored, table):
    """TRUNCATE passes row triggers; each table, and each month's partition, refuses it itself."""
    _refused(f"TRUNCATE {table} CASCADE")


def test_what_services_change_still_changes(stored, table_client):
    """The columns a void, a conflict and auditors' work change are the ones left open."""
    finding = Finding.objects.filter(round__isnull=False).first()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE rounds_round SET status = 'flagged' WHERE id = %s", [stored.pk])
        cursor.execute("UPDATE rounds_seat SET settled_ante = 0 WHERE round_id = %s", [stored.pk])
        cursor.execute("UPDATE rounds_finding SET state = 'acknowledged', state_note = 'seen' WHERE id = %s",
                       [finding.pk])
    assert Seat.objects.filter(round=stored, settled_ante=0).exists()
