"""The tonight page: its figures against the rows they count, and the lists its tiles link to."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from audit.tonight import tonight
from infra.gaming_day import gaming_day_of
from progressive.models import Pool
from progressive.services import reading_record
from rounds.models import Finding, Round
from rounds.services import finding_transition
from tests import examples, mistakes
from tests.admin.money import seat_money
from tests.api import records
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


def _day(figures, day):
    return next(d for d in figures.days if d.day == day)


def test_the_days_figures_are_the_rows_they_count(last_day):
    figures = _day(tonight(), last_day)
    rounds = list(Round.objects.filter(gaming_day=last_day).select_related("config_version"))
    by_currency = defaultdict(list)
    for round_ in rounds:
        by_currency[round_.config_version.currency].append(round_)
    assert {(d.currency, d.rounds, d.tables) for d in figures.dealt} == {
        (currency, len(rs), len({r.table_id for r in rs})) for currency, rs in by_currency.items()}

    # A row for each mistake, as the queue the counts link to lists them.
    work = [f for f in mistakes.firsts(Finding.objects.select_related("round__config_version")
                                       .filter(round__gaming_day=last_day))
            if f.state in ("open", "acknowledged") and not f.informational]
    stakes = defaultdict(Decimal)
    counts = Counter()
    for f in work:
        key = (f.code, f.round.config_version.currency)
        counts[key] += 1
        stakes[key] += abs(f.expected - f.claimed) if f.expected is not None and f.claimed is not None else 0
    assert {(o.code, o.currency): (o.count, o.at_stake) for o in figures.findings} == {
        key: (counts[key], stakes[key]) for key in counts}
    assert figures.findings and all(o.code not in examples.INFORMATIONAL for o in figures.findings)


def test_a_finding_leaves_the_tile_when_it_is_closed_not_when_acknowledged(last_day, auditor):
    def counts():
        return {(o.code, o.currency): o.count for o in _day(tonight(), last_day).findings}

    before = counts()
    finding = Finding.objects.filter(state="open", informational=False, round__gaming_day=last_day).first()
    key = (finding.code, finding.round.config_version.currency)
    finding_transition(finding_ids=[finding.pk], to_state="acknowledged", user=auditor)
    assert counts()[key] == before[key]  # acknowledged: being worked, still at stake
    finding_transition(finding_ids=[finding.pk], to_state="resolved", user=auditor, note="paid back")
    assert counts().get(key, 0) == before[key] - 1


def test_findings_left_from_earlier_days_and_their_link(last_day, table_client, staff):
    auditor = staff("auditor")
    assert tonight().backlog == 0
    earlier = examples.last_gaming_day_evening(timezone.now()) - timedelta(days=3)
    client = table_client("S02", "se-50kr")
    flagged = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == ["payout_mismatch"])
    body = examples.redated({**flagged["record"], "table": "S02"}, earlier)
    assert client.post("/api/v1/rounds/", body, format="json").status_code == 201
    old = Finding.objects.filter(round__table__code="S02")
    figures = tonight()
    assert figures.backlog == old.count() > 0
    listed = auditor.get(figures.backlog_url).context["cl"].result_list
    assert {f.pk for f in listed} == set(old.values_list("pk", flat=True))


def test_the_count_of_findings_left_is_the_length_of_the_list_it_opens(last_day, table_client, staff):
    """A seat's Ante off the unit is one mistake raised on three bets: the queue lists it once, and the
    count beside the link says one, not three."""
    auditor = staff("auditor")
    earlier = examples.last_gaming_day_evening(timezone.now()) - timedelta(days=3)
    client = table_client("S02", "se-50kr")
    off = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == ["bet_off_unit"])
    body = examples.redated({**off["record"], "table": "S02"}, earlier)
    assert client.post("/api/v1/rounds/", body, format="json").status_code == 201
    assert Finding.objects.filter(round__table__code="S02").count() > 1
    figures = tonight()
    listed = auditor.get(figures.backlog_url).context["cl"]
    assert figures.backlog == listed.result_count == len(listed.result_list) == 1


def test_the_page_s_own_days_leave_the_backlog_as_the_queue_counts_them(last_day, table_client, staff):
    """The backlog takes away the page's days with the counts the page shows for them: a mistake raised
    on three bets on the last day is one there, so the days before still have nothing to work."""
    client = table_client("S02", "se-50kr")
    off = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == ["bet_off_unit"])
    body = examples.redated({**off["record"], "table": "S02"}, examples.last_gaming_day_evening(timezone.now()))
    assert client.post("/api/v1/rounds/", body, format="json").status_code == 201
    assert Finding.objects.filter(round__table__code="S02", code="bet_off_unit").count() > 1
    figures = tonight()
    listed = staff("auditor").get(figures.backlog_url).context["cl"]
    assert figures.backlog == listed.result_count == 0


def test_dealers_are_ranked_by_the_money_their_mismatches_put_at_stake_with_their_direction(last_day):
    figures = _day(tonight(), last_day)
    mismatches = Finding.objects.filter(code="payout_mismatch", round__gaming_day=last_day).select_related("round")
    expected = defaultdict(lambda: [0, 0, 0, Decimal(0), Decimal(0)])
    for f in mismatches:
        row = expected[f.round.dealer]
        row[0] += 1
        if f.claimed > f.expected:
            row[1] += 1
            row[3] += f.claimed - f.expected
        elif f.claimed < f.expected:
            row[2] += 1
            row[4] += f.expected - f.claimed
    assert figures.dealers
    for d in figures.dealers:
        assert [d.mismatches, d.overpaid, d.underpaid, d.overpaid_amount, d.underpaid_amount] == expected[d.dealer]
    at_stake = [d.overpaid_amount + d.underpaid_amount for d in figures.dealers]
    assert at_stake == sorted(at_stake, reverse=True)
    assert len(figures.dealers) + figures.dealers_more == len(expected)


def test_each_tables_money_is_the_seats_it_adds_up(last_day, staff):
    figures = _day(tonight(), last_day)
    assert {(m.table, m.currency): [m.rounds, m.hands, m.handle, m.win, m.win_paid]
            for m in figures.money} == seat_money(last_day)
    assert any(m.win_paid != m.win for m in figures.money)  # the examples hold dealers' errors
    assert not any(m.dealing for m in figures.money)  # the last day has ended
    content = staff("auditor").get("/admin/").content.decode()
    for m in figures.money:
        assert f'data-table="{m.table}" data-currency="{m.currency}" data-rounds="{m.rounds}"' in content
        assert f'data-win-paid="{m.win_paid}"' in content and m.url.replace("&", "&amp;") in content


def test_a_table_that_stopped_posting_is_named_silent(table_client, settings):
    settings.TABLE_SILENT_AFTER = timedelta(minutes=20)
    now = timezone.now()
    start = examples.last_gaming_day_evening(now)
    client = table_client("S01", "se-50kr")
    for i, minutes in enumerate((0, 5, 40, 45)):  # 35 minutes without a round between the 2nd and 3rd
        body = records.record(round_id=f"gap-{i}", dealt_at=(start + timedelta(minutes=minutes)).isoformat())
        assert client.post(records.ROUNDS, body, format="json").status_code == 201
    silent = _day(tonight(now=now), gaming_day_of(start)).silent
    assert [(s.table, s.longest, s.since, s.until) for s in silent] == [
        ("S01", timedelta(minutes=35), start + timedelta(minutes=5), start + timedelta(minutes=40))]
    settings.TABLE_SILENT_AFTER = timedelta(minutes=40)
    assert _day(tonight(now=now), gaming_day_of(start)).silent == []


def test_on_the_current_day_a_table_is_silent_since_its_last_round(table_client, settings):
    settings.TABLE_SILENT_AFTER = timedelta(minutes=20)
    # The clock at 20:30 of a gaming day, whose last round was dealt at 20:00.
    last = examples.last_gaming_day_evening(timezone.now()) + timedelta(hours=2)
    client = table_client("S01", "se-50kr")
    for i, back in enumerate((10, 0)):
        body = records.record(round_id=f"quiet-{i}", dealt_at=(last - timedelta(minutes=back)).isoformat())
        assert client.post(records.ROUNDS, body, format="json").status_code == 201
    today = tonight(now=last + timedelta(minutes=30)).days[0]
    assert today.current and today.day == gaming_day_of(last)
    assert [(s.table, s.since, s.until, s.longest) for s in today.silent] == [
        ("S01", last, None, timedelta(minutes=30))]
    assert tonight(now=last + timedelta(minutes=15)).days[0].silent == []


def test_a_pool_against_its_last_reading(last_day, table_client):
    pool = Pool.objects.get()
    assert tonight().pools[0].reading is None
    reading_record(pool=pool, displayed=pool.meter + Decimal("12.50"), reported_at=timezone.now(), reporter=SYSTEM)
    # The meter moves on with every contribution; the reading's difference is the one it had.
    body = records.us_record(round_id="after-the-reading", dealt_at=timezone.now().isoformat())
    assert table_client("U01", "us-30k").post(records.ROUNDS, body, format="json").status_code == 201
    state = tonight().pools[0]
    assert state.pool.meter > pool.meter
    assert (state.pool.code, state.difference, state.reading.flagged) == (
        pool.code, Decimal("12.50"), state.reading.difference.copy_abs() > state.reading.tolerance)


def test_the_last_report_and_the_chain_it_walked(last_day):
    assert tonight().last_report is None and tonight().chain.checked_by is None
    call_command("reconcile", day=last_day.isoformat(), no_progress=True)
    figures = tonight()
    report = figures.last_report
    assert report.status == "complete" and _day(figures, last_day).report == report
    assert figures.chain.checked_by == report and report.chain_ok is True
    assert figures.chain.events_since is not None and figures.chain.events_since >= 0
    outside = {(code, currency) for code, by in report.figures["tables"].items()
               for currency, g in by.items() if g["bands"]["total"]["outside"]}
    assert {(o.table, o.currency) for o in _day(figures, last_day).outside} == outside
    assert all(o.side.startswith(("above its", "below its")) for o in _day(figures, last_day).outside)
    # The alerts as the report's completion recorded them: its figures' own.
    stored = type(report).objects.get(pk=report.pk).figures["alerts"]
    assert stored and figures.alerts == stored


def test_the_first_page_shows_the_tiles_and_links_them(last_day, staff):
    client = staff("auditor")
    content = client.get("/admin/").content.decode()
    assert "Gaming day" in content and "Findings to work" in content
    figures = _day(tonight(), last_day)
    for tile in figures.findings:
        assert tile.url.replace("&", "&amp;") in content
    for tile in figures.findings:
        listed = client.get(tile.url).context["cl"].result_list
        assert len(listed) == tile.count
        assert {(f.code, f.round.config_version.currency) for f in listed} == {(tile.code, tile.currency)}
        assert {f.state for f in listed} <= {"open", "acknowledged"}
    for tile in figures.dealt:
        assert client.get(tile.url).context["cl"].result_count == tile.rounds
    for tile in figures.dealers:
        listed = client.get(tile.url).context["cl"].result_list
        assert len(listed) == tile.mismatches and {f.round.dealer for f in listed} == {tile.dealer}


def test_staff_who_may_not_read_rounds_see_no_tiles(django_user_model, last_day):
    user = django_user_model.objects.create_user("nobody", password="pw-for-tests-only", is_staff=True)
    client = Client()
    client.force_login(user)
    page = client.get("/admin/")
    assert page.status_code == 200 and "Findings to work" not in page.content.decode()


@pytest.mark.django_db
def test_a_table_s_hands_an_hour_leave_its_break_out(table_client):
    """S05 deals twenty rounds a round every three minutes, breaks for two hours, and deals twenty
    more: its hands an hour count its 1:54 h of dealing, not the 3:57 h from first to last."""
    record = examples.post_two_stints(table_client, "S05")
    day = gaming_day_of(examples.last_gaming_day_evening(timezone.now()))
    [row] = [m for m in _day(tonight(), day).money if m.table == "S05"]
    hands = 40 * len(record["seats"])
    assert row.hands == hands
    assert row.hands_per_hour == (Decimal(hands) / (Decimal(2 * 57) / 60)).quantize(Decimal(1))
