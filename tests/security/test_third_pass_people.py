"""Issue 45, items 1 and 3: who may act, held to the trail whatever the path.

Every change of a person is an audit event whatever path made it; ``verify_audit`` holds people,
roles, tables' keys and counts to their events, so the insider edits the third attack made with
the application's own database role are each named; and the second person of dual control is
independent of the asker as a graph of who made or changed whom.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction

from audit.counts import count_enter
from casino.people import CREATED, person_record, person_state
from casino.services import user_roles_set
from progressive.models import MeterAdjustmentRequest, Pool
from progressive.services import ApprovalError, adjustment_approve, meter_adjust
from tests.insider import as_owner
from tests.reconciliation.days import DAY
from tests.security.people import hired, person
from trail.models import AuditEvent
from trail.services import SYSTEM, Actor

pytestmark = pytest.mark.django_db
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIGURES = {"drop": "90000", "fills": "3000", "credits": "500", "opening_inventory": "50000",
           "closing_inventory": "51000"}
on_postgresql = pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the application's own role")


def _verify() -> tuple[str, str]:
    output = io.StringIO()
    try:
        call_command("verify_audit", "--full", stdout=output)
    except CommandError as failed:
        return output.getvalue(), str(failed)
    return output.getvalue(), ""


def _sql(statement: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def _events(user) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(object_type="auth.user", object_id=str(user.pk)).order_by("seq"))


# ---- verify_audit: the insider's edits with the application's role ------------------------------


def test_untouched_people_keys_and_counts_verify(table_client):
    table_client("S01", "se-50kr")
    count_enter(table_code="S01", gaming_day=DAY, amounts=FIGURES, user=person("supervisor", "cage"))
    said, failed = _verify()
    assert failed == ""
    assert "every person is what the audit trail last recorded" in said
    assert "every table key is one the audit trail recorded issued" in said
    assert "every count and correction is what the audit trail recorded" in said


@on_postgresql
def test_a_supervisor_membership_inserted_is_named():
    nobody = person(None, "quiet")
    supervisors = Group.objects.get(name="supervisor")
    _sql("INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)", [nobody.pk, supervisors.pk])
    said, failed = _verify()
    assert f"person quiet (#{nobody.pk}): roles stored ['supervisor'], the trail recorded []" in said
    assert "1 people or roles not what the audit trail" in failed


@on_postgresql
def test_a_password_a_flag_a_permission_and_a_person_inserted_are_named():
    someone = person("auditor", "someone")
    _sql("UPDATE auth_user SET password = 'pbkdf2_sha256$1$test$forged', is_superuser = true WHERE id = %s", [someone.pk])
    _sql("INSERT INTO auth_user (username, password, is_superuser, is_staff, is_active, first_name, last_name, "
         "email, date_joined) VALUES ('ghost', '', true, true, true, '', '', '', now())")
    adjust = Permission.objects.get(content_type__app_label="progressive", codename="add_meterevent")
    _sql("INSERT INTO auth_group_permissions (group_id, permission_id) VALUES (%s, %s)",
         [Group.objects.get(name="auditor").pk, adjust.pk])
    said, failed = _verify()
    assert f"person someone (#{someone.pk}): the password is not the one the audit trail last recorded" in said
    assert f"person someone (#{someone.pk}): is_superuser stored True, the trail recorded False" in said
    assert "person ghost (#" in said and "the audit trail never recorded this person" in said
    assert "role auditor: permissions stored {'more than declared': ['progressive.add_meterevent']" in said
    assert "4 people or roles not what the audit trail" in failed


@on_postgresql
def test_a_count_rewritten_by_the_owner_and_a_correction_inserted_are_named(table_client):
    table_client("S01", "se-50kr")
    count = count_enter(table_code="S01", gaming_day=DAY, amounts=FIGURES, user=person("supervisor", "cage"))
    # The application's role cannot switch the count's protection off ...
    with pytest.raises(DatabaseError, match="must be owner"), transaction.atomic():
        _sql("ALTER TABLE audit_tablecount DISABLE TRIGGER audit_tablecount_append_only")
    # ... the owner can; and the application's role can insert a correction with no event.
    with as_owner():
        _sql("SET CONSTRAINTS ALL IMMEDIATE")
        _sql("ALTER TABLE audit_tablecount DISABLE TRIGGER audit_tablecount_append_only")
        _sql("UPDATE audit_tablecount SET drop = 10 WHERE id = %s", [count.pk])
        _sql("ALTER TABLE audit_tablecount ENABLE TRIGGER audit_tablecount_append_only")
    _sql("INSERT INTO audit_tablecount (table_id, gaming_day, currency, drop, fills, credits, opening_inventory, "
         "closing_inventory, source, note, entered_by_id, entered_by_name, entered_at) "
         "SELECT table_id, gaming_day + 1, currency, 5, 0, 0, 0, 0, source, 'quiet', entered_by_id, "
         "entered_by_name, now() FROM audit_tablecount WHERE id = %s", [count.pk])
    said, failed = _verify()
    assert f"count #{count.pk} (S01 {DAY}): drop stored '10.00', the trail recorded '90000.00'" in said
    assert "the audit trail never recorded it" in said.split(f"count #{count.pk} (S01 {DAY}): drop")[1]
    assert "counts not what the audit trail recorded" in failed


@on_postgresql
def test_a_table_key_inserted_or_kept_working_is_named(table_client):
    s01, s02 = table_client("S01", "se-50kr"), table_client("S02", "se-50kr")
    from rounds.models import TableKey
    from rounds.services.tables import key_hash

    _sql("INSERT INTO rounds_tablekey (table_id, key_id, key_hash, created_at) VALUES (%s, 'abcdef012345', %s, now())",
         [s02.table.pk, key_hash("the insider's secret")])
    from rounds.services import table_register

    table_register(code="S01", config_name="se-50kr", actor=SYSTEM)  # rotated: the old key ends now
    old = TableKey.objects.filter(table=s01.table).order_by("pk").first()
    _sql("UPDATE rounds_tablekey SET expires_at = NULL WHERE id = %s", [old.pk])
    said, failed = _verify()
    assert "table S02 key abcdef012345: the audit trail never recorded it issued to this table" in said
    assert f"table S01 key {old.key_id}: works until never expiring, the audit trail said" in said
    assert "2 tables' keys the audit trail did not issue as they are" in failed


# ---- every path records a change of a person -----------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_shell_s_changes_are_recorded_as_unattributed_and_the_admin_s_once():
    user = get_user_model().objects.create_user("shelly", password="first-password-for-tests")
    made = _events(user)
    assert [e.action for e in made] == [CREATED] and made[0].actor_name.startswith("unattributed")
    user.set_password("second-password-for-tests")
    user.save()
    Group.objects.get(name="supervisor").user_set.add(user)  # from the group's side
    actions = [(e.action, e.after["roles"]) for e in _events(user)]
    assert actions == [(CREATED, []), ("user.changed", []), ("user.changed", ["supervisor"])]
    assert _events(user)[1].before["password"] != _events(user)[1].after["password"]
    # A path of the service records its own event, with its actor; nothing more is added.
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)
    assert [e.action for e in _events(user)][3:] == ["user.roles_set"]
    # A login writes last_login alone: no event.
    user.save(update_fields=["last_login"])
    assert len(_events(user)) == 4


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_createsuperuser_is_recorded_with_the_command_and_who_ran_it():
    database = connection.settings_dict
    env = {**os.environ, "DATABASE_URL": f"postgres://table_audit_app@{database['HOST'] or '127.0.0.1'}:"
                                         f"{database['PORT'] or 5432}/{database['NAME']}",
           "DJANGO_SUPERUSER_PASSWORD": "a-long-password-for-this-test"}
    done = subprocess.run([sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "root2",
                           "--email", "root2@example.com"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    root = get_user_model().objects.get(username="root2")
    (made,) = _events(root)
    assert made.action == CREATED and made.actor_name.startswith("manage.py createsuperuser (by ")
    assert made.after["is_superuser"] is True and made.after == person_state(root)


# ---- independence as a graph --------------------------------------------------------------------


@pytest.fixture
def _amounts(settings):
    settings.METER_SECOND_APPROVAL_ABOVE = {"USD": Decimal("10000")}
    settings.APPROVER_INDEPENDENCE_DAYS = 30


def _ask(user) -> MeterAdjustmentRequest:
    asked = meter_adjust(pool=Pool.objects.get(code="us-progressive"), delta=Decimal("90000"),
                         actor=Actor.of_user(user), reason="count")
    assert isinstance(asked, MeterAdjustmentRequest)
    return asked


def _made_by(maker, username: str, role: str):
    with transaction.atomic():
        user = get_user_model().objects.create_user(username)
        person_record(user=user, actor=Actor.of_user(maker), action=CREATED)
    user_roles_set(user=user, roles=[role], actor=Actor.of_user(maker))
    return user


def _refused(asked, approver) -> str:
    with pytest.raises(ApprovalError) as refused:
        adjustment_approve(asked=asked, actor=Actor.of_user(approver))
    assert refused.value.code == "not_independent"
    return str(refused.value)


@pytest.mark.usefixtures("_amounts")
def test_a_puppet_asks_and_its_maker_approves_refused():
    admin = person("admin", "admin1")
    pup_a = _made_by(admin, "pupA", "supervisor")
    assert "admin1 made the user pupA" in _refused(_ask(pup_a), admin)


@pytest.mark.usefixtures("_amounts")
def test_two_puppets_of_one_hand_are_not_each_other_s_second_person():
    admin = person("admin", "admin1")
    pup_b, pup_c = _made_by(admin, "pupB", "supervisor"), _made_by(admin, "pupC", "supervisor")
    assert "admin1 made or changed both pupC and pupB within the last 30 days" in _refused(_ask(pup_b), pup_c)


@pytest.mark.usefixtures("_amounts")
def test_an_account_no_person_made_approves_nothing():
    admin = person("admin", "admin1")
    made_by_a_command = get_user_model().objects.create_user("root2")
    person_record(user=made_by_a_command, actor=Actor.of_command("createsuperuser"), action=CREATED)
    user_roles_set(user=made_by_a_command, roles=["supervisor"], actor=Actor.of_command("set_roles"))
    said = _refused(_ask(admin), made_by_a_command)
    assert "the user root2 was made by manage.py createsuperuser" in said


@pytest.mark.usefixtures("_amounts")
def test_an_approver_who_changed_the_asker_is_refused_and_two_people_of_different_hands_approve():
    asker, approver = person("supervisor", "ann"), person("supervisor", "bo")
    asked = _ask(asker)
    user_roles_set(user=asker, roles=["supervisor", "auditor"], actor=Actor.of_user(approver))
    assert "bo changed the user ann (user.roles_set" in _refused(asked, approver)
    independent = person("supervisor", "cy")
    assert adjustment_approve(asked=asked, actor=Actor.of_user(independent)).state == "approved"


def test_hired_people_are_recorded_whole():
    user = hired("plain")
    assert _events(user)[-1].after == person_state(user)


@pytest.mark.django_db(transaction=True)
def test_a_person_made_inactive_in_a_shell_gives_his_cases_back_with_the_change(table_client):
    from rounds.models import Finding
    from rounds.services import case_change
    from tests import examples

    client = table_client("S01", "se-50kr")
    example = next(e for e in examples.load("se-50kr.jsonl") if "payout_mismatch" in e["expect"]["codes"])
    assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    finding = Finding.objects.filter(code="payout_mismatch").first()
    pit = person("supervisor", "pit")
    case_change(model=Finding, finding_id=finding.pk, user=None, assignee=pit)
    pit.is_active = False
    pit.save()  # a shell's change: no service path
    finding.refresh_from_db()
    assert (finding.assignee, finding.assignee_name) == (None, "")
    handed = AuditEvent.objects.filter(action="finding.case", object_id=str(finding.pk)).order_by("-seq").first()
    changed = _events(pit)[-1]
    assert handed.actor_name.startswith("unattributed") and handed.seq < changed.seq
    assert changed.action == "user.changed" and changed.after["is_active"] is False


@on_postgresql
def test_a_token_or_an_authenticator_inserted_past_the_service_is_named():
    from datetime import timedelta

    from django.utils import timezone
    from django_otp.plugins.otp_totp.models import TOTPDevice
    from django_otp_webauthn.models import WebAuthnCredential
    from knox.models import AuthToken

    from api.tokens import token_make
    from tests.security.people import authenticator

    sara = person("supervisor", "sara")
    made, _ = token_make(user=sara, days=1, name="export")
    authenticator(sara)
    said, failed = _verify()
    assert failed == "" and "every token and authenticator is one its person made" in said

    AuthToken.objects.filter(pk=made.pk).update(expiry=timezone.now() + timedelta(days=400))
    AuthToken.objects.create(user=sara, expiry=timedelta(days=1))  # an insider's, its text in his hand
    TOTPDevice.objects.create(user=person("supervisor", "sven"), name="quiet", confirmed=True)
    # A passkey whose private key an insider holds, its public half written past the service.
    WebAuthnCredential.objects.create(user=person("supervisor", "pia"), name="quiet key", confirmed=True,
                                      credential_id=b"\x01" * 16,
                                      public_key=b"\x02" * 77, sign_count=0)
    said, failed = _verify()
    assert f"token {made.token_key} of sara: works until" in said
    assert said.count("the audit trail never recorded it made by its person") == 1
    assert "authenticator otp_totp.totpdevice/" in said and "of sven: the audit trail never recorded" in said
    assert "passkey django_otp_webauthn.webauthncredential/" in said and "of pia: the audit trail never" in said
    assert "4 tokens or authenticators the audit trail did not record" in failed
