"""The kept body is the source of truth: a round rewritten in the database is found by reading it again."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from rounds.models import Round
from rounds.proof import bodies_differences
from rounds.services import record_hash
from tests import examples
from tests.insider import as_superuser

pytestmark = pytest.mark.django_db
ROUNDS = "/api/v1/rounds/"


@pytest.fixture
def stored(table_client):
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl")[:8]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    batch = [dict(e["record"], round=f"B-{n}") for n, e in enumerate(examples.load("se-50kr.jsonl")[8:12])]
    assert client.post(f"{ROUNDS}batch", {"rounds": batch}, format="json").status_code == 200
    return Round.objects.order_by("pk")


def test_untouched_rounds_are_what_their_bodies_say(stored, capsys):
    assert list(bodies_differences()) == []
    call_command("verify_audit")
    assert "every stored round is what its kept body says" in capsys.readouterr().out


def test_a_record_and_its_hash_rewritten_together_are_found(stored):
    """What issue 14 did: the record, its hash and the payouts rewritten, the mismatch findings
    deleted. The chain's event and the kept body still say what the table sent."""
    round_ = stored.first()
    record = dict(round_.record, dealer="D-other")
    with as_superuser(), connection.cursor() as cursor:
        cursor.execute("UPDATE rounds_round SET record = %s::jsonb, record_hash = %s WHERE id = %s",
                       [json.dumps(record), record_hash(record), round_.pk])
        cursor.execute("DELETE FROM rounds_finding WHERE round_id = %s", [round_.pk])
    problems = [d.problem for d in bodies_differences() if d.round_pk == round_.pk]
    assert any("audit chain stored it" in p for p in problems)
    assert any("kept body says another record" in p for p in problems)
    with pytest.raises(CommandError, match="differences between stored rounds"):
        call_command("verify_audit")


def test_a_record_changed_without_its_hash_is_found(stored):
    round_ = stored.last()
    with as_superuser(), connection.cursor() as cursor:
        cursor.execute("UPDATE rounds_round SET record = jsonb_set(record, '{dealer}', '\"X\"') WHERE id = %s",
                       [round_.pk])
    assert [d.problem for d in bodies_differences()] == [
        "the stored record does not hash to the stored record hash"]


def test_a_kept_body_removed_is_found(stored):
    round_ = stored.first()
    with as_superuser(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM rounds_submission WHERE round_id = %s", [round_.pk])
    assert [d.problem for d in bodies_differences()] == ["no accepted body is kept for it"]


def test_the_nightly_report_reads_its_days_bodies_again_and_alerts(stored):
    from audit.reconciliation.services import report_run

    round_ = stored.first()
    assert report_run(day_from=round_.gaming_day).figures["bodies"]["differences"] == 0
    with as_superuser(), connection.cursor() as cursor:
        cursor.execute("UPDATE rounds_round SET record = jsonb_set(record, '{dealer}', '\"X\"') WHERE id = %s",
                       [round_.pk])
    figures = report_run(day_from=round_.gaming_day).figures
    assert figures["bodies"]["differences"] == 1
    assert any(alert.startswith("BODIES: 1 stored round") for alert in figures["alerts"])
