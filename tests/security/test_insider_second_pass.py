"""Issue 27, items 10-12: an insider's edits, each made by raw SQL as the database's owner, each named.

Item 10 edits the columns the service itself may change, with every trigger
in force; item 11 passes the triggers (``session_replication_role =
replica``); item 12 rewrites the chain and lets the next anchor follow it.
``verify_audit`` must exit 1 and name each piece of damage: the round or
table, the column, the stored and the derived value.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from progressive.models import Pool
from rounds.models import Finding, Round, Seat
from rounds.services import versions
from tests import examples
from tests.insider import as_superuser

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the owner's raw SQL on PostgreSQL"),
]
ROUNDS = "/api/v1/rounds/"


@pytest.fixture
def us_rounds(table_client):
    """The worked us-30k rounds, on the pool, in order: flagged ones and awards among them."""
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:16]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    client.rounds = Round.objects.filter(table=client.table).order_by("pk")
    return client


def _verify(capsys) -> tuple[str, str]:
    with pytest.raises(CommandError) as failed:
        call_command("verify_audit")
    return capsys.readouterr().out, str(failed.value)


def _sql(statement: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def test_untouched_records_verify(us_rounds, capsys):
    call_command("verify_audit")
    out = capsys.readouterr().out
    for clean in ("every stored round's computed columns are what it derives",
                  "every configuration version is what the audit chain recorded",
                  "every worked finding's state is its last audit event's",
                  "every pool's meter is its ledger"):
        assert clean in out


# ---- item 10: the columns the service may change, every trigger in force -------------------


def test_a_flagged_round_set_verified_with_its_meter_after_moved_is_named(us_rounds, capsys):
    flagged = us_rounds.rounds.filter(status="flagged").first()
    _sql("UPDATE rounds_round SET status = 'verified', meter_after = meter_after + 50 WHERE id = %s", [flagged.pk])
    out, failed = _verify(capsys)
    where = f"table U01 round {flagged.round_id} (#{flagged.pk})"
    assert f"{where}: status stored verified, derived flagged" in out
    assert f"{where}: meter_after stored {flagged.meter_after + 50}, derived {flagged.meter_after}" in out
    assert "stored columns differ" in failed


def test_a_seats_settled_progressive_changed_is_named(us_rounds, capsys):
    seat = Seat.objects.filter(round__table=us_rounds.table, progressive__gt=0).order_by("round_id", "seat").first()
    round_ = Round.objects.get(pk=seat.round_id)
    _sql("UPDATE rounds_seat SET settled_progressive = 777 WHERE round_id = %s AND seat = %s",
         [seat.round_id, seat.seat])
    out, _ = _verify(capsys)
    assert (f"table U01 round {round_.round_id} (#{round_.pk}): seat {seat.seat} settled_progressive "
            f"stored 777.00, derived {seat.settled_progressive}") in out


def test_a_finding_dismissed_with_no_audit_event_is_named(us_rounds, capsys):
    finding = Finding.objects.filter(round__table=us_rounds.table, informational=False).first()
    _sql("UPDATE rounds_finding SET state = 'dismissed', state_note = 'checked with the pit: paid right', "
         "state_changed_by_name = 'aud1', state_changed_at = now() WHERE id = %s", [finding.pk])
    out, failed = _verify(capsys)
    assert f"finding #{finding.pk} of round #{finding.round_id}: state stored 'dismissed', no audit event moved it" in out
    assert "findings' states not made by an audit event" in failed


def test_a_worked_findings_note_and_name_rewritten_after_its_event_are_named(us_rounds, capsys, staff):
    from rounds.services import finding_transition

    auditor = staff("auditor", "aud2").user
    finding = Finding.objects.filter(round__table=us_rounds.table, informational=False).first()
    finding_transition(finding_ids=[finding.pk], to_state="acknowledged", user=auditor)
    call_command("verify_audit")  # a move the service made is its event's
    _sql("UPDATE rounds_finding SET state = 'resolved', state_note = 'fine', state_changed_by_name = 'aud1' "
         "WHERE id = %s", [finding.pk])
    out, _ = _verify(capsys)
    assert f"finding #{finding.pk} of round #{finding.round_id}: state stored 'resolved', its last audit event " \
           "says 'acknowledged'" in out
    assert "state_changed_by_name stored 'aud1', its last audit event says 'aud2'" in out


# ---- item 11: past the triggers -------------------------------------------------------------


def test_paid_amounts_rewritten_are_named_against_the_kept_body(us_rounds, capsys):
    seat = Seat.objects.filter(round__table=us_rounds.table, paid_reported=True, settled_ante=-100).first() \
        or Seat.objects.filter(round__table=us_rounds.table, paid_reported=True).first()
    round_ = Round.objects.get(pk=seat.round_id)
    with as_superuser():
        _sql("UPDATE rounds_seat SET paid_ante = 5000, paid_blind = 5000 WHERE round_id = %s AND seat = %s",
             [seat.round_id, seat.seat])
    out, _ = _verify(capsys)
    where = f"table U01 round {round_.round_id} (#{round_.pk}): seat {seat.seat}"
    assert f"{where} paid_ante stored 5000.00, derived {Decimal(seat.paid_ante)}" in out
    assert f"{where} paid_blind stored 5000.00, derived {Decimal(seat.paid_blind)}" in out


def test_findings_deleted_are_named(us_rounds, capsys):
    finding = Finding.objects.filter(round__table=us_rounds.table, code="payout_mismatch").first()
    round_ = Round.objects.get(pk=finding.round_id)
    with as_superuser():
        _sql("DELETE FROM rounds_finding WHERE round_id = %s", [round_.pk])
    out, _ = _verify(capsys)
    assert f"table U01 round {round_.round_id} (#{round_.pk}): findings stored [], derived [" in out


@pytest.fixture
def versions_read_again():
    """The writer's versions as a worker started after an edit reads them; none kept for later tests."""
    versions.config_version.cache_clear()
    yield
    versions.config_version.cache_clear()


def test_a_pay_table_raised_in_a_stored_version_is_named_and_so_are_the_rounds_it_then_pays(
        table_client, capsys, versions_read_again):
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl"):
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    straight = Seat.objects.filter(round__table=client.table, round__status="verified", hand="straight",
                                   settled_blind__gt=0).first()
    assert straight is not None, "the worked rounds hold a Blind won with a straight"
    dealt = Round.objects.get(pk=straight.round_id)
    version = dealt.config_version
    with as_superuser():
        _sql("UPDATE rounds_tableconfigversion SET blind_pays = jsonb_set(blind_pays, '{straight}', '\"100\"') "
             "WHERE id = %s", [version.pk])
    versions.config_version.cache_clear()  # a worker started after the edit
    # A round paid 100 to 1 on that Blind, as the edited version now says is right.
    record = json.loads(json.dumps(dealt.record))
    record["round"] = "paid-100x"
    for seat in record["seats"]:
        if seat["seat"] == straight.seat:
            seat["paid"]["blind"] = str(Decimal(seat["blind"]) * 100)
    answer = client.post(ROUNDS, record, format="json")
    assert answer.status_code == 201
    paid_100x = Round.objects.get(table=client.table, round_id="paid-100x")
    out, failed = _verify(capsys)
    assert (f"configuration {version} (#{version.pk}): blind_pays stored" in out
            and '"straight": "100"' in out and '"straight": "1"' in out)
    assert paid_100x.status == "verified", list(paid_100x.findings.values_list("code", "detail"))
    assert f"table S01 round paid-100x (#{paid_100x.pk}): status stored verified, derived flagged" in out
    assert "configuration versions and what the audit chain recorded" in failed


def test_a_pool_meter_moved_is_named_and_its_next_round_is_stored(us_rounds, auditor_client, capsys):
    from trail.models import AuditEvent

    pool = Pool.objects.get(code="us-progressive")
    ledger_meter = pool.meter
    with as_superuser():
        _sql("UPDATE progressive_pool SET meter = meter + 1000 WHERE id = %s", [pool.pk])
    out, failed = _verify(capsys)
    assert f"pool us-progressive: the meter {ledger_meter + 1000} is not the sum of its events" in out
    assert "pools whose meter is not their ledger" in failed
    earlier = us_rounds.rounds.last()
    assert auditor_client.get(f"{ROUNDS}{earlier.pk}/").status_code == 200

    # A round that lights the Progressive: its events are drafted from the ledger, not the moved row.
    next_round = examples.load("us-30k.jsonl")[16]["record"]
    assert any(seat.get("progressive") for seat in next_round["seats"])
    answer = us_rounds.post(ROUNDS, next_round, format="json")
    assert answer.status_code == 201, answer.content
    stored = Round.objects.get(table=us_rounds.table, round_id=next_round["round"])
    assert stored.submissions.filter(outcome="accepted").exists()
    assert stored.meter_before == ledger_meter
    off = stored.findings.get(code="pool_off_ledger")
    assert not off.informational and f"held meter/overflow/reserve {ledger_meter + 1000}" in off.detail
    named = AuditEvent.objects.get(action="pool.off_ledger")
    assert (named.before["meter"], named.after["meter"]) == (str(ledger_meter + 1000), str(ledger_meter))
    assert auditor_client.get(f"{ROUNDS}{stored.pk}/").status_code == 200
    call_command("verify_audit")  # the row put back where its ledger says; the round as it derives


# ---- every kind of damage in one run ----------------------------------------------------------


def test_a_broken_chain_does_not_stop_the_rest_of_the_checks(us_rounds, capsys):
    from trail.models import AuditEvent

    flagged = us_rounds.rounds.filter(status="flagged").first()
    event = AuditEvent.objects.filter(action="round.stored").order_by("seq")[2]
    later = AuditEvent.objects.filter(action="round.stored").order_by("seq")[5]
    with as_superuser():
        _sql("UPDATE audit_auditevent SET actor_name = 'mallory' WHERE id = %s", [event.pk])
        _sql("DELETE FROM audit_auditevent WHERE id = %s", [later.pk])
    _sql("UPDATE rounds_round SET status = 'verified' WHERE id = %s", [flagged.pk])
    out, failed = _verify(capsys)
    assert f"audit chain broken at event {event.seq}: event {event.seq} was changed after it was written" in out
    assert f"audit chain broken at event {later.seq}: event {later.seq} is missing" in out
    assert f"round {flagged.round_id} (#{flagged.pk}): status stored verified, derived flagged" in out
    assert "audit chain broken at event" in failed and "and 1 more place" in failed
    assert "stored columns differ" in failed


# ---- the nightly report, where it re-verifies ---------------------------------------------------


def test_the_nightly_report_names_paid_amounts_a_forged_dismissal_and_an_edited_version(us_rounds):
    from audit.reconciliation.services import report_run

    day = us_rounds.rounds.first().gaming_day
    assert report_run(day_from=day).figures["records"] == {
        "versions": 0, "findings": 0, "held": 0, "examples": [],
        "others": {"acts": 0, "counts": 0, "people": 0, "sign_in": 0, "table_keys": 0}}
    seat = Seat.objects.filter(round__table=us_rounds.table, paid_reported=True).first()
    finding = Finding.objects.filter(round__table=us_rounds.table, informational=False).first()
    _sql("UPDATE rounds_finding SET state = 'dismissed', state_note = 'fine', state_changed_by_name = 'aud1' "
         "WHERE id = %s", [finding.pk])
    with as_superuser():
        _sql("UPDATE rounds_seat SET paid_ante = 5000 WHERE round_id = %s AND seat = %s", [seat.round_id, seat.seat])
        _sql("UPDATE rounds_tableconfigversion SET ante_max = 50000 WHERE id = %s",
             [us_rounds.rounds.first().config_version_id])
    figures = report_run(day_from=day).figures
    assert (figures["records"]["versions"], figures["records"]["findings"]) == (1, 1)
    assert any(alert.startswith("RECORDS: 1 configuration or pool version(s)") for alert in figures["alerts"])
    examples = [d for e in figures["reverification"]["examples"] for d in e["differences"]]
    assert any(d.startswith(f"seat {seat.seat} paid ante 5000.00 is now") for d in examples)


def test_a_protection_findings_forged_dismissal_is_named_like_a_rounds(capsys):
    """Every worked finding proves itself, not only round findings: game protection's and the
    variance tests' are moved by the same transition and its event."""
    from datetime import date

    from audit.models import ProtectionFinding
    from game.protection.codes import ProtectionCode
    from rounds.services import finding_transition
    from tests.security.people import person

    suspect = ProtectionFinding.objects.create(
        code=ProtectionCode.SUSPECTED_HOLE_CARDING.value, key="player=P-9 knowledge=dealer_first crossed_at=1/1", day_from=date(2026, 11, 30),
        day_to=date(2026, 11, 30), figure=Decimal("9.5"), threshold=Decimal("6.9"), detail="hole carding of P-9",
        player="P-9")
    finding_transition(finding_ids=[suspect.pk], to_state="acknowledged", user=person("auditor", "aud-pf"),
                       note="looking", model=ProtectionFinding)
    call_command("verify_audit")  # a move the service made is its event's
    capsys.readouterr()

    _sql("UPDATE audit_protectionfinding SET state = 'dismissed', state_note = 'honest player', "
         "state_changed_by_name = 'aud1' WHERE id = %s", [suspect.pk])
    out, _ = _verify(capsys)
    assert (f"protection finding #{suspect.pk}: state stored 'dismissed', its last audit event says "
            "'acknowledged'") in out


def test_a_pool_versions_award_lines_raised_in_the_row_are_named(us_rounds, capsys):
    """A pool version's pay lines settle every Progressive under it: edited past the triggers,
    the version is named against what the chain recorded when it was made (the shipped pool's
    on the migrate, a new pool's with the pool, a later version's as it was made)."""
    from trail.services import SYSTEM
    from progressive.models import PoolVersion
    from progressive.services import pool_create

    made = pool_create(code="side-pool", currency="USD", wager="5.00", rate="0.20", reseed="1000.00",
                       lines=[{"category": "royal_flush", "qualifier": "hole", "kind": "percent", "amount": "100"}],
                       actor=SYSTEM)
    call_command("verify_audit")
    assert "every pool version is what the audit chain recorded" in capsys.readouterr().out

    shipped = PoolVersion.objects.filter(pool__code="us-progressive").order_by("pk").first()
    first = PoolVersion.objects.get(pool=made, version=1)
    with as_superuser():
        _sql("UPDATE progressive_poolversion SET reseed = reseed * 10 WHERE id IN (%s, %s)", [shipped.pk, first.pk])
    out, failed = _verify(capsys)
    assert f"pool {shipped} (#{shipped.pk}): reseed stored" in out
    assert f"pool {first} (#{first.pk}): reseed stored" in out
    assert "2 differences between pool versions and what the audit chain recorded" in failed
