"""Roles are groups made by a migration, with permissions from casino/roles.py."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from rest_framework.test import APIClient

from casino.services import RoleError, user_roles_set
from tests import examples
from trail.models import AuditEvent
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


def _perms(group: str) -> set[str]:
    return {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Group.objects.get(name=group).permissions.select_related("content_type")
    }


def test_each_role_exists_with_its_permissions():
    assert _perms("table") == set()
    auditor, supervisor, admin = _perms("auditor"), _perms("supervisor"), _perms("admin")
    assert {"rounds.view_round", "rounds.view_submission", "trail.view_auditevent",
            "progressive.view_meterevent", "rounds.work_finding"} <= auditor
    assert not {p for p in auditor if p.split(".")[1].startswith(("add_", "change_", "delete_"))}
    assert "progressive.adjust_meter" not in auditor and "rounds.void_round" not in auditor
    assert auditor < supervisor
    assert {"progressive.adjust_meter", "rounds.void_round", "rounds.add_tableconfigversion"} <= supervisor
    assert supervisor < admin and "auth.change_user" in admin
    # Celery's tables are the service's machinery: admins see them and keep the schedule.
    for role in ("auditor", "supervisor"):
        assert not {p for p in _perms(role) if p.startswith(("django_celery_beat.", "django_celery_results."))}
    assert {"django_celery_beat.change_periodictask", "django_celery_beat.view_periodictask",
            "django_celery_results.view_taskresult"} <= admin
    assert "django_celery_results.delete_taskresult" not in admin
    # Nobody may change or delete what tables sent, not even an admin.
    for role in ("auditor", "supervisor", "admin"):
        assert not {"rounds.change_round", "rounds.delete_round", "rounds.change_submission",
                    "rounds.delete_submission", "trail.change_auditevent", "trail.delete_auditevent"} & _perms(role)


def test_setting_roles_opens_the_admin_and_is_audited(django_user_model):
    user = django_user_model.objects.create_user("ines", password="a-long-test-password")
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)
    user.refresh_from_db()
    assert user.is_staff and list(user.groups.values_list("name", flat=True)) == ["auditor"]
    event = AuditEvent.objects.get(action="user.roles_set")
    assert event.after["roles"] == ["auditor"] and event.before == {"roles": []}
    user_roles_set(user=user, roles=[], actor=SYSTEM)
    user.refresh_from_db()
    assert not user.is_staff


def test_unknown_roles_are_refused(django_user_model):
    user = django_user_model.objects.create_user("olle")
    with pytest.raises(RoleError):
        user_roles_set(user=user, roles=["croupier"], actor=SYSTEM)
    assert not user.groups.exists()


def test_set_roles_command(django_user_model, capsys):
    django_user_model.objects.create_user("sara")
    call_command("set_roles", "sara", "supervisor")
    assert "supervisor" in capsys.readouterr().out
    assert django_user_model.objects.get(username="sara").has_perm("progressive.adjust_meter")
    # The trail names the command and the login that ran it, not "system".
    (event,) = AuditEvent.objects.filter(action="user.roles_set")
    assert event.actor_kind == "system" and event.actor_name.startswith("manage.py set_roles (by ")


@pytest.mark.parametrize("role,can_read", [("auditor", True), ("supervisor", True), ("table", False)])
def test_the_read_api_follows_the_role(django_user_model, table_client, role, can_read):
    table_client("S01", "se-50kr").post(
        "/api/v1/rounds/", examples.load("se-50kr.jsonl")[0]["record"], format="json"
    )
    user = django_user_model.objects.create_user(f"u-{role}")
    user_roles_set(user=user, roles=[role], actor=SYSTEM)
    client = APIClient()
    client.force_authenticate(user)
    response = client.get("/api/v1/rounds/")
    assert response.status_code == (200 if can_read else 403)
    # No person, whatever their role, posts rounds: only a table's key does.
    posted = client.post("/api/v1/rounds/", examples.load("se-50kr.jsonl")[1]["record"], format="json")
    assert posted.status_code == 403


def test_role_changes_in_the_admin_are_audited(admin_client, django_user_model):
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user("tove")
    auditor = Group.objects.get(name="auditor")
    response = admin_client.post(f"/admin/auth/user/{user.pk}/change/", {
        "username": "tove", "is_active": "on", "is_staff": "on", "groups": [auditor.pk],
        "date_joined_0": "2026-11-30", "date_joined_1": "10:00:00",
    })
    assert response.status_code == 302, response.content.decode()[:1500]
    event = AuditEvent.objects.get(action="user.changed")
    assert event.before["roles"] == [] and event.after["roles"] == ["auditor"]
    assert event.after["is_staff"] is True and event.actor_name == "admin"


def test_permissions_ticked_one_by_one_in_the_admin_are_audited_and_tie_the_person(admin_client,
                                                                                   django_user_model):
    """A permission ticked on the user's page gives what a role gives: it is a change of the person,
    and the admin who ticked it is tied to him (``trail.approvals.approver_tie``)."""
    from django.contrib.auth.models import Permission

    from trail.approvals import approver_tie

    user = django_user_model.objects.create_user("tove")
    notices = Permission.objects.get(content_type__app_label="rounds", codename="receive_notices")
    response = admin_client.post(f"/admin/auth/user/{user.pk}/change/", {
        "username": "tove", "is_active": "on", "user_permissions": [notices.pk],
        "date_joined_0": "2026-11-30", "date_joined_1": "10:00:00",
    })
    assert response.status_code == 302, response.content.decode()[:1500]
    event = AuditEvent.objects.get(action="user.changed")
    assert event.before["permissions"] == [] and event.after["permissions"] == ["rounds.receive_notices"]
    admin = django_user_model.objects.get(username="admin")
    assert approver_tie(approver_id=user.pk, requester_id=admin.pk).startswith("admin changed the user tove (user.changed")


def test_a_person_made_inactive_in_the_admin_holds_no_case_after(admin_client, django_user_model, table_client):
    from rounds.models import Finding
    from rounds.services import case_change

    client = table_client("S01", "se-50kr")
    example = next(e for e in examples.load("se-50kr.jsonl") if "payout_mismatch" in e["expect"]["codes"])
    assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    finding = Finding.objects.filter(code="payout_mismatch").first()
    pit = django_user_model.objects.create_user("pit", password="pw-for-tests-only")
    user_roles_set(user=pit, roles=["supervisor"], actor=SYSTEM)
    case_change(model=Finding, finding_id=finding.pk, user=None, assignee=pit)
    from django.contrib.auth.models import Group

    response = admin_client.post(f"/admin/auth/user/{pit.pk}/change/", {
        "username": "pit", "is_staff": "on", "groups": [Group.objects.get(name="supervisor").pk],
        "date_joined_0": "2026-11-30", "date_joined_1": "10:00:00",
    })
    assert response.status_code == 302, response.content.decode()[:1500]
    finding.refresh_from_db()
    assert (finding.assignee, finding.assignee_name) == (None, "")
    handed = AuditEvent.objects.filter(action="finding.case", object_id=str(finding.pk)).order_by("-seq").first()
    assert handed.actor_name == "admin" and handed.after["note"] == "pit was changed in the admin"


def test_a_refused_api_action_is_itself_audited(table_client, django_user_model):
    table_client("U01", "us-30k").post("/api/v1/rounds/", examples.load("us-30k.jsonl")[0]["record"],
                                       format="json")
    from rounds.models import Round

    user = django_user_model.objects.create_user("ulla")
    user_roles_set(user=user, roles=["auditor"], actor=SYSTEM)
    client = APIClient()
    client.force_authenticate(django_user_model.objects.get(pk=user.pk))
    round_ = Round.objects.get()
    assert client.post(f"/api/v1/rounds/{round_.pk}/void", {"reason": "x"}, format="json").status_code == 403
    event = AuditEvent.objects.get(action="api.refused")
    assert event.actor_name == "ulla" and event.object_repr == f"POST /api/v1/rounds/{round_.pk}/void"


def test_a_table_key_shown_to_the_admin_is_refused_and_logged(table_client):
    client = table_client("S01", "se-50kr")
    response = client.get("/admin/rounds/round/")
    assert response.status_code == 403
    assert AuditEvent.objects.filter(action="admin.table_key_refused").count() == 1
