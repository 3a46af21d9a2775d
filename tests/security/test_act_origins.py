"""Issue 45, item 3: a person's act written in his name by a process where he proved nothing is named.

The database writes on each audit event the name of the connection that
inserted it (trail migration 0002). A finding dismissed through the service's
own code from a shell, in a colleague's name, leaves a true-looking event; its
origin tells it (``trail.proof_origins``), in ``verify_audit`` and in the
nightly report's RECORDS alert. The application's role cannot write another
origin on the row, nor change it after.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from django.db import DatabaseError, connection, transaction

from infra.process_names import BEAT, WEB, WORKER, command, of_command_line
from rounds.models import Finding, Round
from rounds.services import finding_transition
from tests import examples
from tests.security.people import person
from tests.security.test_third_pass_people import _verify
from trail.models import AuditEvent
from trail.services import SYSTEM, audit_record

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the database names the connection"),
]
SHELL = command("shell")
ROUNDS = "/api/v1/rounds/"


@contextmanager
def connection_named(name: str):
    """This connection under another process's name, as a shell's would be, then its own again."""
    with connection.cursor() as cursor:
        cursor.execute("SET application_name = %s", [name])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET application_name")


@pytest.fixture
def finding(table_client) -> Finding:
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:16]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    return Finding.objects.filter(round__in=Round.objects.filter(table=client.table), informational=False).first()


def test_a_finding_dismissed_in_a_colleague_s_name_from_a_shell_is_named(finding):
    colleague = person("auditor", "aud1")
    with connection_named(SHELL):
        finding_transition(finding_ids=[finding.pk], to_state="dismissed", note="fine", user=colleague)
    event = AuditEvent.objects.get(action="finding.dismissed")
    assert (event.origin, event.actor_name) == (SHELL, "aud1")
    said, failed = _verify()
    assert (f"event {event.seq} (finding.dismissed by aud1, person #{colleague.pk}): written by a connection "
            f"named '{SHELL}'") in said
    assert "1 people's acts written by a process where no person proves who he is" in failed
    # The finding's own proof sees nothing: the row is what its event says.
    assert "every worked finding's state is its last audit event's" in said


def test_the_same_dismissal_through_the_web_is_his_own(finding):
    colleague = person("auditor", "aud1")
    finding_transition(finding_ids=[finding.pk], to_state="dismissed", note="fine", user=colleague)
    assert AuditEvent.objects.get(action="finding.dismissed").origin == WEB
    said, failed = _verify()
    assert failed == ""
    assert "every person's act was written where he proved who he is" in said


def test_the_nightly_names_the_act_and_a_membership_inserted(finding):
    from django.contrib.auth.models import Group

    from audit.reconciliation.services import report_run

    day = finding.round.gaming_day
    records = report_run(day_from=day).figures["records"]
    assert records["others"] == {"acts": 0, "counts": 0, "people": 0, "sign_in": 0, "table_keys": 0}
    colleague, quiet = person("auditor", "aud1"), person(None, "quiet")
    with connection_named(SHELL):
        finding_transition(finding_ids=[finding.pk], to_state="dismissed", note="fine", user=colleague)
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)",
                       [quiet.pk, Group.objects.get(name="supervisor").pk])
    figures = report_run(day_from=day).figures
    assert (figures["records"]["others"]["acts"], figures["records"]["others"]["people"]) == (1, 1)
    [alert] = [a for a in figures["alerts"] if a.startswith("RECORDS:")]
    assert "1 of acts not what the audit trail recorded" in alert
    assert "1 of people not what the audit trail recorded" in alert


def test_the_application_writes_no_origin_of_its_own_and_changes_none():
    with connection_named("psql"):
        event = audit_record(actor=SYSTEM, action="test.origin")
    with connection.cursor() as cursor:
        cursor.execute("SELECT origin, origin_address FROM audit_auditevent WHERE id = %s", [event.pk])
        origin, address = cursor.fetchone()
    assert origin == "psql"
    assert address is not None  # the tests reach PostgreSQL over TCP
    with connection_named("psql"), connection.cursor() as cursor:
        cursor.execute("INSERT INTO audit_auditevent (seq, at, actor_kind, actor_id, actor_name, action, "
                       "object_type, object_id, object_repr, request_id, prev_hash, hash, origin) "
                       "VALUES (%s, now(), 'user', '1', 'x', 'x', '', '', '', '', '', %s, %s) RETURNING origin",
                       [event.seq + 1000, "f" * 64, WEB])
        assert cursor.fetchone() == ("psql",)
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE audit_auditevent SET origin = %s WHERE id = %s", [WEB, event.pk])


@pytest.mark.parametrize(("argv", "name"), [
    (["/opt/table-audit/.venv/bin/gunicorn", "casino.wsgi"], WEB),
    (["/usr/lib/python3/site-packages/gunicorn/__main__.py"], WEB),
    (["manage.py", "runserver"], WEB),
    (["/opt/table-audit/.venv/bin/celery", "-A", "casino", "worker"], WORKER),
    (["/opt/table-audit/.venv/bin/celery", "-A", "casino", "beat"], BEAT),
    (["/x/celery/__main__.py", "-A", "casino", "worker"], WORKER),
    (["./manage.py", "shell"], command("shell")),
    (["manage.py", "import_counts", "--user", "sup2"], command("import_counts")),
    (["manage.py"], command("help")),
    (["/usr/bin/python3"], "table-audit python3"),
    ([], "table-audit python"),
])
def test_each_process_names_its_connections(argv, name):
    assert of_command_line(argv) == name
    assert len(name) <= 63
