"""ROUND_RECORD.md, ``dealt_outside_window``: a round dated outside the window the books accept
is kept, judged and flagged, held apart from every report until a supervisor places it, and never
makes a partition, so no table's clock can silence the service (issue: the partition flood)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from audit.reconciliation.services import report_run
from infra.gaming_day import gaming_day_of
from rounds.models import Finding, Round
from tests.api.records import BATCH, ROUNDS, record
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="partitioning is PostgreSQL's")


def _codes(answer: dict) -> set[str]:
    return {f["code"] for f in answer["findings"]}


def _at(moment) -> str:
    return moment.astimezone().isoformat(timespec="seconds")


def _relations() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_class")
        return cursor.fetchone()[0]


def _person(django_user_model, role: str) -> APIClient:
    from trail.services import SYSTEM
    from casino.services import user_roles_set

    user = django_user_model.objects.create_user(f"{role}-w", password="pw-for-tests-only")
    user_roles_set(user=user, roles=[role], actor=SYSTEM)
    client = APIClient()
    client.force_authenticate(user)
    return client


@on_postgresql
def test_a_round_in_every_month_of_a_century_makes_no_partition_and_stops_nothing(
    settings, table_client, django_user_model,
):
    settings.ROUND_WINDOW_OPENS = None  # the default: from the month before the database was made
    client = table_client("S01", "se-50kr")
    months = [date(2000 + n * 4, 1 + n % 12, 15) for n in range(25)]  # 2000-01 … 2096-01
    before = _relations()

    for start in range(0, len(months), 10):
        batch = [record(f"F-{day:%Y%m}", dealt_at=f"{day.isoformat()}T21:00:00+01:00")
                 for day in months[start:start + 10]]
        answer = client.post(BATCH, {"rounds": batch}, format="json")
        assert answer.status_code == 200
        for result in answer.json()["results"]:
            assert result["status"] == 201, result
            assert result["body"]["status"] == "flagged"
            assert "dealt_outside_window" in _codes(result["body"])

    assert _relations() == before  # no partition, no index: every one of them went to the default
    assert Round.objects.filter(held=True).count() == len(months)
    # Everyone else is still served: a table's next round, staff's lists, a report.
    today = client.post(ROUNDS, record("NOW-1", dealt_at=_at(timezone.now())), format="json")
    assert today.status_code == 201 and "dealt_outside_window" not in _codes(today.json())
    auditor = _person(django_user_model, "auditor")
    assert auditor.get(ROUNDS).status_code == 200
    assert auditor.get("/api/v1/findings/").status_code == 200
    report = report_run(day_from=gaming_day_of(timezone.now()))
    assert report.status == "complete"
    assert report.figures["held"]["rounds"] == len(months)
    assert any(alert.startswith("HELD: 25 round(s)") for alert in report.figures["alerts"])


@pytest.mark.parametrize("ahead,outside", [(timedelta(hours=1), False), (timedelta(hours=23), False),
                                          (timedelta(hours=25), True), (timedelta(days=20000), True)])
def test_ahead_of_receipt_by_more_than_a_day_is_outside(table_client, ahead, outside):
    client = table_client("S01", "se-50kr")
    answer = client.post(ROUNDS, record("A-1", dealt_at=_at(timezone.now() + ahead)), format="json").json()
    assert ("dealt_outside_window" in _codes(answer)) is outside
    assert "dealt_in_future" in _codes(answer)
    assert Round.objects.get(round_id="A-1").held is outside


def test_before_the_earliest_open_month_is_outside_and_a_void_round_stays_void(settings, table_client):
    settings.ROUND_WINDOW_OPENS = date(2026, 11, 20)  # the month is what counts: November is open
    client = table_client("S01", "se-50kr")
    inside = client.post(ROUNDS, record("W-1", dealt_at="2026-11-01T21:00:00+01:00"), format="json").json()
    assert inside["status"] in ("settled", "verified")
    before = client.post(ROUNDS, record("W-2", dealt_at="2026-10-31T21:00:00+01:00"), format="json").json()
    void = client.post(ROUNDS, record("W-3", dealt_at="2026-10-30T21:00:00+01:00", void=True),
                       format="json").json()

    assert "dealt_outside_window" not in _codes(inside)
    assert before["status"] == "flagged" and "dealt_outside_window" in _codes(before)
    finding = Finding.objects.get(round__round_id="W-2", code="dealt_outside_window")
    assert "2026-11" in finding.detail and finding.state == "open"
    assert void["status"] == "void" and "dealt_outside_window" in _codes(void)


def test_a_held_round_is_in_no_report_until_a_supervisor_places_it(settings, table_client, django_user_model):
    settings.ROUND_WINDOW_OPENS = date(2026, 11, 1)
    day = date(2026, 10, 15)
    client = table_client("S01", "se-50kr")
    answer = client.post(ROUNDS, record("H-1", dealt_at="2026-10-15T21:00:00+02:00"), format="json").json()
    assert "dealt_outside_window" in _codes(answer)

    held = report_run(day_from=day)
    assert held.status == "complete"
    assert "S01" not in held.figures["tables"]
    assert held.figures["reverification"]["drift"] == 0  # judged as stored, its own finding and all

    auditor, supervisor = _person(django_user_model, "auditor"), _person(django_user_model, "supervisor")
    place = f"{ROUNDS}{answer['id']}/place"
    assert auditor.post(place, {"note": "table clock fixed"}, format="json").status_code == 403
    assert supervisor.post(place, {}, format="json").status_code == 400  # a note is needed
    assert supervisor.post(place, {"note": "the table was offline; the round is real"},
                           format="json").status_code == 200
    assert not Round.objects.get(round_id="H-1").held
    event = AuditEvent.objects.get(action="round.placed")
    assert event.actor_name == "supervisor-w" and event.after["note"].startswith("the table was offline")
    again = supervisor.post(place, {"note": "twice"}, format="json")
    assert again.status_code == 400 and "round" in again.json()["errors"]

    placed = report_run(day_from=day)
    assert placed.figures["tables"]["S01"]["SEK"]["rounds"] == 1
    assert placed.figures["reverification"]["drift"] == 0


def test_a_supervisor_places_a_held_round_from_its_admin_page(settings, table_client, staff):
    settings.ROUND_WINDOW_OPENS = date(2026, 11, 1)
    answer = table_client("S01", "se-50kr").post(
        ROUNDS, record("H-2", dealt_at="2026-10-15T21:00:00+02:00"), format="json").json()
    page = f"/admin/rounds/round/{answer['id']}/change/"
    auditor, supervisor = staff("auditor"), staff("supervisor")

    assert "held apart" in auditor.get(page).content.decode()
    assert 'id="place-form"' not in auditor.get(page).content.decode()
    assert auditor.post(f"/admin/rounds/round/{answer['id']}/place/", {"note": "x"}).status_code == 403
    assert 'id="place-form"' in supervisor.get(page).content.decode()
    refused = supervisor.post(f"/admin/rounds/round/{answer['id']}/place/", {"note": " "}, follow=True)
    assert "needs a note" in refused.content.decode() and Round.objects.get(round_id="H-2").held
    placed = supervisor.post(f"/admin/rounds/round/{answer['id']}/place/", {"note": "offline table"}, follow=True)
    assert "is placed in the books" in placed.content.decode()
    assert not Round.objects.get(round_id="H-2").held
    assert 'id="place-form"' not in supervisor.get(page).content.decode()
    assert supervisor.get("/admin/rounds/round/?held__exact=1").status_code == 200


@pytest.mark.parametrize("forged", ["hidden", "placed"])
def test_held_set_or_cleared_by_hand_is_named_by_verify_audit(settings, table_client, capsys, forged):
    """``held`` is a column the service may change: whoever writes the database could hide a
    round from every report, or put a held one in the books without a supervisor."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    settings.ROUND_WINDOW_OPENS = date(2026, 11, 1)
    client = table_client("S01", "se-50kr")
    client.post(ROUNDS, record("V-1", dealt_at="2026-11-20T21:00:00+01:00"), format="json")
    client.post(ROUNDS, record("V-2", dealt_at="2026-10-15T21:00:00+02:00"), format="json")
    call_command("verify_audit")
    assert "every round held apart is one found outside the window" in capsys.readouterr().out

    target = "V-1" if forged == "hidden" else "V-2"
    Round.objects.filter(round_id=target).update(held=forged == "hidden")
    with pytest.raises(CommandError):
        call_command("verify_audit")
    out = capsys.readouterr().out
    pk = Round.objects.get(round_id=target).pk
    assert f"round #{pk}: held stored {forged == 'hidden'}, derived {forged != 'hidden'}" in out
    report = report_run(day_from=date(2026, 11, 20))
    assert report.figures["records"]["held"] == 1
