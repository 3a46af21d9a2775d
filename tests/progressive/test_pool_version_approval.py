"""A pool version that changes what a round's Progressive is settled by needs a second supervisor.

The attack, as for a table's pay table (tests/rounds/test_config_version_approval.py):
a supervisor alone raises an award line, in force a minute later, and the
rounds paying it are stored ``verified``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from datetime import timezone as tz

import pytest
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from casino.services import user_roles_set
from progressive.models import Pool, PoolVersion, PoolVersionRequest
from progressive.services import (
    ApprovalError,
    PoolConfigError,
    meter_adjust,
    pool_version_approve,
    pool_version_create,
    pool_version_reject,
)
from rounds.models import Round
from tests.progressive.records import ROUNDS, us_rounds
from tests.security.people import person
from trail.models import AuditEvent
from trail.services import SYSTEM, Actor

pytestmark = pytest.mark.django_db

SWITCH = datetime(2026, 11, 29, 12, 0, tzinfo=tz.utc)


def _pool() -> Pool:
    return Pool.objects.get(code="us-progressive")


def _numbers(version: PoolVersion, **change) -> dict:
    numbers = {name: getattr(version, name) for name in (
        "wager", "rate", "reseed", "ceiling", "reserve_rate", "reading_tolerance", "lines")}
    return numbers | change


def _lines_raised(version: PoolVersion) -> list[dict]:
    """Every fixed award line paying ten times what it did."""
    return [dict(line, amount=str(int(line["amount"]) * 10)) if line["kind"] == "fixed" else dict(line)
            for line in version.lines]


def _ask(asker, effective_from: datetime = SWITCH) -> PoolVersionRequest:
    first = _pool().versions.get(version=1)
    asked = pool_version_create(pool=_pool(), effective_from=effective_from, actor=Actor.of_user(asker),
                                note="awards ten times", **_numbers(first, lines=_lines_raised(first)))
    assert isinstance(asked, PoolVersionRequest)
    return asked


@pytest.fixture
def u01(table_client):
    return table_client("U01", "us-30k")


def _awarded_round(client, round_id: str, dealt_at: datetime) -> Round:
    [record] = us_rounds("U01", round_id, 1, start=5)  # c-us-06: a full house paid the fixed 25
    record["round"], record["dealt_at"] = round_id, dealt_at.isoformat()
    answer = client.post(ROUNDS, record, format="json")
    assert answer.status_code == 201, answer.json()
    return Round.objects.get(round_id=round_id)


def test_one_supervisors_award_line_settles_no_round_until_a_second_approves(u01):
    asked = _ask(person("supervisor", "asker"))
    assert asked.state == "pending" and not _pool().versions.filter(version=2).exists()
    requested = AuditEvent.objects.get(action="pool.version_requested")
    assert requested.actor_name == "asker" and requested.after["lines"] == asked.numbers["lines"]
    assert not AuditEvent.objects.filter(action="pool.version_created", object_type="progressive.poolversion",
                                         after__version=2).exists()

    stored = _awarded_round(u01, "while-asked", SWITCH + timedelta(minutes=1))
    assert stored.pool_version.version == 1 and stored.status == "verified"


def test_an_approval_writes_the_version_from_then_on_never_reaching_back(u01):
    asked = _ask(person("supervisor", "asker"))
    waited = _awarded_round(u01, "while-waiting", SWITCH + timedelta(hours=1))

    before = timezone.now()
    approved = pool_version_approve(asked=asked, actor=Actor.of_user(person("supervisor", "second")))
    version = approved.version
    assert approved.state == "approved" and approved.decided_by_name == "second"
    # Asked from SWITCH, approved days later: in force from the approval, not from SWITCH.
    assert version.version == 2 and version.effective_from >= before
    assert version.lines == asked.numbers["lines"] and version.created_by == asked.requested_by
    assert version.note == "awards ten times"
    waited.refresh_from_db()
    assert waited.pool_version.version == 1
    created = AuditEvent.objects.get(action="pool.version_created", object_id=str(version.pk))
    assert (created.actor_name, created.after["requested_by"], created.after["approved_by"]) == (
        "second", "asker", "second")
    assert created.after["version_request"] == asked.pk
    approval = AuditEvent.objects.get(action="pool.version_approved", object_id=str(asked.pk))
    assert approval.after["version"] == 2
    # The full house now pays 250: the old 25 is a short payment.
    after = _awarded_round(u01, "after", timezone.now())
    assert after.pool_version == version and after.status != "verified"


def test_the_asker_and_the_system_cannot_approve_and_a_request_is_decided_once():
    asker = person("supervisor", "asker")
    asked = _ask(asker)
    with pytest.raises(ApprovalError, match="another supervisor approves it"):
        pool_version_approve(asked=asked, actor=Actor.of_user(asker))
    with pytest.raises(ApprovalError, match="a person decides"):
        pool_version_approve(asked=asked, actor=SYSTEM)
    with pytest.raises(PoolConfigError) as missing:
        pool_version_reject(asked=asked, actor=Actor.of_user(asker), note=" ")
    assert "note" in missing.value.errors
    withdrawn = pool_version_reject(asked=asked, actor=Actor.of_user(asker), note="wrong pool")
    assert withdrawn.state == "rejected" and withdrawn.version is None
    assert AuditEvent.objects.filter(action="pool.version_rejected", object_id=str(asked.pk)).exists()
    with pytest.raises(ApprovalError) as again:
        pool_version_approve(asked=asked, actor=Actor.of_user(person("supervisor", "second")))
    assert again.value.conflict and again.value.code == "decided"
    assert not _pool().versions.filter(version=2).exists()


def test_a_puppet_of_the_asker_cannot_approve_the_version():
    admin = person("admin", "boss")
    puppet = person(None, "puppet")
    user_roles_set(user=puppet, roles=["supervisor"], actor=Actor.of_user(admin))
    asked = _ask(admin)
    with pytest.raises(ApprovalError) as refused:
        pool_version_approve(asked=asked, actor=Actor.of_user(puppet))
    assert refused.value.code == "not_independent" and "approver" in refused.value.errors
    assert "boss" in str(refused.value) and "user.roles_set" in str(refused.value)
    assert not _pool().versions.filter(version=2).exists()


def test_a_note_or_a_tolerance_alone_and_the_system_need_no_second_supervisor():
    first = _pool().versions.get(version=1)
    same = pool_version_create(pool=_pool(), effective_from=SWITCH, actor=Actor.of_user(person("supervisor")),
                               note="restated", **_numbers(first, reading_tolerance="5.00"))
    assert isinstance(same, PoolVersion) and same.version == 2 and same.created_by.username == "supervisor-user"
    # Migrations, seeds and management commands run as the system: whoever runs them holds the server.
    by_system = pool_version_create(pool=_pool(), effective_from=SWITCH + timedelta(hours=1), actor=SYSTEM,
                                    note="shipped", **_numbers(first, lines=_lines_raised(first)))
    assert isinstance(by_system, PoolVersion) and by_system.version == 3


@pytest.mark.parametrize("change", [
    {"wager": "10.00"}, {"rate": "0.25"}, {"reseed": "12000.00"}, {"ceiling": "50000.00"},
    {"reserve_rate": "0.05"},
])
def test_every_number_that_changes_a_settlement_needs_a_second_supervisor(change):
    asked = pool_version_create(pool=_pool(), effective_from=SWITCH, actor=Actor.of_user(person("supervisor")),
                                note="x", **_numbers(_pool().versions.get(version=1), **change))
    assert isinstance(asked, PoolVersionRequest)


def test_an_approval_is_checked_again_against_the_meter():
    first = _pool().versions.get(version=1)
    asked = pool_version_create(pool=_pool(), effective_from=SWITCH, actor=Actor.of_user(person("supervisor")),
                                note="capped", **_numbers(first, ceiling="10000.00"))
    # The meter holds its reseed, 10,000.00, as asked; a cent more and the ceiling is below it.
    meter_adjust(pool=_pool(), delta="1.00", actor=SYSTEM, reason="count")
    with pytest.raises(PoolConfigError) as refused:
        pool_version_approve(asked=asked, actor=Actor.of_user(person("supervisor", "second")))
    assert "ceiling" in refused.value.errors
    asked.refresh_from_db()
    assert asked.state == "pending" and not _pool().versions.filter(version=2).exists()


def test_what_was_asked_and_a_decision_cannot_be_changed_in_the_database():
    asked = _ask(person("supervisor", "asker"))
    with pytest.raises((DatabaseError, IntegrityError)), transaction.atomic():
        PoolVersionRequest.objects.filter(pk=asked.pk).update(numbers={"lines": []})
    with pytest.raises(IntegrityError), transaction.atomic():
        PoolVersionRequest.objects.filter(pk=asked.pk).update(
            state="approved", decided_by_id=asked.requested_by_id, decided_at=timezone.now(),
            version=_pool().versions.get(version=1))
    pool_version_reject(asked=asked, actor=Actor.of_user(person("supervisor", "second")), note="no")
    with pytest.raises(DatabaseError), transaction.atomic():
        PoolVersionRequest.objects.filter(pk=asked.pk).update(decision_note="changed")
    with pytest.raises(DatabaseError), transaction.atomic():
        PoolVersionRequest.objects.filter(pk=asked.pk).delete()
