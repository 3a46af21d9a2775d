"""The days' totals (``rounds.DayTotal``) follow every write that changes what a round adds to the
books, and the seats' own count finds every row that does not."""

from __future__ import annotations

import threading
from datetime import date
from decimal import Decimal

import pytest
from django.db import connection, connections
from django.db.models import F

from audit.reconciliation.services import report_run
from casino.services import user_roles_set
from rounds.models import DayTotal, Finding, Round, Seat
from rounds.selectors import of_days, round_keys_of_days
from rounds.services import round_place, round_void
from rounds.services import day_totals
from rounds.services.day_totals import day_totals_differences, day_totals_rebuild, day_totals_rewritten
from tests import examples
from tests.api.records import BATCH, ROUNDS, record
from trail.models import AuditEvent
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db
on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's")
EVER = {"day_from": date(2000, 1, 1), "day_to": date(2100, 1, 1)}


@pytest.fixture
def supervisor(django_user_model):
    user = django_user_model.objects.create_user("supervisor-t")
    user_roles_set(user=user, roles=["supervisor"], actor=SYSTEM)
    return django_user_model.objects.get(pk=user.pk)


def _posted(client, rows) -> list[dict]:
    answers = []
    for row in rows:
        response = client.post(ROUNDS, row, format="json")
        assert response.status_code == 201, response.content
        answers.append(response.json())
    return answers


def _total(**key) -> DayTotal:
    return DayTotal.objects.get(**key)


def test_a_round_adds_its_seats_as_the_reports_count_them(table_client):
    """A hand computation: seat 1 folds its 100 Ante and Blind, seat 2 plays 4x and loses all."""
    _posted(table_client("S01", "se-50kr"), [record("R-1")])
    total = _total(dealer="D4411")
    assert (total.rounds, total.held, total.hands) == (1, 0, 2)
    assert (total.handle_ante, total.handle_blind, total.handle_play, total.handle_trips) == (
        Decimal(200), Decimal(200), Decimal(400), Decimal(0))
    assert total.result_ante + total.result_blind + total.result_play == Decimal(-800)
    assert total.paid_play == Decimal(-400)
    assert total.first_at == total.last_at == Round.objects.get().dealt_at


def test_a_payout_mismatch_is_counted_with_its_round_the_way_the_dealer_erred(table_client):
    """Seat 2's lost 4x Play of 400 taken as 300: the player kept 100 more than due, overpaid."""
    wrong = {**record()["seats"][1], "paid": {"ante": "-100", "blind": "-100", "play": "-300"}}
    _posted(table_client("S01", "se-50kr"), [record("R-1", seats=[record()["seats"][0], wrong]), record("R-2")])
    total = _total(dealer="D4411")
    assert (total.mismatches, total.overpaid, total.underpaid) == (1, 1, 0)
    assert (total.overpaid_amount, total.underpaid_amount) == (Decimal(100), Decimal(0))
    assert total.paid_play == Decimal(-700) and total.result_play == Decimal(-800)
    assert day_totals_differences(**EVER) == []
    # A finding's amounts cannot change (the database refuses it): a total that hides one can.
    DayTotal.objects.update(mismatches=F("mismatches") - 1, overpaid=0, overpaid_amount=0)
    found, = day_totals_differences(**EVER)
    assert "overpaid 0 kept, 1 counted" in found and "overpaid_amount 0.00 kept, 100.00 counted" in found


def test_every_worked_round_and_the_batch_path_agree_with_their_seats(table_client):
    for name, code, config in examples.EXAMPLE_FILES:
        _posted(table_client(code, config), [example["record"] for example in examples.load(name)])
    batch = table_client("S02", "se-50kr")
    answer = batch.post(BATCH, {"rounds": [record(f"B-{n}", table="S02", dealer=f"D{n % 2}") for n in range(6)]},
                        format="json")
    assert answer.status_code in (200, 201, 207), answer.content

    assert day_totals_differences(**EVER) == []
    assert sum(DayTotal.objects.values_list("rounds", flat=True)) == Round.objects.count()
    assert DayTotal.objects.filter(table__code="S02").count() == 2  # one row a dealer
    # The Progressive's handle counts lit wagers only, as the report's.
    report = report_run(day_from=Round.objects.get(round_id=examples.load("us-30k.jsonl")[0]["record"]["round"])
                        .gaming_day)
    us = DayTotal.objects.filter(table__code="U01", gaming_day=report.day_from)
    assert sum(t.handle_progressive for t in us) == Decimal(
        report.figures["tables"]["U01"]["USD"]["handle"]["progressive"])


def test_a_void_takes_back_what_the_round_added(table_client, supervisor):
    _posted(table_client("S01", "se-50kr"), [record("R-1"), record("R-2", dealt_at="2026-11-29T21:20:00+01:00")])
    before = _total(dealer="D4411")
    round_void(round_pk=Round.objects.get(round_id="R-1").pk, user=supervisor, reason="shuffler jammed")
    after = _total(dealer="D4411")
    assert after.rounds == before.rounds == 2  # a void round stays in the books, its bets returned
    assert after.hands == 2 and after.handle_ante == Decimal(200) and after.result_play == Decimal(-400)
    assert day_totals_differences(**EVER) == []


def test_a_placed_round_enters_the_books_with_its_money(settings, table_client, supervisor):
    settings.ROUND_WINDOW_OPENS = date(2026, 11, 1)
    answer, = _posted(table_client("S01", "se-50kr"), [record("H-1", dealt_at="2026-10-15T21:00:00+02:00")])
    held = _total(dealer="D4411")
    assert (held.rounds, held.held, held.hands, held.handle_ante) == (0, 1, 0, Decimal(0))
    assert day_totals_differences(**EVER) == []

    round_place(round_pk=answer["id"], user=supervisor, note="the table was offline; the round is real")
    placed = _total(dealer="D4411")
    assert (placed.rounds, placed.held, placed.hands, placed.handle_ante) == (1, 0, 2, Decimal(200))
    assert day_totals_differences(**EVER) == []


def test_a_days_findings_are_its_rounds_even_where_a_late_round_falls_in_its_key_range(table_client):
    """A round of the 28th stored after the 29th's: its key lies within the 29th's range, and its
    findings stay the 28th's."""
    client = table_client("S01", "se-50kr")
    wrong = {"paid": {"ante": "-100", "blind": "-100", "play": "-300"}}  # the 4x Play paid 300: a mismatch
    _posted(client, [record("R-1"), record("R-2", dealt_at="2026-11-29T22:00:00+01:00",
                                            seats=[record()["seats"][0], {**record()["seats"][1], **wrong}])])
    _posted(client, [record("L-1", dealt_at="2026-11-28T22:00:00+01:00",
                            seats=[record()["seats"][0], {**record()["seats"][1], **wrong}]),
                     record("R-3", dealt_at="2026-11-29T23:00:00+01:00")])
    day = Round.objects.get(round_id="R-1").gaming_day
    late = Round.objects.get(round_id="L-1")
    low, high = round_keys_of_days(day_from=day, day_to=day)
    assert late.gaming_day < day and low < late.pk < high
    findings = Finding.objects.all()
    assert set(of_days(findings, day_from=day, day_to=day).values_list("round__round_id", flat=True)) == {"R-2"}
    assert set(of_days(findings, day_from=late.gaming_day, day_to=late.gaming_day)
               .values_list("round__round_id", flat=True)) == {"L-1"}
    assert set(of_days(findings, day_from=late.gaming_day).values_list("round__round_id", flat=True)) == {
        "R-2", "L-1"}


@pytest.mark.parametrize("tamper", ["seat", "total", "missing", "extra"])
def test_the_seats_count_names_every_total_that_differs(table_client, tamper):
    _posted(table_client("S01", "se-50kr"), [record("R-1")])
    total = _total(dealer="D4411")
    if tamper == "seat":
        Seat.objects.filter(seat=1).update(settled_ante=Decimal("-50"))  # as a hand in the database would
    elif tamper == "total":
        DayTotal.objects.filter(pk=total.pk).update(hands=3)
    elif tamper == "missing":
        DayTotal.objects.all().delete()
    else:
        DayTotal.objects.create(gaming_day=date(2026, 11, 28), table_id=total.table_id, dealer="D1",
                                config_version_id=total.config_version_id, rounds=4,
                                first_at=total.first_at, last_at=total.last_at, first_pk=1, last_pk=4)
    found = day_totals_differences(**EVER)
    assert len(found) == 1
    assert " table S01 dealer D" in found[0] and "(se-50kr v1)" in found[0]  # named as people name them
    assert {"seat": "result_ante -200.00 kept, -150.00 counted", "total": "hands 3 kept, 2 counted",
            "missing": "no totals kept for its 1 round(s)",
            "extra": "totals kept for 4 round(s) not stored"}[tamper] in found[0]
    assert day_totals_rebuild(**EVER) == 1 and day_totals_differences(**EVER) == []


def test_the_nightly_report_raises_an_alert_for_totals_the_seats_do_not_make(table_client):
    _posted(table_client("S01", "se-50kr"), [record("R-1")])
    day = Round.objects.get().gaming_day
    sound = report_run(day_from=day)
    assert sound.figures["totals"]["differences"] == 0
    assert not [a for a in sound.figures["alerts"] if a.startswith("TOTALS")]
    DayTotal.objects.update(handle_ante=Decimal("150.00"))
    report = report_run(day_from=day)
    alert, = [a for a in report.figures["alerts"] if a.startswith("TOTALS")]
    assert "handle_ante 150.00 kept, 200.00 counted" in alert
    assert report.figures["totals"]["differences"] == 1


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_one_tables_posts_at_once_add_up(table_client):
    """Eight threads post one table's rounds at once, as a table's retries and a second terminal
    would: every row is added to, none overwritten."""
    client = table_client("S01", "se-50kr")
    errors = []

    def post(n: int) -> None:
        try:
            for k in range(5):
                row = record(f"C-{n}-{k}", dealer=f"D{k % 2}", dealt_at=f"2026-11-29T21:{10 + n}:{10 + k}+01:00")
                response = client.post(ROUNDS, row, format="json")
                assert response.status_code == 201, response.content
        except Exception as exc:  # noqa: BLE001 (the test thread reports it below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(DayTotal.objects.values_list("dealer", "rounds", "hands")) == [("D0", 24, 48), ("D1", 16, 32)]
    assert day_totals_differences(**EVER) == []


def test_the_command_names_a_difference_and_mends_it(table_client):
    from io import StringIO

    from django.core.management import CommandError, call_command

    _posted(table_client("S01", "se-50kr"), [record("R-1")])
    day = Round.objects.get().gaming_day.isoformat()
    out = StringIO()
    call_command("day_totals", day=day, stdout=out)
    assert "every total is what its seats and findings count" in out.getvalue()
    DayTotal.objects.update(hands=5)
    with pytest.raises(CommandError, match="1 total"):
        call_command("day_totals", day=day, stdout=out)
    assert "hands 5 kept, 2 counted" in out.getvalue()
    call_command("day_totals", "--rebuild", day=day, stdout=out)
    assert day_totals_differences(**EVER) == []
    # Written again by a person's command: the audit trail says who and which days.
    event = AuditEvent.objects.get(action="day_totals.rebuilt")
    assert event.actor_name.startswith("manage.py day_totals") and event.after == {"day_from": day, "day_to": day}
    for argv in (["--day", "2026-13-01"], ["--day", "nul\x00"], ["--day", day, "--to", "2000-01-01"]):
        with pytest.raises(CommandError):
            call_command("day_totals", *argv, stdout=out)


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_rebuild_while_a_table_posts_counts_its_round_once(table_client, monkeypatch):
    """A person's rebuild holds the audit head while it counts: a round posted meanwhile (a dealer
    new to the day, so a key the rebuild's count would not know) waits for it, then adds its share."""
    client = table_client("S01", "se-50kr")
    _posted(client, [record("R-1", dealer="D1")])
    day = Round.objects.get().gaming_day
    counting, go = threading.Event(), threading.Event()
    recounted = day_totals.recounted

    def held(**kwargs):
        counting.set()
        assert go.wait(30)
        return recounted(**kwargs)

    monkeypatch.setattr(day_totals, "recounted", held)
    done, errors = [], []

    def run(work) -> None:
        try:
            done.append(work())
        except Exception as exc:  # noqa: BLE001 (the test thread reports it below)
            errors.append(exc)
        finally:
            connections.close_all()

    rebuild = threading.Thread(target=run, args=(lambda: day_totals_rewritten(
        day_from=day, day_to=day, actor=SYSTEM),))
    rebuild.start()
    assert counting.wait(30)
    post = threading.Thread(target=run, args=(lambda: client.post(
        ROUNDS, record("R-2", dealer="D2"), format="json").status_code,))
    post.start()
    post.join(2)
    assert post.is_alive()  # waiting for the rebuild's head
    go.set()
    rebuild.join(30)
    post.join(30)
    assert errors == [] and sorted(map(str, done)) == ["1", "201"]
    assert sorted(DayTotal.objects.values_list("dealer", "rounds")) == [("D1", 1), ("D2", 1)]
    assert day_totals_differences(**EVER) == []
