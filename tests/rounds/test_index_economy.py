"""What a stored round writes on PostgreSQL: no index another one already serves, no foreign key
another one already implies, and the guarantees all the same (rounds 0011, progressive 0007,
audit 0006)."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError

from casino.services import user_roles_set
from progressive.models import MeterEvent
from rounds import partitions
from rounds.models import Finding, Round, RoundKey, Table
from rounds.services import round_void, table_register
from tests import examples
from tests.api.records import ROUNDS, record
from tests.insider import as_owner
from trail.models import AuditEvent
from trail.services import SYSTEM

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's schema")

# The tables a stored round writes into and all their indexes: one more, and every round pays.
INDEXES = {
    "rounds_roundkey": {"rounds_roundkey_pkey", "rounds_roundkey_whole", "round_unique_per_table"},
    "rounds_round": {
        "rounds_round_pkey", "rounds_roun_table_i_b3eb20_idx", "round_day_table_dealt_idx",
        "rounds_roun_dealt_a_b2128d_idx", "rounds_roun_status_588c62_idx",
        "rounds_roun_dealer_e2f674_idx", "rounds_round_config_version_id_90afe3e0",
        "rounds_round_pool_version_id_497e0fe0", "round_voided_by_idx",
        "round_round_id_prefix_idx",  # the admin's search by round id (rounds 0015)
        "round_held_idx",  # partial: only a round held apart writes an entry (rounds 0021)
    },
    "rounds_seat": {"rounds_seat_pkey", "seat_unique_per_round", "rounds_seat_player_e78196_idx"},
    "rounds_submission": {
        "rounds_submission_pkey", "rounds_subm_table_i_1e44b6_idx",
        "rounds_subm_outcome_78b6c5_idx", "rounds_submission_round_id_452a7533",
        "submission_received_at_id_idx",  # the kept bodies newest first (rounds 0015)
    },
    "rounds_finding": {
        "rounds_finding_pkey", "rounds_finding_round_id_9a5a1129", "rounds_find_code_0c21ea_idx",
        "rounds_find_state_346c40_idx", "finding_state_changed_by_idx",
        "finding_created_at_id_idx",  # the findings newest first (rounds 0015)
        "finding_worked_idx",  # partial: only a worked finding writes an entry (rounds 0024)
        # partial: only a finding given to a person, or given a time, writes an entry (rounds 0025)
        "finding_case_assignee_idx", "finding_case_due_idx", "finding_case_escalated_idx",
    },
    "progressive_meterevent": {
        "progressive_meterevent_pkey", "meter_event_seq_unique",
        "progressive_meterevent_round_id_2a681604", "meter_event_kind_pool_idx",
        "meter_event_actor_idx",
    },
    "audit_auditevent": {
        "audit_auditevent_pkey", "audit_auditevent_seq_key", "audit_event_hash_unique",
        "audit_audit_action_d1703a_idx", "audit_audit_object__0e78a5_idx",
        # A day's events by their moment, each appended at the index's end: the report's count
        # and the export would otherwise read the whole log (audit 0017).
        "audit_event_at_idx",
        # partial: only an event naming a person writes an entry, never a table's round (trail 0002)
        "audit_event_people_idx",
    },
}


def rows(query: str, params=()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return cursor.fetchall()


def indexes_of(table: str) -> set[str]:
    return {name for (name,) in rows(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid = %s::regclass", [table])}


@pytest.mark.django_db
@pytest.mark.parametrize("table", sorted(INDEXES))
def test_a_stored_round_fills_only_the_indexes_it_needs(table):
    assert indexes_of(table) == INDEXES[table]


@pytest.mark.django_db
@pytest.mark.parametrize("table", ["rounds_round", "rounds_seat"])
def test_a_partition_made_later_has_exactly_its_tables_indexes(table):
    made = partitions.partitions_make([date(2018, 5, 3)])
    assert made.made == [date(2018, 5, 1)]
    partition = f"{table}_p201805"
    # Each of the partition's indexes is the partition's piece of one of the table's, and
    # each of the table's has its piece: nothing more, nothing less.
    pieces = rows(
        "SELECT p.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i "
        "JOIN pg_inherits h ON h.inhrelid = i.indexrelid JOIN pg_class p ON p.oid = h.inhparent "
        "WHERE i.indrelid = %s::regclass", [partition])
    assert len(pieces) == len(indexes_of(partition))
    assert {parent for parent, _ in pieces} == indexes_of(table) == INDEXES[table]
    if table == "rounds_round":
        [voided_by] = [d for parent, d in pieces if parent == "round_voided_by_idx"]
        assert voided_by.endswith("(voided_by_id) WHERE (voided_by_id IS NOT NULL)")


def test_a_round_whose_table_is_not_its_keys_is_refused(table_client):
    """Round.table has no foreign key of its own: the round's key must hold it to its key's
    table, and the key's own foreign key to an existing table."""
    client = table_client()
    sent = record("R-1", dealt_at="2019-03-14T22:00:00+01:00")
    assert client.post(ROUNDS, sent, format="json").status_code == 201
    stored = Round.objects.get(round_id="R-1")
    table_register(code="S02", config_name="se-50kr", actor=SYSTEM)
    other = Table.objects.get(code="S02")

    def store(round_table: Table, key_table_id: int) -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            key = RoundKey.objects.create(
                id=stored.pk + 1000, table_id=key_table_id, round_id="R-2",
                gaming_day=stored.gaming_day,
            )
            round_ = Round.objects.get(pk=stored.pk)
            round_.pk, round_.round_id, round_.table = key.pk, "R-2", round_table
            round_.save(force_insert=True)
            transaction.set_rollback(True)

    with pytest.raises(IntegrityError, match="rounds_round_key_fk"):
        store(other, stored.table_id)
    with pytest.raises(IntegrityError, match="rounds_roundkey_table_id"):
        store(stored.table, 999_999)
    store(stored.table, stored.table_id)  # the same row with its own key's table is stored

    # What the guarantee rests on, so that it cannot go unnoticed.
    assert rows(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' "
        "AND conrelid = 'rounds_round'::regclass AND conkey @> ARRAY[(SELECT attnum "
        "FROM pg_attribute WHERE attrelid = 'rounds_round'::regclass AND attname = 'table_id')]",
    ) == [(
            "rounds_round_key_fk",
            "FOREIGN KEY (id, table_id, round_id, gaming_day) REFERENCES "
            "rounds_roundkey(id, table_id, round_id, gaming_day) DEFERRABLE INITIALLY DEFERRED",
        )]


def test_django_still_protects_a_tables_rounds(table_client):
    client = table_client()
    assert client.post(ROUNDS, record("R-1"), format="json").status_code == 201
    with pytest.raises(ProtectedError):
        Table.objects.get(code="S01").delete()


def test_a_persons_voids_findings_and_meter_moves_are_found_by_index(
    table_client, django_user_model,
):
    client = table_client("U01", "us-30k")
    response = client.post(ROUNDS, examples.load("us-30k.jsonl")[0]["record"], format="json")
    supervisor = django_user_model.objects.create_user("supervisor-1")
    user_roles_set(user=supervisor, roles=["supervisor"], actor=SYSTEM)
    supervisor = django_user_model.objects.get(pk=supervisor.pk)
    round_void(round_pk=response.json()["id"], user=supervisor, reason="shuffler jammed")

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for query, index in (
            # On rounds, the pieces of round_voided_by_idx in its partitions.
            (Round.objects.filter(voided_by=supervisor).order_by(), "voided_by_id_idx"),
            (Finding.objects.filter(state_changed_by=supervisor).order_by(),
             "finding_state_changed_by_idx"),
            (MeterEvent.objects.filter(actor=supervisor).order_by(), "meter_event_actor_idx"),
        ):
            assert index in query.explain()
    assert Round.objects.filter(voided_by=supervisor).count() == 1
    assert MeterEvent.objects.filter(actor=supervisor).exists()


def test_an_events_hash_stays_unique_and_its_rows_unchangeable(table_client):
    table_client()
    event = AuditEvent.objects.order_by("-seq").first()
    copy = AuditEvent.objects.get(pk=event.pk)
    copy.pk, copy.seq = None, event.seq + 1000
    copy._state.adding = True
    with pytest.raises(IntegrityError, match="audit_event_hash_unique"), transaction.atomic():
        copy.save()
    # The application's role may not even try; the owner's try is refused by the trigger.
    with pytest.raises(Exception, match="permission denied"), transaction.atomic():
        rows("UPDATE audit_auditevent SET hash = 'x' WHERE id = %s RETURNING id", [event.pk])
    with pytest.raises(Exception, match="refused"), transaction.atomic(), as_owner():
        rows("UPDATE audit_auditevent SET hash = 'x' WHERE id = %s RETURNING id", [event.pk])
