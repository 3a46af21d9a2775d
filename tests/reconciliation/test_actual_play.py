"""The theoretical win at actual play: the optimal one plus what the players' scored decisions gave up.

A day of folded hands (the house wins Ante and Blind of each, far above the
game's edge) is posted at three kronor tables and a dollar table; its seat
scores are written here with known Antes lost, so what every group must add
up to is known before the report runs, and is found again by a query of its
own written in SQL.
"""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.utils import timezone

from audit.models import ReconciliationReport, SeatScore
from audit.reconciliation.services import report_run
from books.figures import ACTUAL, OPTIMAL, Sums, derive
from books.report_figures import figures_json
from game.protection.players import DealtRound, DealtSeat
from rounds.models import Round, Table
from tests.examples import last_gaming_day_evening
from tests.game.engine_rules import SE_50KR, US_30K
from tests.protection.wire import body_of
from tests.rollback import rolled_back_block

from .days import client_for

pytestmark = pytest.mark.django_db
EDGE = Decimal("0.02185")  # BASE_GAME_HOUSE_EDGE's default
FINE = Decimal("0.000001")
ZERO = Decimal(0)

# Table, configuration, rules, dealer, Ante, rounds, each seat's player and the Antes its
# decisions are said to have lost (None: left unscored; "unscorable": a row that says so).
WEAK_LOSSES = (Decimal("1.512345"), Decimal("2.443955"))  # 1.97815 a hand on average: folding it all
PLAN = {
    "W01": ("se-50kr", SE_50KR, "D-W", "100", 80, (("P-weak", WEAK_LOSSES),)),
    "X01": ("se-50kr", SE_50KR, "D-X", "100", 80, (("P-steady", (Decimal("0.123457"),)),)),
    "P01": ("se-50kr", SE_50KR, "D-P", "50", 10, (("P-weak", (Decimal("0.654321"),)), ("P-two", None))),
    "U01": ("us-30k", US_30K, "D-W", "25", 12, (("P-weak", (Decimal("0.654321"), Decimal("1.000001"))),)),
}
CURRENCY = {"W01": "SEK", "X01": "SEK", "P01": "SEK", "U01": "USD"}


def folded_rounds(players: tuple, rounds: int, seed: int) -> list[DealtRound]:
    """Rounds whose every seat folds before the flop: the house wins Ante and Blind of each."""
    rng = random.Random(seed)
    dealt = []
    for number in range(rounds):
        deck = list(range(52))
        rng.shuffle(deck)
        seats = tuple(DealtSeat(name, (deck[7 + 2 * i], deck[8 + 2 * i]), "fold")
                      for i, (name, _) in enumerate(players))
        dealt.append(DealtRound(number, tuple(deck[:5]), (deck[5], deck[6]), seats))
    return dealt


class Written:
    """What the test wrote as scores, added up per group and currency in Python."""

    def __init__(self) -> None:
        self.skill: dict = defaultdict(lambda: ZERO)
        self.scored: dict = defaultdict(int)

    def add(self, keys: list[tuple], ante: Decimal, ev_lost: Decimal) -> None:
        for key in keys:
            self.skill[key] += ante * ev_lost
            self.scored[key] += 1


def score(stored: Round, seat: int, player: str, ante: Decimal, ev_lost: Decimal, *, scored: bool = True) -> None:
    SeatScore.objects.create(
        round_id=stored.pk, gaming_day=stored.gaming_day, table_id=stored.table_id, dealt_at=stored.dealt_at,
        seat=seat, player=player, dealer=stored.dealer, currency=stored.config_version.currency,
        ante=ante, decision="fold", scored=scored, ev_lost=ev_lost, decisions=[],
    )


def post_and_score(start: datetime, written: Written, *, only_first_round_of_p01: bool) -> dict[str, list]:
    """Post the plan's rounds and score them; P01's second seat is left for later (its first round's
    is a seat game protection could not value)."""
    later = []
    for code, (config, rules, dealer, ante, rounds, players) in PLAN.items():
        client = client_for(code, config)
        for dealt in folded_rounds(players, rounds, seed=len(code) + rounds):
            body = body_of(dealt, table=code, start=start, rules=rules, dealer=dealer, ante=ante)
            response = client.post("/api/v1/rounds/", body, format="json")
            assert response.status_code == 201, response.content
        currency = CURRENCY[code]
        for stored in Round.objects.filter(table__code=code).select_related("config_version").order_by("dealt_at"):
            for seat, (player, losses) in enumerate(players, start=1):
                if losses is None:
                    if stored.dealt_at == start and only_first_round_of_p01:
                        score(stored, seat, player, Decimal(ante), Decimal("9.999999"), scored=False)
                    else:
                        later.append((stored, seat, player, Decimal(ante)))
                    continue
                ev_lost = losses[(stored.dealt_at - start) // timedelta(minutes=1) % len(losses)]
                score(stored, seat, player, Decimal(ante), ev_lost)
                written.add([("casino", "", currency), ("tables", code, currency), ("dealers", dealer, currency),
                             ("shifts", "14:00-22:00", currency), ("players", player, currency)],
                            Decimal(ante), ev_lost)
    return {"later": later}


@pytest.fixture(scope="module")
def scored_day(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), rolled_back_block():
        start = last_gaming_day_evening(timezone.now())
        day = timezone.localtime(start).date()
        written = Written()
        left = post_and_score(start, written, only_first_round_of_p01=True)
        first = report_run(day_from=day)
        # Game protection catches up with P01's second seat after the report; a report run
        # again reads the new scores (a new version: its inputs changed).
        second_written = Written()
        for key, value in written.skill.items():
            second_written.skill[key] = value
            second_written.scored[key] = written.scored[key]
        for stored, seat, player, ante in left["later"]:
            score(stored, seat, player, ante, Decimal("0.250000"))
            second_written.add([("casino", "", "SEK"), ("tables", "P01", "SEK"), ("dealers", "D-P", "SEK"),
                                ("shifts", "14:00-22:00", "SEK"), ("players", player, "SEK")],
                               ante, Decimal("0.250000"))
        second = report_run(day_from=day)
        yield {"day": day, "first": first, "written": written, "second": second, "second_written": second_written}
        transaction.set_rollback(True)


def group(figures: dict, scope: str, key: str, currency: str) -> dict:
    return figures["casino"][currency] if scope == "casino" else figures[scope][key][currency]


def sql_skill_by_table(day: date) -> dict[tuple[str, str], tuple[int, Decimal]]:
    """The scored seats' Ante × Antes lost by table and currency, by a query of the test's own."""
    with connection.cursor() as cursor:
        cursor.execute(f"""
            SELECT t.code, s.currency, COUNT(*), SUM(s.ante * s.ev_lost)
            FROM {SeatScore._meta.db_table} s
            JOIN {Round._meta.db_table} r ON r.id = s.round_id AND r.gaming_day = s.gaming_day
            JOIN {Table._meta.db_table} t ON t.id = s.table_id
            WHERE s.scored AND s.gaming_day = %s AND NOT r.void AND r.status <> %s
            GROUP BY t.code, s.currency
        """, [day, Round.Status.VOID])
        return {(code, currency): (n, total) for code, currency, n, total in cursor.fetchall()}


def test_every_groups_skill_is_what_was_written_and_what_sql_finds(scored_day):
    figures, written = scored_day["first"].figures, scored_day["written"]
    for (scope, key, currency), skill in written.skill.items():
        g = group(figures, scope, key, currency)
        assert Decimal(g["skill"]) == skill, (scope, key, currency)
        assert g["scored_hands"] == written.scored[scope, key, currency], (scope, key, currency)
    # The scores as they stand now are the ones the second report read.
    by_sql = sql_skill_by_table(scored_day["day"])
    now = scored_day["second"].figures
    assert {k: v[0] for k, v in by_sql.items()} == {
        (key, currency): now["tables"][key][currency]["scored_hands"]
        for key, by_currency in now["tables"].items() for currency in by_currency}
    for (code, currency), (_, total) in by_sql.items():
        assert Decimal(now["tables"][code][currency]["skill"]) == total
    # The tables, dealers, shifts and players add up to the casino, in each currency apart.
    for currency in ("SEK", "USD"):
        casino = Decimal(figures["casino"][currency]["skill"])
        for scope in ("tables", "dealers", "shifts", "players"):
            assert sum((Decimal(by[currency]["skill"]) for by in figures[scope].values() if currency in by),
                       ZERO) == casino, (scope, currency)


def test_the_theoretical_at_actual_play_is_the_optimal_one_plus_the_skill(scored_day):
    figures = scored_day["first"].figures
    for key, by_currency in figures["tables"].items():
        for currency, g in by_currency.items():
            optimal_base = (EDGE * Decimal(g["handle"]["ante"])).quantize(FINE)
            assert Decimal(g["theo_base"]) == optimal_base
            assert Decimal(g["theo_base_actual"]) == optimal_base + Decimal(g["skill"])
            assert Decimal(g["theoretical_actual"]) == (
                optimal_base + Decimal(g["skill"]) + Decimal(g["theo_trips"]))
            assert Decimal(g["theoretical_optimal"]) == optimal_base + Decimal(g["theo_trips"])
    # A weak player's table: what the house expects from the way they play is what it won.
    w01 = figures["tables"]["W01"]["SEK"]
    assert Decimal(w01["theoretical_actual"]) == Decimal(w01["win_total"]) == Decimal(80 * 200)


def test_a_partly_scored_group_says_so_and_is_judged_at_optimal_play(scored_day):
    figures = scored_day["first"].figures
    p01 = figures["tables"]["P01"]["SEK"]
    assert (p01["hands"], p01["scored_hands"], p01["fully_scored"]) == (20, 10, False)
    assert p01["scored_percent"] == "50.0000" and p01["theoretical"] == OPTIMAL
    assert p01["bands"]["total"]["theoretical"] == OPTIMAL
    assert p01["bands"]["total"]["expected"] == p01["bands_optimal"]["total"]["expected"]
    # The seat that could not be valued neither counts as scored nor adds its Antes lost.
    assert Decimal(p01["skill"]) == 10 * 50 * Decimal("0.654321")
    assert figures["players"]["P-two"]["SEK"]["scored_hands"] == 0
    assert figures["shifts"]["14:00-22:00"]["SEK"]["fully_scored"] is False
    assert figures["casino"]["SEK"]["fully_scored"] is False and figures["casino"]["USD"]["fully_scored"] is True
    assert figures["scoring"]["casino"]["SEK"] == {"hands": 180, "scored_hands": 170, "scored_percent": "94.4444"}
    assert figures["scoring"]["not_fully_scored"] == {"tables": 1, "dealers": 1, "shifts": 1, "players": 1}
    for key in ("W01", "X01"):
        assert figures["tables"][key]["SEK"]["fully_scored"] is True
        assert figures["tables"][key]["SEK"]["theoretical"] == ACTUAL


def test_a_weak_players_table_is_not_flagged_while_one_outside_both_bands_is(scored_day):
    figures = scored_day["first"].figures
    weak, steady = figures["tables"]["W01"]["SEK"], figures["tables"]["X01"]["SEK"]
    # Both won Ante and Blind of every hand: far outside the band of optimal play.
    assert weak["bands_optimal"]["total"]["outside"] == steady["bands_optimal"]["total"]["outside"] == "99.7"
    assert weak["bands"]["total"] | {"theoretical": None} != weak["bands_optimal"]["total"] | {"theoretical": None}
    assert weak["bands"]["total"]["theoretical"] == ACTUAL and weak["bands"]["total"]["outside"] is None
    assert weak["bands"]["total"]["z"] == "0.00"
    assert steady["bands"]["total"]["theoretical"] == ACTUAL and steady["bands"]["total"]["outside"] == "99.7"
    flagged = {(f["scope"], f["key"], f["bet"]): f for f in figures["flags"]}
    assert ("table", "W01", "total") not in flagged and ("table", "W01", "base") not in flagged
    assert ("dealer", "D-W", "total") not in flagged
    assert flagged["table", "X01", "total"]["theoretical"] == ACTUAL
    assert flagged["table", "X01", "total"]["expected"] == steady["bands"]["total"]["expected"]
    assert Decimal(steady["bands"]["total"]["expected"]) == Decimal(steady["theoretical_actual"]).quantize(
        Decimal("0.01"))
    # The regulators' test keeps the game's theoretical win (docs/VARIANCE.md): W01 trips it.
    comar = {(t["scope"], t["key"]) for t in figures["variance_tests"]["trips"]
             if t["test"] == "comar" and t["period"] == "day"}
    assert {("table", "W01"), ("table", "X01")} <= comar


def test_currencies_are_kept_apart(scored_day):
    figures, written = scored_day["first"].figures, scored_day["written"]
    assert set(figures["dealers"]["D-W"]) == {"SEK", "USD"}
    assert set(figures["players"]["P-weak"]) == {"SEK", "USD"}
    usd = figures["dealers"]["D-W"]["USD"]
    assert Decimal(usd["skill"]) == written.skill["tables", "U01", "USD"] == 6 * 25 * (
        Decimal("0.654321") + Decimal("1.000001"))
    assert Decimal(figures["dealers"]["D-W"]["SEK"]["skill"]) == written.skill["tables", "W01", "SEK"]
    assert Decimal(figures["players"]["P-weak"]["SEK"]["skill"]) == (
        written.skill["tables", "W01", "SEK"] + 10 * 50 * Decimal("0.654321"))
    assert Decimal(figures["casino"]["USD"]["skill"]) == written.skill["tables", "U01", "USD"]
    assert (figures["casino"]["USD"]["hands"], figures["casino"]["USD"]["scored_hands"]) == (12, 12)


def test_a_score_in_another_currency_than_its_round_is_refused(scored_day):
    from audit.reconciliation.config import reconciliation_settings
    from books.figures import CurrencyMismatch
    from audit.reconciliation.selectors import table_cells

    day = scored_day["day"]
    table = Table.objects.get(code="U01")
    with transaction.atomic():
        SeatScore.objects.filter(table=table).update(currency="SEK")
        with pytest.raises(CurrencyMismatch):
            table_cells(table_id=table.pk, day_from=day, day_to=day, clock=reconciliation_settings())
        transaction.set_rollback(True)


def test_scores_written_after_a_report_come_in_with_the_next_version(scored_day):
    first, second, written = scored_day["first"], scored_day["second"], scored_day["second_written"]
    first.refresh_from_db()
    assert second.version == first.version + 1 and first.status == ReconciliationReport.Status.SUPERSEDED
    assert first.inputs["data"]["seat_scores"] < second.inputs["data"]["seat_scores"]
    p01 = second.figures["tables"]["P01"]["SEK"]
    assert (p01["scored_hands"], p01["fully_scored"]) == (19, False)
    for (scope, key, currency), skill in written.skill.items():
        assert Decimal(group(second.figures, scope, key, currency)["skill"]) == skill, (scope, key, currency)
    # The month to date is added up from the days' stored sums: the same skill, the same verdict.
    month = second.figures["month_to_date"]["tables"]["W01"]["SEK"]
    assert month["skill"] == second.figures["tables"]["W01"]["SEK"]["skill"]
    assert month["bands"]["total"]["theoretical"] == ACTUAL and month["bands"]["total"]["outside"] is None


def test_the_admin_page_shows_both_theoreticals_the_skill_and_the_scored_share(scored_day, admin_client):
    report = scored_day["second"]
    html = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/").content.decode()
    for text in ("theoretical, optimal play", "theoretical, actual play", "skill", "scored", "band judged at",
                 "95 % band, optimal play", "16,000.00 SEK", "174.80 SEK", "15,825.20 SEK", "partly",
                 "not fully scored, so judged at optimal play"):
        assert text in html, text


def test_a_group_without_scores_is_judged_as_before():
    sums = Sums(currency="SEK", hands=4, handle={"ante": Decimal(400), "blind": Decimal(400), "play": ZERO,
                                                 "trips": ZERO, "progressive": ZERO},
                theo_base=Decimal("8.74"), var_base=Decimal("390.4576"))
    derived = figures_json(derive(sums))
    assert derived["theoretical"] == OPTIMAL and derived["fully_scored"] is False
    assert derived["bands"]["total"] == derived["bands_optimal"]["total"]
    assert derived["theoretical_actual"] == derived["theoretical_optimal"]
    # Scored hands make the difference only once every hand is scored.
    sums.scored_hands, sums.skill = 3, Decimal("150.00000000")
    assert figures_json(derive(sums))["theoretical"] == OPTIMAL
    sums.scored_hands = 4
    assert figures_json(derive(sums))["bands"]["total"]["expected"] == "158.74"
    assert Sums.from_json(sums.to_json()) == sums


@pytest.mark.slow
def test_a_day_game_protection_scored_is_judged_at_the_way_its_players_played(table_client):
    from audit.protection.services import day_protect
    from game.protection import players as pl
    from game.protection.preflop import shipped_table
    from game.protection.values import PayTable

    pays, preflop = PayTable.of(SE_50KR), shipped_table()
    client = table_client("S01", "se-50kr")
    start = last_gaming_day_evening(timezone.now())
    dealt = pl.deal_rounds([pl.WeakPlayer("Q-weak", pays, preflop), pl.OptimalPlayer("Q-best", pays, preflop)],
                           40, seed=11)
    for round_ in dealt:
        response = client.post("/api/v1/rounds/", body_of(round_, table="S01", start=start, rules=SE_50KR),
                               format="json")
        assert response.status_code == 201, response.content
    day = timezone.localtime(start).date()
    assert report_run(day_from=day).figures["tables"]["S01"]["SEK"]["scored_hands"] == 0
    day_protect(day=day)
    figures = report_run(day_from=day).figures
    s01 = figures["tables"]["S01"]["SEK"]
    # The module's own day may be in the database beside it: this table and its players only.
    scores = SeatScore.objects.filter(gaming_day=day, table__code="S01", scored=True)
    assert s01["hands"] == s01["scored_hands"] == scores.count() == 80 and s01["theoretical"] == ACTUAL
    assert Decimal(s01["skill"]) == sum((s.ante * s.ev_lost for s in scores), ZERO) > 0
    for player in ("Q-weak", "Q-best"):
        mine = scores.filter(player=player)
        assert Decimal(figures["players"][player]["SEK"]["skill"]) == sum((s.ante * s.ev_lost for s in mine), ZERO)
    # The weak player gives up more than the optimal one (who gives up almost nothing).
    weak, best = (Decimal(figures["players"][p]["SEK"]["skill"]) for p in ("Q-weak", "Q-best"))
    assert weak > best
