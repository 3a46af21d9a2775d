"""The audit log is append-only in PostgreSQL and its hash chain exposes any tampering."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.db.utils import DatabaseError

from rounds.models import Submission
from tests.insider import as_owner, chain_rehashed_from
from trail.models import AuditEvent
from trail.selectors import audit_chain_verify
from trail.services import SYSTEM, audit_record

pytestmark = pytest.mark.django_db


def _write(n: int) -> list[AuditEvent]:
    return [
        audit_record(actor=SYSTEM, action="test.event", object_type="test", object_id=str(i),
                     after={"i": i, "amount": "10.50"})
        for i in range(n)
    ]


def _untriggered(sql: str, params=()) -> None:
    """Run SQL with the append-only trigger off, as an attacker with the owner's rights could."""
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER audit_auditevent_append_only")
        cursor.execute(sql, params)
        cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER audit_auditevent_append_only")


def test_an_untouched_chain_verifies_and_reports_its_last_hash():
    events = _write(5)
    result = audit_chain_verify()
    assert result.ok
    assert result.checked == AuditEvent.objects.count()
    assert result.last_hash == events[-1].hash


def test_the_database_refuses_update_and_delete_of_audit_events():
    event = _write(1)[0]
    for sql in ("UPDATE audit_auditevent SET action = 'x' WHERE id = %s",
                "DELETE FROM audit_auditevent WHERE id = %s"):
        with pytest.raises(DatabaseError, match="refused"), transaction.atomic():
            with as_owner(), connection.cursor() as cursor:
                cursor.execute(sql, [event.pk])
    assert AuditEvent.objects.get(pk=event.pk).action == "test.event"


def test_the_database_refuses_update_and_delete_of_stored_bodies(table_client):
    client = table_client("S01", "se-50kr")
    client.post("/api/v1/rounds/", data=b"{not json", content_type="application/json")
    submission = Submission.objects.get()
    for sql in ("UPDATE rounds_submission SET body = 'x' WHERE id = %s",
                "DELETE FROM rounds_submission WHERE id = %s"):
        with pytest.raises(DatabaseError, match="refused"), transaction.atomic():
            with as_owner(), connection.cursor() as cursor:
                cursor.execute(sql, [submission.pk])
    assert bytes(Submission.objects.get().body) == b"{not json"


def test_an_edited_event_breaks_the_chain_at_that_event():
    events = _write(5)
    _untriggered("UPDATE audit_auditevent SET after = '{\"i\": 99}' WHERE id = %s", [events[2].pk])
    result = audit_chain_verify()
    assert not result.ok
    assert result.break_seq == events[2].seq
    assert "changed" in result.problem


def test_a_deleted_event_breaks_the_chain_where_it_was():
    events = _write(5)
    _untriggered("DELETE FROM audit_auditevent WHERE id = %s", [events[1].pk])
    result = audit_chain_verify()
    assert not result.ok
    assert result.break_seq == events[1].seq
    assert "missing" in result.problem


def test_a_deleted_last_event_is_caught_by_the_chain_head():
    events = _write(3)
    _untriggered("DELETE FROM audit_auditevent WHERE id = %s", [events[-1].pk])
    result = audit_chain_verify()
    assert not result.ok
    assert "removed from the end" in result.problem


def test_reordered_events_break_the_chain():
    events = _write(4)
    a, b = events[1], events[2]
    _untriggered(
        "UPDATE audit_auditevent SET seq = CASE id WHEN %s THEN %s ELSE %s END WHERE id IN (%s, %s)",
        [a.pk, 10**9, 10**9 + 1, a.pk, b.pk],
    )
    _untriggered(
        "UPDATE audit_auditevent SET seq = CASE id WHEN %s THEN %s ELSE %s END WHERE id IN (%s, %s)",
        [a.pk, b.seq, a.seq, a.pk, b.pk],
    )
    result = audit_chain_verify()
    assert not result.ok
    assert result.break_seq == a.seq


def test_verify_audit_command_prints_the_last_hash_and_fails_on_a_break(capsys):
    events = _write(2)
    call_command("verify_audit")
    assert events[-1].hash in capsys.readouterr().out
    _untriggered("UPDATE audit_auditevent SET actor_name = 'mallory' WHERE id = %s", [events[0].pk])
    with pytest.raises(CommandError, match="broken at event"):
        call_command("verify_audit")


def test_every_stored_round_is_in_the_chain(table_client):
    from tests import examples

    client = table_client("S01", "se-50kr")
    before = AuditEvent.objects.count()
    for example in examples.load("se-50kr.jsonl")[:3]:
        client.post("/api/v1/rounds/", example["record"], format="json")
    stored = AuditEvent.objects.filter(action="round.stored").order_by("seq")
    assert AuditEvent.objects.count() == before + 3
    assert [e.actor_id for e in stored] == ["S01"] * 3
    assert audit_chain_verify().ok


def test_events_written_during_a_walk_do_not_look_like_a_break(monkeypatch):
    """A round stored while the chain is walked must not make the chain look cut short."""
    _write(3)
    import trail.selectors

    real_filter = trail.selectors.ChainHead.objects.filter
    arrived = []

    def write_then_read_head(*args, **kwargs):
        if not arrived:  # another request commits an event as the walk reaches the head
            arrived.append(True)
            monkeypatch.setattr(trail.selectors.ChainHead.objects, "filter", real_filter)
            _write(1)
        return real_filter(*args, **kwargs)

    monkeypatch.setattr(trail.selectors.ChainHead.objects, "filter", write_then_read_head)
    result = audit_chain_verify()
    assert result.ok, result.problem


def test_a_chain_rehashed_from_an_edited_event_is_caught_by_the_anchor_kept_outside(capsys):
    events = _write(4)
    call_command("verify_audit")
    anchor = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("anchor: "))
    kept_outside = anchor.removeprefix("anchor: ")
    assert kept_outside == f"{events[-1].seq}:{events[-1].hash}"

    chain_rehashed_from(events[1], "mallory")
    assert audit_chain_verify().ok  # the chain follows from itself again
    with pytest.raises(CommandError, match="not the one anchored outside"):
        call_command("verify_audit", expect=kept_outside)


def test_events_removed_from_the_end_with_the_head_moved_back_are_caught_by_the_anchor():
    from trail.models import ChainHead

    events = _write(3)
    anchor = (events[-1].seq, events[-1].hash)
    _untriggered("DELETE FROM audit_auditevent WHERE seq = %s", [events[-1].seq])
    ChainHead.objects.filter(pk=1).update(seq=events[-2].seq, hash=events[-2].hash)
    assert audit_chain_verify().ok
    result = audit_chain_verify(anchor=anchor)
    assert not result.ok and "before the anchored event" in result.problem


def test_an_anchor_in_another_form_is_refused():
    with pytest.raises(CommandError, match="SEQ:HASH"):
        call_command("verify_audit", expect="not-an-anchor")
