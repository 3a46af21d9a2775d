"""Issue 45, item 6: people sign in against the casino's directory (a real slapd the test starts),
its groups are their roles, and dual control reads who made whom in the directory."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, RequestFactory

from casino.directory import role_groups_checked
from casino.proof_people import people_differences
from casino.roles import roles_sync
from progressive.models import MeterAdjustmentRequest, Pool
from progressive.services import ApprovalError, adjustment_approve, meter_adjust
from tests.directory import ROOT_DN, Directory, dn_of
from trail.approvals import DIRECTORY_FACTS, approver_tie
from trail.models import AuditEvent
from trail.services import Actor

pytestmark = pytest.mark.django_db
_names = itertools.count(1)


@pytest.fixture(scope="module")
def directory():
    server = Directory().start()
    yield server
    server.stop()


@pytest.fixture
def signed_in_by_directory(directory, settings):
    for name, value in directory.settings().items():
        setattr(settings, name, value)
    settings.METER_SECOND_APPROVAL_ABOVE = {"USD": Decimal("10000")}
    settings.APPROVER_INDEPENDENCE_DAYS = 30
    roles_sync()
    return directory


def _uid(stem: str) -> str:
    return f"{stem}{next(_names)}"


def _sign_in(*, username: str, password: str):
    """Who the service's backends let in with these (axes reads the request)."""
    return authenticate(RequestFactory().post("/admin/login/"), username=username, password=password)


def _events(user) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(object_type="auth.user", object_id=str(user.pk)).order_by("seq"))


def test_a_directory_person_signs_in_with_its_password_and_its_groups_are_his_roles(signed_in_by_directory):
    directory = signed_in_by_directory
    hr = _uid("hr")
    directory.person(hr, "hr-test-password")
    sara = _uid("sara")
    directory.person(sara, "sara-test-password", by=(dn_of(hr), "hr-test-password"))
    directory.join(sara, "supervisor")

    assert _sign_in(username=sara, password="not-her-test-password") is None
    assert not get_user_model().objects.filter(username=sara).exists()
    user = _sign_in(username=sara, password="sara-test-password")
    assert user is not None and user.is_staff and not user.has_usable_password()
    assert sorted(user.groups.values_list("name", flat=True)) == ["supervisor"]
    assert user.email == f"{sara}@casino.test"
    made, roles = _events(user)
    assert (made.action, made.actor_kind) == ("user.created", "system")
    assert made.actor_name == f"directory {directory.uri}"
    assert made.after[DIRECTORY_FACTS]["dn"] == dn_of(sara)
    assert made.after[DIRECTORY_FACTS]["made_by"].lower() == dn_of(hr).lower()
    assert roles.action == "user.roles_set" and roles.after["roles"] == ["supervisor"]
    assert [d for d in people_differences() if sara in d.who] == []  # what the directory did is recorded whole

    # The directory moves her out of the supervisors: from her next sign-in she is none.
    directory.leave(sara, "supervisor")
    directory.join(sara, "auditor")
    user = _sign_in(username=sara, password="sara-test-password")
    assert sorted(user.groups.values_list("name", flat=True)) == ["auditor"]
    assert _events(user)[-1].after["roles"] == ["auditor"]
    # Signing in again with nothing changed records nothing.
    count = len(_events(user))
    _sign_in(username=sara, password="sara-test-password")
    assert len(_events(user)) == count


def test_a_person_in_no_role_group_signs_in_to_nothing(signed_in_by_directory):
    directory = signed_in_by_directory
    visitor = _uid("visitor")
    directory.person(visitor, "visitor-test-password")
    client = Client()
    response = client.post("/admin/login/?next=/admin/", {"username": visitor, "password": "visitor-test-password"})
    assert response.status_code == 200  # the admin's form again: no staff role
    assert client.get("/admin/").status_code == 302
    visitor_user = get_user_model().objects.get(username=visitor)  # the directory let him in, to no role
    assert not visitor_user.is_staff and not visitor_user.groups.exists()


def _ask(user) -> MeterAdjustmentRequest:
    asked = meter_adjust(pool=Pool.objects.get(code="us-progressive"), delta=Decimal("90000"),
                         actor=Actor.of_user(user), reason="count")
    assert isinstance(asked, MeterAdjustmentRequest)
    return asked


def test_a_puppet_made_in_the_directory_by_the_asker_is_not_his_second_person(signed_in_by_directory):
    directory = signed_in_by_directory
    hr = _uid("hr")
    directory.person(hr, "hr-test-password")
    boss = _uid("boss")
    directory.person(boss, "boss-test-password", by=(dn_of(hr), "hr-test-password"))
    directory.join(boss, "supervisor")
    # The supervisor, who may write to the directory, makes a second account and puts it in the group.
    pup = _uid("pup")
    directory.person(pup, "pup-test-password", by=(dn_of(boss), "boss-test-password"))
    directory.join(pup, "supervisor", by=(dn_of(boss), "boss-test-password"))
    boss_user = _sign_in(username=boss, password="boss-test-password")
    pup_user = _sign_in(username=pup, password="pup-test-password")

    with pytest.raises(ApprovalError) as refused:
        adjustment_approve(asked=_ask(boss_user), actor=Actor.of_user(pup_user))
    assert refused.value.code == "not_independent"
    assert f"{boss} made the user {pup} in the directory" in str(refused.value)
    assert f"{boss} made the user {pup} in the directory" in approver_tie(
        approver_id=boss_user.pk, requester_id=pup_user.pk)


def test_two_people_the_directory_s_one_hand_made_lately_are_tied_and_two_of_different_hands_approve(
        signed_in_by_directory):
    directory = signed_in_by_directory
    makers = [_uid("hr"), _uid("hr")]
    for maker in makers:
        directory.person(maker, "hr-test-password")
    one, two, other = _uid("ann"), _uid("bo"), _uid("cy")
    for uid, maker in ((one, makers[0]), (two, makers[0]), (other, makers[1])):
        directory.person(uid, f"{uid}-test-password", by=(dn_of(maker), "hr-test-password"))
        directory.join(uid, "supervisor")
    users = {uid: _sign_in(username=uid, password=f"{uid}-test-password") for uid in (one, two, other)}

    tie = approver_tie(approver_id=users[two].pk, requester_id=users[one].pk)
    assert tie is not None and f"uid={makers[0]}" in tie and "made or changed both" in tie
    asked = _ask(users[one])
    assert adjustment_approve(asked=asked, actor=Actor.of_user(users[other])).state == "approved"


def test_people_the_directory_s_root_made_are_tied_while_it_is_recent(signed_in_by_directory, settings):
    directory = signed_in_by_directory
    one, two = _uid("dee"), _uid("eve")
    for uid in (one, two):
        directory.person(uid, f"{uid}-test-password")
        directory.join(uid, "supervisor")
    users = [_sign_in(username=uid, password=f"{uid}-test-password") for uid in (one, two)]
    assert ROOT_DN in (approver_tie(approver_id=users[1].pk, requester_id=users[0].pk) or "")


def test_the_role_groups_must_name_roles_of_people(settings):
    settings.DIRECTORY_ROLE_GROUPS = {"supervisor": "cn=s,dc=x", "table": "cn=t,dc=x"}
    with pytest.raises(ImproperlyConfigured, match="table=cn=t,dc=x"):
        role_groups_checked()
    settings.DIRECTORY_ROLE_GROUPS = {"superviser": "cn=s,dc=x"}
    with pytest.raises(ImproperlyConfigured, match="superviser"):
        role_groups_checked()
    settings.DIRECTORY_ROLE_GROUPS = {}
    with pytest.raises(ImproperlyConfigured, match="DIRECTORY_ROLE_GROUPS"):
        role_groups_checked()
    settings.DIRECTORY_ROLE_GROUPS = {"supervisor": "cn=s,dc=x"}
    role_groups_checked()
