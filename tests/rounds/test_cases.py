"""A finding's case: given, prioritised, timed, commented and escalated, each an event; held to them."""

from __future__ import annotations

import smtplib
from datetime import UTC, timedelta

import pytest
from django.core.mail.backends.base import BaseEmailBackend
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from audit.proof_findings import finding_states_unrecorded
from casino.services import user_roles_set
from infra.work import Priority
from rounds.models import Finding
from rounds.services import CaseError, case_change, case_comment, case_escalate
from tests import examples
from trail.models import AuditEvent
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


class RefusingBackend(BaseEmailBackend):
    """A mail server that is down."""

    def send_messages(self, email_messages):
        raise smtplib.SMTPServerDisconnected("the mail server went away")


@pytest.fixture
def finding(table_client):
    client = table_client("S01", "se-50kr")
    flagged = next(e for e in examples.load("se-50kr.jsonl") if "payout_mismatch" in e["expect"]["codes"])
    client.post("/api/v1/rounds/", flagged["record"], format="json")
    return Finding.objects.filter(code="payout_mismatch").order_by("pk").first()


@pytest.fixture
def person(django_user_model):
    def make(name: str, role: str = "auditor", email: str = "") -> object:
        user = django_user_model.objects.create_user(name, email=email, password="pw-for-tests-only")
        user_roles_set(user=user, roles=[role], actor=SYSTEM)
        return user

    return make


def _events(finding, action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(object_type="rounds.finding", object_id=str(finding.pk),
                                          action=f"finding.{action}").order_by("seq"))


def test_a_case_is_given_prioritised_and_timed_each_change_an_event(finding, person):
    alice, bob = person("alice"), person("bob")
    due = timezone.now() + timedelta(hours=4)
    case_change(model=Finding, finding_id=finding.pk, user=alice, assignee=alice)
    case_change(model=Finding, finding_id=finding.pk, user=alice, assignee=bob, priority=Priority.URGENT, due_at=due)
    stored = Finding.objects.get(pk=finding.pk)
    assert (stored.assignee, stored.assignee_name, stored.priority, stored.due_at) == (bob, "bob", 1, due)
    first, second = _events(finding, "case")
    assert first.before["assignee"] == "" and first.after["assignee"] == "alice" and first.actor_name == "alice"
    assert second.before == first.after
    assert second.after == {"assignee": "bob", "priority": "urgent", "due": due.isoformat(), "escalated": ""}
    assert stored.state == "open", "a case changes no state"
    assert list(finding_states_unrecorded()) == []


def test_a_case_goes_only_to_who_may_work_it_and_only_when_it_changes(finding, person, django_user_model):
    alice = person("alice")
    outsider = django_user_model.objects.create_user("outsider", password="pw-for-tests-only", is_staff=True)
    with pytest.raises(CaseError, match="may not work"):
        case_change(model=Finding, finding_id=finding.pk, user=alice, assignee=outsider)
    with pytest.raises(CaseError, match="so already"):
        case_change(model=Finding, finding_id=finding.pk, user=alice, priority=Priority.NORMAL)
    with pytest.raises(CaseError, match="no such priority"):
        case_change(model=Finding, finding_id=finding.pk, user=alice, priority=9)
    assert Finding.objects.get(pk=finding.pk).assignee is None and _events(finding, "case") == []


def test_comments_are_events_of_the_finding_and_need_words(finding, person):
    alice = person("alice")
    case_comment(model=Finding, finding_id=finding.pk, user=alice, text="  Video shows the dealer paid 3:2.  ")
    (comment,) = _events(finding, "comment")
    assert comment.after == {"comment": "Video shows the dealer paid 3:2."} and comment.actor_name == "alice"
    with pytest.raises(CaseError, match="needs words"):
        case_comment(model=Finding, finding_id=finding.pk, user=alice, text="   ")
    with pytest.raises(CaseError, match="at most"):
        case_comment(model=Finding, finding_id=finding.pk, user=alice, text="x" * 4001)


def test_escalating_mails_the_supervisors_and_keeps_the_notice_in_the_trail(finding, person, mailoutbox, settings):
    settings.NOTICES_TO = ["surveillance@casino.example"]
    alice, boss = person("alice"), person("boss", "supervisor", "boss@casino.example")
    person("quiet-boss", "supervisor")  # no address: cannot be mailed
    case_change(model=Finding, finding_id=finding.pk, user=alice, assignee=alice)
    case_escalate(model=Finding, finding_id=finding.pk, user=alice, note="the same dealer, third time tonight")
    (mail,) = mailoutbox
    assert sorted(mail.to) == ["boss@casino.example", "surveillance@casino.example"]
    assert "Escalated by alice" in mail.subject and "third time tonight" in mail.body
    (escalated,) = _events(finding, "escalated")
    (notice,) = _events(finding, "notified")
    assert escalated.after["note"] == "the same dealer, third time tonight" and escalated.after["escalated"]
    assert notice.after["why"] == "escalated" and notice.after["sent"] is True and notice.after["to"] == sorted(mail.to)
    assert notice.seq > escalated.seq and boss.email in notice.after["to"]
    assert Finding.objects.get(pk=finding.pk).escalated_at is not None
    with pytest.raises(CaseError, match="escalated already"):
        case_escalate(model=Finding, finding_id=finding.pk, user=alice, note="again")
    assert list(finding_states_unrecorded()) == []


def test_a_notice_the_mail_server_refused_is_kept_with_why(finding, person, settings):
    settings.EMAIL_BACKEND = f"{__name__}.RefusingBackend"
    person("boss", "supervisor", "boss@casino.example")
    case_escalate(model=Finding, finding_id=finding.pk, user=person("alice"), note="now")
    (notice,) = _events(finding, "notified")
    assert notice.after["sent"] is False and "went away" in notice.after["error"]


def test_with_nobody_to_tell_the_notice_says_so(finding, person, settings):
    settings.NOTICES_TO = []
    case_escalate(model=Finding, finding_id=finding.pk, user=person("alice"), note="now")
    (notice,) = _events(finding, "notified")
    assert notice.after["sent"] is False and notice.after["to"] == [] and "no one to tell" in notice.after["error"]


def test_escalating_needs_a_note_and_an_informational_finding_is_no_case(person, table_client, finding):
    alice = person("alice")
    with pytest.raises(CaseError, match="needs a note"):
        case_escalate(model=Finding, finding_id=finding.pk, user=alice, note=" ")
    client = table_client("U01", "us-30k")
    client.post("/api/v1/rounds/", examples.load("us-30k.jsonl")[3]["record"], format="json")
    award = Finding.objects.get(code="progressive_award")
    with pytest.raises(CaseError, match="informational"):
        case_change(model=Finding, finding_id=award.pk, user=alice, assignee=alice)


@pytest.mark.parametrize(("column", "value"), [
    ("assignee_name", "'mallory'"), ("priority", "4"), ("due_at", "now() + interval '30 days'"),
    ("escalated_at", "NULL"),
])
def test_a_case_changed_past_the_service_is_named(finding, person, column, value):
    """The database lets the case's columns change (the service needs them); the proof names each
    change that no case event made."""
    alice = person("alice")
    case_escalate(model=Finding, finding_id=finding.pk, user=alice, note="look")
    case_change(model=Finding, finding_id=finding.pk, user=alice, assignee=alice, priority=Priority.HIGH,
                due_at=timezone.now() + timedelta(days=1))
    assert list(finding_states_unrecorded()) == []
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE rounds_finding SET {column} = {value} WHERE id = %s", [finding.pk])
    (named,) = finding_states_unrecorded()
    assert (named.finding_pk, named.column) == (finding.pk, "case")
    assert "its last audit event says" in str(named)


def test_a_case_made_with_no_event_at_all_is_named(finding):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE rounds_finding SET priority = 1 WHERE id = %s", [finding.pk])
    (named,) = finding_states_unrecorded()
    assert (named.column, named.recorded) == ("case", None) and "no audit event moved it" in str(named)


def test_a_due_time_typed_in_the_casinos_clock_is_the_same_instant_to_the_proof(finding, staff):
    """The admin reads a due time in the casino's zone; the event and the row agree on the instant, so
    the proof names nothing and the same time saved again changes nothing."""
    auditor = staff("auditor", "clock")
    url = f"/admin/rounds/finding/{finding.pk}/case/"
    typed = {"do": "case", "assignee": str(auditor.user.pk), "priority": "2", "due_at": "2026-12-24T18:30"}
    assert "the case is changed" in auditor.post(url, typed, follow=True).content.decode()
    stored = Finding.objects.get(pk=finding.pk)
    assert timezone.localtime(stored.due_at).strftime("%Y-%m-%d %H:%M") == "2026-12-24 18:30"
    (event,) = _events(finding, "case")
    assert event.after["due"] == stored.due_at.astimezone(UTC).isoformat()
    assert list(finding_states_unrecorded()) == []
    again = auditor.post(url, typed, follow=True).content.decode()
    assert "nothing to change" in again and len(_events(finding, "case")) == 1


def test_a_priority_no_case_has_is_refused_by_the_database(finding):
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE rounds_finding SET priority = 9 WHERE id = %s", [finding.pk])


@pytest.mark.parametrize("kind", ["variance", "protection"])
def test_every_kind_of_finding_is_worked_as_a_case_from_its_page(staff, kind, settings, finding):
    """The other queues' findings take the same panel: given, commented, escalated, each on its own trail."""
    from datetime import date

    from audit.models import ProtectionFinding, VarianceFinding
    from audit.protection.standing import standing_raise

    settings.NOTICES_TO = ["floor@casino.example"]
    day = date(2026, 11, 28)
    if kind == "protection":
        standing_raise(code="suspected_sweetheart_dealing", key="D7|P9", day=day, figure=5.0, threshold=4.0,
                       evidence={}, detail="errors in P9's favour", dealer="D7", player="P9", day_from=day)
        path = "audit/protectionfinding"
    else:
        from decimal import Decimal

        from audit.reconciliation.services import report_run
        from audit.reconciliation.variance_services import variance_findings_raise
        from books.variance_tests import Period, PeriodFigures, Scope, comar

        day = finding.round.gaming_day  # (the round's finding fixture: a day with a report to hang it on)
        variance_findings_raise(report=report_run(day_from=day), trips=comar([PeriodFigures(
            scope=Scope.TABLE, key="S01", currency="SEK", period=Period.DAY, day_from=day, day_to=day,
            handle=Decimal("1000.00"), win=Decimal("900.00"), theoretical=Decimal("20.00"), sd=Decimal("100"))]))
        path = "audit/variancefinding"
    finding = (ProtectionFinding if kind == "protection" else VarianceFinding).objects.get()
    auditor = staff("auditor", f"{kind}-worker")
    url = f"/admin/{path}/{finding.pk}/case/"
    assert "it is yours" in auditor.post(url, {"do": "take"}, follow=True).content.decode()
    auditor.post(url, {"do": "comment", "comment": "seen on camera 4"})
    page = auditor.post(url, {"do": "escalate", "note": "the same pair again"}, follow=True).content.decode()
    assert "the supervisors are told" in page and "seen on camera 4" in page
    model = type(finding)
    stored = model.objects.get(pk=finding.pk)
    assert stored.assignee == auditor.user and stored.escalated_at is not None
    actions = [a for a in AuditEvent.objects.filter(object_type=model._meta.label_lower, object_id=str(finding.pk))
               .order_by("seq").values_list("action", flat=True) if not a.endswith(".raised")]
    work = model.work_name
    assert actions == [f"{work}.case", f"{work}.comment", f"{work}.escalated", f"{work}.notified"]
    assert list(finding_states_unrecorded()) == []
    reader = staff(None, f"{kind}-reader")
    assert reader.post(url, {"do": "take"}).status_code == 403


def test_a_person_past_the_thousandth_is_offered_by_his_id_not_a_number_written_for_reading(finding, staff):
    """The casino's locale writes 1234 as "1,234": the form's value must stay the id, or giving the
    case to anyone made after the 999th person is "no such person"."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from tests.insider import as_owner

    # Ids from 12,345 on, as a casino a few years on has them (moving a sequence is the owner's).
    if connection.vendor == "postgresql":
        with as_owner(), connection.cursor() as cursor:
            cursor.execute("SELECT setval(pg_get_serial_sequence('auth_user', 'id'), 12344)")
    else:
        get_user_model().objects.create_user("placeholder", id=12344)
    auditor = staff("auditor", "late-hire")
    assert auditor.user.pk >= 12345
    page = auditor.get(f"/admin/rounds/finding/{finding.pk}/change/").content.decode()
    assert f'<option value="{auditor.user.pk}"' in page
    url = f"/admin/rounds/finding/{finding.pk}/case/"
    given = auditor.post(url, {"do": "case", "assignee": str(auditor.user.pk), "priority": "2", "due_at": ""},
                         follow=True).content.decode()
    assert "the case is changed" in given
    assert Finding.objects.get(pk=finding.pk).assignee_id == auditor.user.pk
