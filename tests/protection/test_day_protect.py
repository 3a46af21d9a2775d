"""A gaming day's game protection on stored rounds: seats scored once, suspicions raised once."""

from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from audit.models import ProtectionFinding, SeatScore
from audit.protection.scores import decisions_from_json
from audit.protection.services import day_protect
from game.protection import players as pl
from game.protection.codes import ProtectionCode
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from tests.examples import last_gaming_day_evening
from tests.game.engine_rules import SE_50KR

from .wire import body_of

PAYS = PayTable.of(SE_50KR)
pytestmark = pytest.mark.django_db


def post_table(client, players, rounds: int, seed: int, **wire) -> tuple:
    start = last_gaming_day_evening(timezone.now())
    dealt = pl.deal_rounds(players, rounds, seed)
    for round_ in dealt:
        body = body_of(round_, table=client.table.code, start=start, rules=SE_50KR, **wire)
        response = client.post("/api/v1/rounds/", body, format="json")
        assert response.status_code == 201, response.content
    return start, dealt


@pytest.mark.slow
def test_a_day_is_scored_once_and_the_hole_carder_is_found(table_client):
    table = shipped_table()
    players = [
        pl.OptimalPlayer("P-optimal", PAYS, table),
        pl.WeakPlayer("P-weak", PAYS, table),
        pl.HoleCarder("P-peeks", PAYS, table, share=1.0),
    ]
    start, dealt = post_table(table_client("S01", "se-50kr"), players, 120, seed=16)
    day = timezone.localtime(start).date()

    first = day_protect(day=day)
    assert first.seats_scored == SeatScore.objects.count() == 3 * len(dealt)
    again = day_protect(day=day)
    assert again.seats_scored == 0 and again.raised == {}
    assert SeatScore.objects.count() == 3 * len(dealt)

    # One finding for the person, whichever of his tests crossed; the per-dealer test is its evidence.
    finding = ProtectionFinding.objects.get(code=ProtectionCode.SUSPECTED_HOLE_CARDING.value)
    assert (finding.player, finding.key) == ("P-peeks", "player=P-peeks")
    assert first.raised == {ProtectionCode.SUSPECTED_HOLE_CARDING.value: 1}
    assert finding.figure >= finding.threshold
    tests = {(t["knowledge"], t["dealer"]): t for t in finding.evidence["tests"]}
    assert set(tests) == {("dealer_card", None), ("dealer_card", "D-1")}
    assert tests["dealer_card", None]["crossed"]["table"] == "S01"
    assert tests["dealer_card", None]["crossed"]["round_id"].startswith("sim-")
    assert set(tests["dealer_card", None]["parts"]) == {"preflop", "flop", "river", "hand"}
    step = finding.evidence["steps"][-1]
    assert step["table"] == "S01" and step["round_id"].startswith("sim-") and 0 < step["share"] < 1
    assert [p["day"] for p in finding.evidence["history"]] == [day.isoformat()]


@pytest.mark.slow
def test_the_stored_decisions_are_the_seats_own_and_their_cost_adds_up(table_client):
    table = shipped_table()
    players = [pl.WeakPlayer("P-weak", PAYS, table)]
    start, dealt = post_table(table_client("S01", "se-50kr"), players, 30, seed=3)
    day_protect(day=timezone.localtime(start).date())
    for round_, score in zip(dealt, SeatScore.objects.order_by("dealt_at")):
        decisions = decisions_from_json(score.decisions)
        assert decisions[-1].chosen == round_.seats[0].decision
        assert float(score.ev_lost) == pytest.approx(sum(d.ev_lost for d in decisions), abs=1e-5)
        assert score.player == "P-weak" and score.dealer == "D-1" and score.currency == "SEK"
    assert SeatScore.objects.filter(ev_lost__gt=0).exists()


@pytest.mark.slow
def test_a_dealer_who_leaves_one_players_losses_on_the_table_is_flagged(table_client, settings):
    settings.PROTECTION_SWEETHEART_MIN_ERRORS = 3
    table = shipped_table()
    players = [pl.WeakPlayer(f"P-{n}", PAYS, table) for n in range(4)]
    start, _ = post_table(table_client("S01", "se-50kr"), players, 60, seed=9, overpay={"P-2": "blind"})
    day = timezone.localtime(start).date()
    day_protect(day=day)
    found = ProtectionFinding.objects.filter(code=ProtectionCode.SUSPECTED_SWEETHEART_DEALING.value)
    assert list(found.values_list("dealer", "player")) == [("D-1", "P-2")]
    # Its days are the data's, not a window reaching back before any round was dealt.
    assert (found.get().day_from, found.get().day_to) == (day, day)
    assert found.get().key == "dealer=D-1 player=P-2" and f"from {day} to {day}" in found.get().detail
    evidence = found.get().evidence
    assert evidence["pair_favourable"] >= 3
    assert {e["type"] for e in evidence["errors"]} and all(e["direction"] == "for_player" for e in evidence["errors"])


@pytest.mark.slow
def test_a_players_figures_and_the_course_of_his_test(table_client, settings):
    from audit.protection.selectors import player_figures, player_leak_course, players_ranked

    table = shipped_table()
    players = [pl.WeakPlayer("P-weak", PAYS, table), pl.HoleCarder("P-peeks", PAYS, table, share=1.0)]
    start, dealt = post_table(table_client("S01", "se-50kr"), players, 150, seed=16)
    day_protect(day=timezone.localtime(start).date())

    weak, = player_figures(player="P-weak")
    assert (weak.currency, weak.hands, weak.scored_hands) == ("SEK", 150, 150)
    lost = sum(s.ante * s.ev_lost for s in SeatScore.objects.filter(player="P-weak"))
    assert weak.theoretical_actual - weak.theoretical_optimal == pytest.approx(lost, abs=Decimal("0.00001"))
    # The house edge the nightly report uses, so the two theoreticals agree everywhere.
    assert weak.theoretical_optimal == Decimal(150 * 100) * Decimal(settings.BASE_GAME_HOUSE_EDGE)
    assert weak.skill > 0 and weak.handle >= 2 * 150 * 100
    courses = player_leak_course(player="P-peeks")
    first = next(c for c in courses if c.knowledge == "dealer_card" and c.dealer is None)
    assert first.verdict == "suspected" and first.peak >= first.threshold
    assert all(a.dealt_at <= b.dealt_at for a, b in zip(first.points, first.points[1:]))
    assert all(0 < p.share < 1 for p in first.points)
    assert {row["player"] for row in players_ranked()} == {"P-weak", "P-peeks"}


@pytest.mark.slow
def test_seats_scored_before_they_carried_verdicts_are_scored_again_and_the_hole_carder_found(table_client):
    table = shipped_table()
    players = [pl.OptimalPlayer("P-optimal", PAYS, table), pl.HoleCarder("P-peeks", PAYS, table, share=1.0)]
    start, dealt = post_table(table_client("S01", "se-50kr"), players, 120, seed=16)
    day = timezone.localtime(start).date()
    day_protect(day=day)
    ProtectionFinding.objects.all().delete()
    # As audit 0025 stored them: no dealer card's verdict on any decision nor on the hand.
    for score in SeatScore.objects.all():
        score.decisions = [{k: v for k, v in d.items() if k != "seen"} for d in score.decisions]
        score.seen = {}
        score.save(update_fields=["decisions", "seen"])
    assert day_protect(day=day).raised == {}  # the test reads no step from them

    out = StringIO()
    call_command("protection_rescore", "--day", day.isoformat(), stdout=out)
    assert f"{day}: {2 * len(dealt)} seats scored again" in out.getvalue()
    assert SeatScore.objects.count() == 2 * len(dealt)
    assert all(s.seen for s in SeatScore.objects.filter(player="P-peeks"))
    assert ProtectionFinding.objects.get(code=ProtectionCode.SUSPECTED_HOLE_CARDING.value).player == "P-peeks"
    out = StringIO()
    call_command("protection_rescore", "--day", day.isoformat(), stdout=out)
    assert f"{day}: 0 seats scored again, 0 scored in all" in out.getvalue()


def test_the_rescore_command_refuses_days_it_cannot_read(db):
    with pytest.raises(CommandError, match="is not a date"):
        call_command("protection_rescore", "--day", "2026-13-01")
    with pytest.raises(CommandError, match="--to is before --day"):
        call_command("protection_rescore", "--day", "2026-12-02", "--to", "2026-12-01")


def test_a_table_s_lines_are_kept_each_day_and_the_next_days_model_pools_them(table_client, settings):
    from datetime import timedelta

    from audit.models import LineCounts
    from audit.protection.scores import table_lines

    table = shipped_table()
    players = [pl.OptimalPlayer("P-optimal", PAYS, table), pl.WeakPlayer("P-weak", PAYS, table)]
    client = table_client("S01", "se-50kr")
    start, dealt = post_table(client, players, 20, seed=3)
    day = timezone.localtime(start).date()
    day_protect(day=day)
    (kept,) = LineCounts.objects.filter(table=client.table)
    assert kept.gaming_day == day
    # Every seat chose before the flop: the day's counts hold each of them once.
    assert sum(count for _, _, count in kept.counts["table"]["preflop"]) == 2 * len(dealt)
    assert set(kept.counts["players"]) == {"P-optimal", "P-weak"}

    settings.PROTECTION_LINE_DAYS = 14
    later = table_lines(client.table.pk, day + timedelta(days=13), [])
    assert later.table["preflop"].sum() == 2 * len(dealt) and later.players["P-weak"]["preflop"].sum() == len(dealt)
    assert table_lines(client.table.pk, day + timedelta(days=14), []).table["preflop"].sum() == 0  # out of the window
    settings.PROTECTION_LINE_DAYS = 1
    assert table_lines(client.table.pk, day + timedelta(days=1), []).table["preflop"].sum() == 0  # the day's alone
