"""Archiving a month of rounds (rounds.services.archives, ``manage.py partitions archive|attach``)."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import date

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from infra.gaming_day import gaming_day_of
from rounds import partitions
from rounds.models import ArchivedMonth, Round, RoundKey, Seat, Submission
from rounds.services import table_register
from rounds.services.archives import ArchiveError, month_archive, month_attach
from tests.api.records import BATCH, ROUNDS, record
from tests.insider import as_owner
from trail.models import AuditEvent
from trail.selectors import audit_chain_verify
from trail.services import SYSTEM

JANUARY, FEBRUARY = date(2011, 1, 1), date(2011, 2, 1)
on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="partitioning is PostgreSQL's")


def scalar(query: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return cursor.fetchone()[0]


def present(name: str) -> bool:
    return scalar("SELECT to_regclass(%s) IS NOT NULL", [name])


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def client(settings):
    settings.INGEST_COMBINE = False
    issued = table_register(code="S01", config_name="se-50kr", actor=SYSTEM)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
    return client


@pytest.fixture
def two_months(client):
    """Rounds in January and February 2011; whatever a test leaves archived is attached again after it."""
    partitions.partitions_make([JANUARY, FEBRUARY])  # the schedule's, as for a month in the window
    for round_id, dealt_at in (("R-1", "2011-01-10T21:00:00+01:00"), ("R-2", "2011-01-31T23:00:00+01:00"),
                               ("R-3", "2011-02-03T21:00:00+01:00")):
        assert client.post(ROUNDS, record(round_id, dealt_at=dealt_at), format="json").status_code == 201
    yield client
    for archived in ArchivedMonth.objects.all():
        names = [f"{table}_p{archived.month:%Y%m}" for table in partitions.TABLES]
        if all(present(name) for name in names):
            with as_owner():
                month_attach(month=archived.month)
        else:  # a test dropped them: the flush after it leaves no trace of the month
            with as_owner(), connection.cursor() as cursor:
                for name in names:
                    cursor.execute(f"DROP TABLE IF EXISTS {name}")


def archive(month: date, out) -> str:
    """The operator's archive, run as the database's owner (it detaches tables)."""
    output = io.StringIO()
    with as_owner():
        call_command("partitions", "archive", "--month", f"{month:%Y-%m}", "--out", str(out), stdout=output)
    return output.getvalue()


def verify_audit() -> str:
    output = io.StringIO()
    call_command("verify_audit", stdout=output)
    return output.getvalue()


def listed() -> str:
    output, errors = io.StringIO(), io.StringIO()
    call_command("partitions", stdout=output, stderr=errors)
    return output.getvalue() + errors.getvalue()


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_month_is_detached_dumped_refused_and_attached_again(two_months, tmp_path):
    client = two_months
    seats_of_january = Seat.objects.filter(gaming_day__range=(JANUARY, date(2011, 1, 31))).count()
    assert seats_of_january == 4

    said = archive(JANUARY, tmp_path)

    # Gone from what the service reads; February untouched.
    assert not Round.objects.filter(round_id__in=["R-1", "R-2"]).exists()
    assert not Seat.objects.filter(gaming_day__lt=FEBRUARY).exists()
    assert Round.objects.get(round_id="R-3").gaming_day == date(2011, 2, 3)
    assert Seat.objects.filter(round__round_id="R-3").count() == 2
    # The dump: a file each, counted and hashed in the manifest, the manifest's hash in the chain.
    directory = tmp_path / "2011-01"
    manifest = json.loads((directory / "manifest.json").read_text())
    files = {entry["table"]: entry for entry in manifest["files"]}
    assert files["rounds_round"]["rows"] == 2 and files["rounds_seat"]["rows"] == seats_of_january
    for entry in files.values():
        dumped = directory / entry["file"]
        assert sha256(dumped) == entry["sha256"]
        assert len(dumped.read_text().splitlines()) >= entry["rows"] + 1  # a header, then the rows
    assert "R-1" in (directory / "rounds_round_p201101.csv").read_text()
    dumped_event = AuditEvent.objects.get(action="partition.dumped")
    assert dumped_event.after["manifest_sha256"] == sha256(directory / "manifest.json")
    assert AuditEvent.objects.filter(action="partition.detached", seq__lt=dumped_event.seq).exists()
    assert "manifest sha256" in said
    # The detached tables stay, and refuse change.
    with pytest.raises(DatabaseError, match="refused"), transaction.atomic(), as_owner():
        scalar("UPDATE rounds_round_p201101 SET dealer = 'X' RETURNING 1")

    # A late round of January: refused by name, its body kept, nothing in a default partition.
    late = client.post(ROUNDS, record("R-4", dealt_at="2011-01-20T21:00:00+01:00"), format="json")
    assert late.status_code == 409, late.json()
    assert late.json()["code"] == "month_archived"
    assert "gaming day 2011-01 is archived" in late.json()["errors"]["dealt_at"][0]
    kept = Submission.objects.get(claimed_round="R-4")
    assert (kept.http_status, kept.outcome) == (409, Submission.Outcome.REJECTED)
    assert json.loads(bytes(kept.body))["round"] == "R-4"
    assert not RoundKey.objects.filter(round_id="R-4").exists()
    assert scalar("SELECT count(*) FROM rounds_round_default") == 0
    assert scalar("SELECT count(*) FROM rounds_seat_default") == 0
    # A round of January sent again (its key stays, so its id is never reused): refused alike.
    again = client.post(ROUNDS, record("R-1", dealt_at="2011-01-10T21:00:00+01:00"), format="json")
    assert again.status_code == 409, again.json()
    assert again.json()["code"] == "month_archived"
    assert Submission.objects.filter(claimed_round="R-1", http_status=409).exists()
    # ... and February still takes rounds.
    assert client.post(ROUNDS, record("R-5", dealt_at="2011-02-20T21:00:00+01:00"),
                       format="json").status_code == 201
    # The list counts (no ANALYZE has run: an estimate would say 0) and names the archived month.
    shown = listed()
    assert "rounds_round: " in shown and f"{Round.objects.count():,} rows (counted), 0 in the default" in shown
    assert f"{Seat.objects.count():,} rows (counted), 0 in the default" in shown
    assert f"archived (detached) 2011-01: 2 rounds, {seats_of_january} seats dumped to" in shown

    output = io.StringIO()
    with pytest.raises(CommandError, match="only the database's owner may"):
        call_command("partitions", "attach", "--month", "2011-01", stdout=output)
    with as_owner():
        call_command("partitions", "attach", "--month", "2011-01", stdout=output)

    assert "attached 2011-01: rounds_round 2, rounds_seat 4 rows" in output.getvalue()
    assert set(Round.objects.filter(gaming_day__lt=FEBRUARY).values_list("round_id", flat=True)) == {"R-1", "R-2"}
    assert Seat.objects.filter(gaming_day__lt=FEBRUARY).count() == seats_of_january
    assert not ArchivedMonth.objects.exists()
    assert AuditEvent.objects.get(action="partition.attached").after["rows"] == {
        "rounds_round": 2, "rounds_seat": seats_of_january}
    assert audit_chain_verify().ok
    verified = verify_audit()
    assert "every protection of the records is in force" in verified
    assert "every stored round is what its kept body says" in verified
    # Attached, the month's partitions are as any other's again: change refused as before, by 0010's triggers...
    with pytest.raises(DatabaseError, match="only .* may change"), transaction.atomic():
        scalar("UPDATE rounds_round SET dealer = 'X' WHERE round_id = 'R-1' RETURNING 1")
    # ... and the late round, sent again, is stored in its month.
    again = client.post(ROUNDS, record("R-4", dealt_at="2011-01-20T21:00:00+01:00"), format="json")
    assert again.status_code == 201, again.json()
    assert scalar("SELECT tableoid::regclass::text FROM rounds_round WHERE round_id = 'R-4'") == "rounds_round_p201101"


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_in_a_batch_a_round_of_an_archived_month_is_refused_alone(two_months, tmp_path):
    with as_owner():
        month_archive(month=JANUARY, out=tmp_path)
    items = [record("R-6", dealt_at="2011-02-06T21:00:00+01:00"), record("R-7", dealt_at="2011-01-07T21:00:00+01:00"),
             record("R-8", dealt_at="2011-02-08T21:00:00+01:00")]

    response = two_months.post(BATCH, {"rounds": items}, format="json")

    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 409, 201]
    assert results[1]["body"]["code"] == "month_archived"
    assert list(results[1]["body"]["errors"]) == ["dealt_at"]
    assert Submission.objects.get(claimed_round="R-7").http_status == 409
    assert set(Round.objects.values_list("round_id", flat=True)) == {"R-3", "R-6", "R-8"}


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_batch_of_one_round_of_an_archived_month_is_its_409_in_the_error_shape(two_months, tmp_path):
    with as_owner():
        month_archive(month=JANUARY, out=tmp_path)

    response = two_months.post(BATCH, {"rounds": [record("R-9", dealt_at="2011-01-09T21:00:00+01:00")]},
                               format="json")

    assert response.status_code == 200, response.content[:200]
    (result,) = response.json()["results"]
    assert result["status"] == 409 and result["body"]["code"] == "month_archived"
    assert list(result["body"]["errors"]) == ["dealt_at"]
    kept = Submission.objects.get(claimed_round="R-9")
    assert (kept.http_status, kept.outcome) == (409, Submission.Outcome.REJECTED)


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_rounds_cannot_leave_before_their_seats(two_months):
    """Why the archive detaches seats first: a partition of rounds that seats point into cannot leave."""
    with pytest.raises(DatabaseError, match="violates foreign key constraint"), transaction.atomic():
        with as_owner(), connection.cursor() as cursor:
            cursor.execute("ALTER TABLE rounds_round DETACH PARTITION rounds_round_p201102")
    assert partitions.partitions_make([date(2011, 2, 5)]).made == []


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_month_whose_tables_were_dropped_is_attached_from_its_dump_and_only_an_intact_one(two_months, tmp_path):
    with as_owner():
        month_archive(month=JANUARY, out=tmp_path)
        _month_dropped_and_attached_from_its_dump(tmp_path)


def _month_dropped_and_attached_from_its_dump(tmp_path) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE rounds_seat_p201101, rounds_round_p201101")
    # No partition is made for an archived month, even with its tables gone.
    assert partitions.partitions_make([date(2011, 1, 20)]).made == []
    assert not present("rounds_round_p201101")
    with pytest.raises(ArchiveError, match="--from"):
        month_attach(month=JANUARY)
    directory = tmp_path / "2011-01"
    dumped = directory / "rounds_seat_p201101.csv"
    intact = dumped.read_bytes()
    dumped.write_bytes(intact.replace(b"P-0001", b"P-0009"))
    with pytest.raises(ArchiveError, match="SHA-256 differs"):
        month_attach(month=JANUARY, source=directory)
    assert not present("rounds_round_p201101")  # nothing of the refused attach is left
    dumped.write_bytes(intact)

    rows = month_attach(month=JANUARY, source=directory)

    assert rows == {"rounds_round": 2, "rounds_seat": 4}
    assert set(Round.objects.filter(gaming_day__lt=FEBRUARY).values_list("round_id", flat=True)) == {"R-1", "R-2"}
    assert Seat.objects.filter(round__round_id="R-1").count() == 2
    assert AuditEvent.objects.get(action="partition.attached").after["restored_from"] == str(directory)
    # Restored, the month refuses TRUNCATE as every partition does.
    with pytest.raises(DatabaseError, match="refused"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE rounds_seat_p201101")
    assert audit_chain_verify().ok
    assert "every protection of the records is in force" in verify_audit()


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_only_a_past_month_with_partitions_is_archived(two_months, tmp_path):
    this_month = gaming_day_of(timezone.now())
    with pytest.raises(CommandError, match="only a past month"):
        call_command("partitions", "archive", "--month", f"{this_month:%Y-%m}", "--out", str(tmp_path),
                     stdout=io.StringIO())
    with pytest.raises(ArchiveError, match="only a past month"):
        month_archive(month=FEBRUARY, out=tmp_path, today=date(2011, 2, 20))
    with pytest.raises(ArchiveError, match="only a past month"):  # yesterday's gaming day was in February
        month_archive(month=FEBRUARY, out=tmp_path, today=date(2011, 3, 1))
    with pytest.raises(ArchiveError, match="no partition of 2009-05"):
        month_archive(month=date(2009, 5, 1), out=tmp_path)
    with pytest.raises(ArchiveError, match="not archived"):
        month_attach(month=FEBRUARY)
    assert not ArchivedMonth.objects.exists()


def test_without_partitions_the_command_says_so(monkeypatch):
    monkeypatch.setattr(partitions, "partitioned", lambda: False)
    output = io.StringIO()
    call_command("partitions", "archive", "--month", "2011-01", "--out", "/nonexistent", stdout=output)
    assert output.getvalue().startswith("Not partitioned")


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_an_archived_months_work_to_do_leaves_with_its_rounds_and_comes_back_with_them(two_months, tmp_path):
    """The findings of an archived month's rounds stay, and the queue (which reads them by their
    rounds) lists none of them: the tonight page's counts (``rounds.WorkTally``) say the same."""
    from rounds.models import Finding, WorkTally
    from rounds.services.work_tally import work_tally_differences

    wrong = {**record()["seats"][1], "paid": {"ante": "-100", "blind": "-100", "play": "-300"}}
    for round_id, dealt_at in (("W-1", "2011-01-12T21:00:00+01:00"), ("W-2", "2011-02-12T21:00:00+01:00")):
        answer = two_months.post(ROUNDS, record(round_id, dealt_at=dealt_at, seats=[record()["seats"][0], wrong]),
                                 format="json")
        assert answer.status_code == 201, answer.content

    def months() -> set[tuple[int, int]]:
        return {(row.gaming_day.month, row.mistakes) for row in WorkTally.objects.all()}

    assert months() == {(1, 1), (2, 1)}
    archive(JANUARY, tmp_path)
    assert months() == {(2, 1)} and Finding.objects.count() == 2
    assert work_tally_differences() == []
    with as_owner():
        month_attach(month=JANUARY)
    assert months() == {(1, 1), (2, 1)} and work_tally_differences() == []
