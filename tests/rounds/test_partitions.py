"""Rounds and seats partitioned by gaming day, a partition a month, on PostgreSQL (rounds.partitions)."""

from __future__ import annotations

import threading
from datetime import date

import pytest
from django.db import IntegrityError, ProgrammingError, connection, transaction
from django_celery_beat.models import PeriodicTask
from rest_framework.test import APIClient

from infra.partitioning import partition_by_month
from rounds import partitions
from rounds.models import Round, RoundKey, Seat
from tests.insider import as_owner
from rounds.services import table_register, write_plan
from rounds.tasks import partitions_ahead
from tests.api.records import ROUNDS, record
from trail.services import SYSTEM

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="partitioning is PostgreSQL's")


def partition_of(model, **lookup) -> set[str]:
    """The partitions that hold the rows of ``model`` matching ``lookup``."""
    pks = list(model.objects.filter(**lookup).values_list("pk", flat=True))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT tableoid::regclass::text FROM {model._meta.db_table} "
                       "WHERE id = ANY(%s)", [pks])
        return {name for (name,) in cursor.fetchall()}


def scalar(query: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return cursor.fetchone()[0]


@pytest.mark.django_db
@pytest.mark.parametrize("table", ["rounds_round", "rounds_seat"])
def test_rounds_and_seats_are_partitioned_by_gaming_day_with_a_default(table):
    assert scalar("SELECT pg_get_partkeydef(%s::regclass)", [table]) == "RANGE (gaming_day)"
    assert scalar(
        "SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_index i JOIN pg_attribute a "
        "ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass "
        "AND i.indisprimary", [table]) == ["gaming_day", "id"]
    assert scalar("SELECT count(*) FROM pg_inherits WHERE inhparent = %s::regclass "
                  "AND inhrelid = to_regclass(%s)", [table, f"{table}_default"]) == 1


def test_a_round_and_its_seats_land_in_their_gaming_days_partition(table_client):
    partitions.partitions_make([date(2019, 3, 1), date(2019, 4, 1)])  # the schedule's
    client = table_client()
    late = record("R-1", dealt_at="2019-03-31T23:30:00+02:00")
    # Before the 06:00 cut-off: still the gaming day of 31 March, so March's partition.
    small_hours = record("R-2", dealt_at="2019-04-01T03:00:00+02:00")
    april = record("R-3", dealt_at="2019-04-01T07:00:00+02:00")
    for sent in (late, small_hours, april):
        assert client.post(ROUNDS, sent, format="json").status_code == 201

    assert partition_of(Round, round_id__in=["R-1", "R-2"]) == {"rounds_round_p201903"}
    assert partition_of(Seat, round__round_id__in=["R-1", "R-2"]) == {"rounds_seat_p201903"}
    assert partition_of(Round, round_id="R-3") == {"rounds_round_p201904"}
    assert partition_of(Seat, round__round_id="R-3") == {"rounds_seat_p201904"}
    assert set(Seat.objects.filter(round__round_id="R-2").values_list("gaming_day", flat=True)) == {
        date(2019, 3, 31)}
    assert partitions.days_in_default() == []


@pytest.mark.django_db(transaction=True)
def test_a_post_never_makes_a_partition(settings, monkeypatch):
    """Only the schedule makes partitions: a round of a month without one goes to the default
    partition, stored and answered as any other, and no table, index or lock is added for it."""
    settings.INGEST_COMBINE = False
    issued = table_register(code="S01", config_name="se-50kr", actor=SYSTEM)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
    made = []
    monkeypatch.setattr(partitions, "partitions_make", lambda days: made.append(days))
    before = scalar("SELECT count(*) FROM pg_class WHERE relname LIKE %s", ["rounds_%"])

    response = client.post(ROUNDS, record("R-1", dealt_at="2018-07-01T20:00:00+02:00"), format="json")

    assert response.status_code == 201, response.json()
    assert made == []
    assert partition_of(Round, round_id="R-1") == {"rounds_round_default"}
    assert partition_of(Seat, round__round_id="R-1") == {"rounds_seat_default"}
    assert scalar("SELECT count(*) FROM pg_class WHERE relname LIKE %s", ["rounds_%"]) == before


def test_a_round_id_stays_unique_across_gaming_days(table_client):
    partitions.partitions_make([date(2019, 3, 14), date(2019, 6, 1)])  # the schedule's
    client = table_client()
    assert client.post(ROUNDS, record("R-1", dealt_at="2019-03-14T22:00:00+01:00"), format="json").status_code == 201
    elsewhere = client.post(ROUNDS, record("R-1", dealt_at="2019-06-01T22:00:00+02:00"), format="json")

    assert elsewhere.status_code == 409
    assert RoundKey.objects.filter(round_id="R-1").count() == 1
    assert partition_of(Round, round_id="R-1") == {"rounds_round_p201903"}
    assert Round.objects.get(round_id="R-1").status == Round.Status.FLAGGED


@pytest.mark.django_db(transaction=True)
def test_two_bodies_of_one_round_id_racing_on_different_days_store_one(settings, monkeypatch):
    """Both looks find the id free; the round key's unique index decides, whatever the days."""
    settings.INGEST_COMBINE = False
    issued = table_register(code="S01", config_name="se-50kr", actor=SYSTEM)
    both_looked = threading.Barrier(2, timeout=10)
    real_look = write_plan.look
    racing = {"on": True}

    def look_together(*args, **kwargs):
        found = real_look(*args, **kwargs)
        if racing["on"]:
            try:
                both_looked.wait()
            except threading.BrokenBarrierError:
                pass
        return found

    monkeypatch.setattr(write_plan, "look", look_together)
    partitions.partitions_make([date(2019, 3, 14), date(2019, 6, 1)])  # no DDL in the race
    answers = []

    def post(dealt_at: str) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.key}")
        try:
            answers.append(client.post(ROUNDS, record("R-9", dealt_at=dealt_at), format="json").status_code)
        finally:
            racing["on"] = False  # the loser's second look does not wait for anyone
            connection.close()

    threads = [threading.Thread(target=post, args=(at,))
               for at in ("2019-03-14T22:00:00+01:00", "2019-06-01T22:00:00+02:00")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert sorted(answers) == [201, 409]
    assert RoundKey.objects.filter(round_id="R-9").count() == 1
    assert Round.objects.filter(round_id="R-9").count() == 1


def test_the_database_keeps_a_round_its_keys_and_its_seats_together(table_client):
    client = table_client()
    assert client.post(ROUNDS, record("R-1", dealt_at="2019-03-14T22:00:00+01:00"), format="json").status_code == 201
    round_ = Round.objects.get(round_id="R-1")

    for table, statement in (
        ("rounds_round", "UPDATE rounds_round SET round_id = 'R-2' WHERE id = %s"),  # its key says R-1
        ("rounds_seat", "UPDATE rounds_seat SET gaming_day = '2019-03-15' WHERE round_id = %s"),  # of the 14th
    ):
        # The columns' own protection (audit migration 0010) refuses first; past it, the keys do.
        with pytest.raises(ProgrammingError, match="refused"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [round_.pk])
        with pytest.raises(IntegrityError), transaction.atomic(), as_owner(), connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {table}_changes_allowed")
            cursor.execute(statement, [round_.pk])
    with pytest.raises(Exception, match="append-only|refuse"), transaction.atomic(), as_owner(), \
            connection.cursor() as cursor:
        cursor.execute("UPDATE rounds_roundkey SET round_id = 'R-2' WHERE id = %s", [round_.pk])


def test_a_month_whose_rounds_went_to_the_default_partition_is_made_with_them_moved_in(
    table_client, auditor_client,
):
    """A round held apart, dated past the months made ahead, lies in the default partition; when
    the schedule reaches its month, the month is made with its rows moved in, not refused, so a
    table's clock cannot keep a month out of its partition. Moving passes a trigger, which only
    the owner may: the application's role is refused it and says so, the owner's run moves them."""
    from trail.models import AuditEvent
    from trail.protections import protections_missing

    client = table_client()
    answer = client.post(ROUNDS, record("R-1", dealt_at="2017-05-05T22:00:00+02:00"), format="json").json()
    client.post(ROUNDS, record("R-2", dealt_at="2017-06-02T22:00:00+02:00"), format="json")
    assert partition_of(Round, round_id__in=["R-1", "R-2"]) == {"rounds_round_default"}
    assert partitions.days_in_default() == [date(2017, 5, 5), date(2017, 6, 2)]

    refused = partitions.partitions_make([date(2017, 5, 25)])
    assert refused.made == [] and refused.refused == [date(2017, 5, 1)]
    assert partitions.days_in_default() == [date(2017, 5, 5), date(2017, 6, 2)]

    with as_owner():
        made = partitions.partitions_make([date(2017, 5, 25)])

    assert made.made == [date(2017, 5, 1)] and made.refused == []
    assert partition_of(Round, round_id="R-1") == {"rounds_round_p201705"}
    assert partition_of(Seat, round__round_id="R-1") == {"rounds_seat_p201705"}
    assert partitions.days_in_default() == [date(2017, 6, 2)]  # only its own month moved
    moved = AuditEvent.objects.get(action="partition.rows_moved")
    assert moved.after["rows"] == {"rounds_round": 1, "rounds_seat": 2}
    assert protections_missing(connection) == []  # the guards stood aside for the move alone
    with pytest.raises(ProgrammingError, match="refused"), transaction.atomic():
        scalar("UPDATE rounds_round SET dealer = 'X' WHERE round_id = 'R-1' RETURNING 1")
    read = auditor_client.get(f"{ROUNDS}{answer['id']}/").json()
    assert read["seats"] == answer["seats"] and read["findings"] == answer["findings"]


@pytest.mark.django_db
def test_partitions_are_made_ahead_once(settings):
    settings.ROUND_WINDOW_OPENS = date(2031, 1, 1)
    made = partitions.partitions_ahead(today=date(2031, 1, 30), ahead=3)
    assert made.made == [date(2031, 1, 1), date(2031, 2, 1)] and made.refused == []
    assert partitions.partitions_ahead(today=date(2031, 1, 30), ahead=3).made == []
    listed = {(p.table, p.month) for p in partitions.partitions_list()}
    assert {(t, date(2031, 2, 1)) for t in partitions.TABLES} <= listed


@pytest.mark.django_db
def test_the_daily_task_is_scheduled_and_makes_the_coming_days(settings):
    entry = PeriodicTask.objects.get(task="rounds.partitions_ahead")
    assert entry.enabled and entry.crontab.hour == "4"
    settings.ROUND_PARTITIONS_AHEAD_DAYS = 100  # the migration made 14 days' worth
    settings.ROUND_WINDOW_OPENS = None  # the books open the month before the database was made
    answer = partitions_ahead.apply().get()
    months = {p.month for p in partitions.partitions_list() if p.table == "rounds_round"}
    assert len(answer["made"]) >= 2 and answer["refused"] == []
    assert {date.fromisoformat(d) for d in answer["made"]} <= months


@pytest.mark.django_db
def test_a_gaming_days_query_reads_that_months_partition_only():
    partitions.partitions_make([date(2019, 2, 13), date(2019, 3, 14), date(2019, 4, 15)])
    plan = Round.objects.filter(gaming_day=date(2019, 3, 14)).explain()
    assert "rounds_round_p201903" in plan
    assert "rounds_round_p201902" not in plan and "rounds_round_default" not in plan


@pytest.mark.django_db
def test_partition_by_month_keeps_rows_ids_checks_and_indexes():
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("""
            CREATE TABLE scratch_things (
                id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                day date NOT NULL, label text NOT NULL CHECK (label <> ''));
            CREATE INDEX scratch_things_label ON scratch_things (label);
            CREATE TABLE scratch_refs (thing bigint REFERENCES scratch_things (id));
            INSERT INTO scratch_things (day, label) VALUES
                ('2020-01-01', 'a'), ('2020-02-02', 'b'), ('2020-02-29', 'c');
        """)
        partition_by_month(cursor, "scratch_things", "day", days=[date(2020, 3, 3)])

        cursor.execute("SELECT id, day::text, label, tableoid::regclass::text FROM scratch_things ORDER BY id")
        assert cursor.fetchall() == [
            (1, "2020-01-01", "a", "scratch_things_p202001"),
            (2, "2020-02-02", "b", "scratch_things_p202002"),
            (3, "2020-02-29", "c", "scratch_things_p202002"),
        ]
        cursor.execute("INSERT INTO scratch_things (day, label) VALUES ('2020-03-31', 'd') RETURNING id")
        assert cursor.fetchone() == (4,)  # ids go on
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'scratch_things_p202003'")
        assert any("(label)" in d for (d,) in cursor.fetchall())
        cursor.execute("SELECT count(*) FROM pg_constraint WHERE conrelid = 'scratch_refs'::regclass")
        assert cursor.fetchone() == (0,)  # the caller points referrers at a key with the day
        with pytest.raises(IntegrityError), transaction.atomic():
            cursor.execute("INSERT INTO scratch_things (day, label) VALUES ('2020-03-03', '')")


@pytest.mark.django_db
def test_the_schedule_makes_every_month_of_the_window_and_the_days_ahead(settings):
    settings.ROUND_WINDOW_OPENS = date(2030, 10, 17)
    made = partitions.partitions_ahead(today=date(2031, 1, 30), ahead=3)
    assert made.made == [date(2030, 10, 1), date(2030, 11, 1), date(2030, 12, 1), date(2031, 1, 1),
                         date(2031, 2, 1)]


@pytest.mark.django_db
def test_a_month_another_process_made_meanwhile_is_no_error(monkeypatch):
    from infra import partitioning

    partitions.partitions_make([date(2015, 9, 9)])
    # As if this process had looked before the other one made it.
    monkeypatch.setattr(partitioning, "_exists", lambda cursor, name: False)
    made = partitions.partitions_make([date(2015, 9, 9)])
    assert made.made == [] and made.refused == []


@pytest.mark.django_db
def test_seats_named_by_their_own_gaming_day_read_one_partition_the_rounds_day_alone_does_not():
    partitions.partitions_make([date(2019, 2, 13), date(2019, 3, 14), date(2019, 4, 15)])
    day = date(2019, 3, 14)
    by_round = Seat.objects.filter(round__gaming_day=day).explain()
    by_own = Seat.objects.filter(round__gaming_day=day, gaming_day=day).explain()
    assert "rounds_seat_p201902" in by_round  # every partition of seats is planned for
    assert "rounds_seat_p201903" in by_own and "rounds_seat_p201902" not in by_own
