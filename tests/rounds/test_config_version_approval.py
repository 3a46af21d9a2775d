"""A configuration version that changes what is paid needs a second supervisor (issue 27, item 9).

The attack: a supervisor alone made a version paying 100:1 on the Blind, in
force a minute later, and a round paid 100 times was stored ``verified``.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from datetime import timezone as tz
from decimal import Decimal

import pytest
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from casino.services import user_roles_set
from rounds.models import ConfigVersionRequest, Round, TableConfig, TableConfigVersion
from rounds.services import (
    ConfigApprovalError,
    ConfigError,
    config_version_approve,
    config_version_create,
    config_version_reject,
)
from tests import examples
from tests.security.people import person
from trail.models import AuditEvent
from trail.services import SYSTEM, Actor

pytestmark = pytest.mark.django_db

FLUSH_ROUND = next(e for e in examples.load("se-50kr.jsonl") if e["record"]["round"] == "c-se-07")
SWITCH = datetime(2026, 11, 29, 12, 0, tzinfo=tz.utc)


def _numbers(version: TableConfigVersion, **change) -> dict:
    numbers = {name: getattr(version, name) for name in (
        "currency", "minor_unit", "unit", "ante_min", "ante_max", "trips_min", "trips_max", "blind_pays",
        "trips_pays", "aggregate_limit", "dealer_qualifier", "one_hand_per_player")}
    return numbers | change


def _hundred_to_one(config: TableConfig) -> dict:
    first = config.versions.get(version=1)
    return _numbers(first, blind_pays=dict(first.blind_pays, flush="100"))


def _paid_a_hundred_times(round_id: str, dealt_at: datetime) -> dict:
    record = copy.deepcopy(FLUSH_ROUND["record"])
    record["round"], record["dealt_at"] = round_id, dealt_at.isoformat()
    record["seats"][0]["paid"]["blind"] = str(Decimal(record["seats"][0]["blind"]) * 100)
    return record


def _ask(config: TableConfig, asker, effective_from: datetime = SWITCH) -> ConfigVersionRequest:
    asked = config_version_create(config=config, effective_from=effective_from, actor=Actor.of_user(asker),
                                  note="flush pays 100:1", **_hundred_to_one(config))
    assert isinstance(asked, ConfigVersionRequest)
    return asked


def test_one_supervisors_pay_table_judges_no_round_until_a_second_approves(table_client):
    client = table_client("S01", "se-50kr")
    config = TableConfig.objects.get(name="se-50kr")
    asked = _ask(config, person("supervisor", "asker"))
    assert asked.state == "pending" and not config.versions.filter(version=2).exists()
    requested = AuditEvent.objects.get(action="config.version_requested")
    assert requested.actor_name == "asker" and requested.after["blind_pays"]["flush"] == "100"

    answer = client.post("/api/v1/rounds/", _paid_a_hundred_times("paid-100x", SWITCH + timedelta(minutes=1)),
                         format="json")
    assert answer.status_code == 201, answer.json()
    stored = Round.objects.get(round_id="paid-100x")
    assert stored.config_version.version == 1 and stored.status != "verified"
    assert "payout_mismatch" in {f.code for f in stored.findings.all()}


def test_an_approval_writes_the_version_from_then_on_never_reaching_back(table_client):
    client = table_client("S01", "se-50kr")
    config = TableConfig.objects.get(name="se-50kr")
    asked = _ask(config, person("supervisor", "asker"))
    client.post("/api/v1/rounds/", _paid_a_hundred_times("while-waiting", SWITCH + timedelta(hours=1)), format="json")

    before = timezone.now()
    approved = config_version_approve(asked=asked, actor=Actor.of_user(person("supervisor", "second")))
    version = approved.version
    assert approved.state == "approved" and approved.decided_by_name == "second"
    # Asked from SWITCH, approved days later: in force from the approval, not from SWITCH.
    assert version.version == 2 and version.effective_from >= before
    assert version.blind_pays["flush"] == "100" and version.created_by == asked.requested_by
    assert Round.objects.get(round_id="while-waiting").config_version.version == 1
    created = AuditEvent.objects.get(action="config.version_created")
    assert (created.actor_name, created.after["requested_by"], created.after["approved_by"]) == (
        "second", "asker", "second")
    assert AuditEvent.objects.filter(action="config.version_approved", object_id=str(asked.pk)).exists()

    after = client.post("/api/v1/rounds/", _paid_a_hundred_times("after", timezone.now()), format="json")
    assert after.status_code == 201 and after.json()["status"] == "verified"
    assert Round.objects.get(round_id="after").config_version == version


def test_the_asker_cannot_approve_and_a_request_is_decided_once():
    config = TableConfig.objects.get(name="se-50kr")
    asker = person("supervisor", "asker")
    asked = _ask(config, asker)
    with pytest.raises(ConfigApprovalError, match="another supervisor approves it"):
        config_version_approve(asked=asked, actor=Actor.of_user(asker))
    with pytest.raises(ConfigApprovalError, match="a person decides"):
        config_version_approve(asked=asked, actor=SYSTEM)
    with pytest.raises(ConfigError) as missing:
        config_version_reject(asked=asked, actor=Actor.of_user(asker), note=" ")
    assert "note" in missing.value.errors
    withdrawn = config_version_reject(asked=asked, actor=Actor.of_user(asker), note="wrong table")
    assert withdrawn.state == "rejected" and withdrawn.version is None
    with pytest.raises(ConfigApprovalError) as again:
        config_version_approve(asked=asked, actor=Actor.of_user(person("supervisor", "second")))
    assert again.value.conflict and again.value.code == "decided"
    assert not config.versions.filter(version=2).exists()


def test_a_puppet_of_the_asker_cannot_approve_the_version():
    config = TableConfig.objects.get(name="se-50kr")
    admin = person("admin", "boss")
    puppet = person(None, "puppet")
    user_roles_set(user=puppet, roles=["supervisor"], actor=Actor.of_user(admin))
    asked = _ask(config, admin)
    with pytest.raises(ConfigApprovalError) as refused:
        config_version_approve(asked=asked, actor=Actor.of_user(puppet))
    assert refused.value.code == "not_independent" and "approver" in refused.value.errors
    assert "boss" in str(refused.value) and "user.roles_set" in str(refused.value)
    assert not config.versions.filter(version=2).exists()


def test_a_note_alone_and_the_system_need_no_second_supervisor():
    config = TableConfig.objects.get(name="se-50kr")
    first = config.versions.get(version=1)
    same = config_version_create(config=config, effective_from=SWITCH, actor=Actor.of_user(person("supervisor")),
                                 note="restated", **_numbers(first))
    assert isinstance(same, TableConfigVersion) and same.version == 2
    # Migrations, management commands and the demo run as the system: whoever runs them holds the server.
    by_system = config_version_create(config=config, effective_from=SWITCH + timedelta(hours=1), actor=SYSTEM,
                                      note="shipped", **_hundred_to_one(config))
    assert isinstance(by_system, TableConfigVersion) and by_system.version == 3


@pytest.mark.parametrize("change", [
    {"ante_max": "2000"}, {"dealer_qualifier": "high_card"}, {"aggregate_limit": "50000"},
    {"trips_pays": {"royal_flush": "100", "three_of_a_kind": "3"}},
])
def test_every_number_that_changes_a_settlement_needs_a_second_supervisor(change):
    config = TableConfig.objects.get(name="se-50kr")
    asked = config_version_create(config=config, effective_from=SWITCH, actor=Actor.of_user(person("supervisor")),
                                  note="x", **_numbers(config.versions.get(version=1), **change))
    assert isinstance(asked, ConfigVersionRequest)


def test_the_first_version_of_a_new_configuration_needs_a_second_supervisor():
    config = TableConfig.objects.create(name="us-new")
    numbers = _hundred_to_one(TableConfig.objects.get(name="se-50kr"))
    asked = config_version_create(config=config, effective_from=SWITCH, actor=Actor.of_user(person("supervisor")),
                                  note="new", **numbers)
    assert isinstance(asked, ConfigVersionRequest) and not config.versions.exists()


def test_what_was_asked_and_a_decision_cannot_be_changed_in_the_database():
    config = TableConfig.objects.get(name="se-50kr")
    asked = _ask(config, person("supervisor", "asker"))
    with pytest.raises((DatabaseError, IntegrityError)), transaction.atomic():
        ConfigVersionRequest.objects.filter(pk=asked.pk).update(numbers={"blind_pays": {"flush": "500"}})
    with pytest.raises(IntegrityError), transaction.atomic():
        ConfigVersionRequest.objects.filter(pk=asked.pk).update(
            state="approved", decided_by_id=asked.requested_by_id, decided_at=timezone.now(),
            version=config.versions.get(version=1))
    config_version_reject(asked=asked, actor=Actor.of_user(person("supervisor", "second")), note="no")
    with pytest.raises(DatabaseError), transaction.atomic():
        ConfigVersionRequest.objects.filter(pk=asked.pk).update(decision_note="changed")
