"""The leak tests kept night to night: a night reads its own day only, and every test stands exactly
where reading the whole history again would put it, through reruns, late seats and upgrades."""

from __future__ import annotations

import threading
from datetime import date, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from audit.models import LeakStateDay, LeakTestState, ProtectionFinding, SeatScore
from audit.protection import leak_state, raising
from audit.protection.config import protection_config
from audit.protection.scores import decisions_json, partners_from_json, partners_json, score_from_json
from game.protection import leak
from game.protection import players as pl
from game.protection.flop_table import shipped_table as shipped_flops
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from tests.game.engine_rules import SE_50KR

from tests.game.protection.styles import basic_strategy

PAYS = PayTable.of(SE_50KR)
FIRST = date(2026, 10, 1)
DAYS = 6
ROUNDS_A_DAY = 40


def _players(names):
    made = {"P-reads": lambda n: pl.CardReader(n, PAYS, shipped_table(), shipped_flops())}
    return [made.get(n, lambda n: basic_strategy(n, PAYS, shipped_table(), shipped_flops()))(n) for n in names]


def _seat_rows(table, day: date, number: int, names: list[str], dealer: str, seed: int) -> list[SeatScore]:
    """A table's day of simulated rounds, scored as the service scores them, as stored seats."""
    dealt = pl.deal_rounds(_players(names), ROUNDS_A_DAY, seed)
    played = pl.scored_seats(dealt, PAYS, shipped_table(), dealer_name=dealer, flops=shipped_flops())
    start = timezone.make_aware(datetime.combine(day, datetime.min.time()) + timedelta(hours=18))
    rows = []
    for seat in played:
        round_number, player = seat.key
        rows.append(SeatScore(
            round_id=number * 10_000 + round_number, gaming_day=day, table=table,
            dealt_at=start + timedelta(minutes=round_number), seat=names.index(player) + 1, player=player,
            dealer=dealer, companions=sorted(seat.companions), currency="SEK", ante=Decimal("50.00"),
            decision="fold", scored=True, ev_lost=Decimal(0), decisions=decisions_json(seat.score),
            seen=seat.score.seen.as_json() if seat.score.seen is not None else {},
            partners=partners_json(seat.partners),
        ))
    return rows


def _store_days(table, days=range(DAYS)):
    # Players move between two seatings, so companions and dealers are first met on later days too.
    for d in days:
        day = FIRST + timedelta(days=d)
        for t, names in enumerate((["P-reads", "P-a", "P-b", f"P-c{d % 3}"], ["P-d", f"P-e{d % 2}", "P-a2"])):
            SeatScore.objects.bulk_create(_seat_rows(table, day, 10 * d + t, names, f"D-{(d + t) % 3}", 100 * d + t))


def _whole_history() -> dict[str, list[leak.Trace]]:
    """Every test over the whole stored history at once, read as the nightly reads a day."""
    rows = SeatScore.objects.exclude(player="").order_by("player", "dealt_at", "round_id", "seat").values_list(
        "round_id", "seat", "gaming_day", "player", "dealer", "companions", "decisions", "seen", "partners")
    seats = [
        leak.PlayedSeat((r, s, g.isoformat()), p, d or None, tuple(c), score_from_json(dj, sj), g,
                        partners_from_json(pj))
        for r, s, g, p, d, c, dj, sj, pj in rows
    ]
    return leak.leak_traces(seats, protection_config().leak)


def _kept_now() -> dict[tuple, dict]:
    """Each test's latest kept state, by (player, code, dealer, companion)."""
    return {
        (r.player, r.code, r.dealer, r.companion): r.state
        for r in LeakTestState.objects.filter(day_to__isnull=True)
    }


def _expected(traces: dict[str, list[leak.Trace]]) -> dict[tuple, dict]:
    return {
        (player, *leak.key_of(t.test)): leak_state.state_json(t.state)
        for player, found in traces.items() for t in found
    }


def _without_meetings(kept: dict[tuple, dict]) -> dict[tuple, dict]:
    return {k: {f: v for f, v in state.items() if f != "met"} for k, state in kept.items()}


def _nights(days):
    for d in days:
        raising.day_findings_raise(day=FIRST + timedelta(days=d))


@pytest.fixture
def table(table_client):
    return table_client("S01").table


@pytest.mark.django_db
def test_night_by_night_every_test_stands_exactly_where_the_whole_history_puts_it(table):
    _store_days(table)
    _nights(range(DAYS))
    whole = _whole_history()
    assert any(t.crossed for t in whole["P-reads"])  # a crossing carried night to night is compared too
    assert _without_meetings(_kept_now()) == _expected(whole)
    assert set(LeakStateDay.objects.values_list("gaming_day", flat=True)) == {
        FIRST + timedelta(days=d) for d in range(DAYS)}
    finding = ProtectionFinding.objects.get(code=leak.HOLE_CARDING, player="P-reads")
    strongest = max((t for t in whole["P-reads"] if t.crossed), key=lambda t: t.peak - t.threshold)
    assert float(finding.figure) == pytest.approx(strongest.peak, abs=1e-6)
    assert finding.day_from == strongest.first_day
    tests = {(t["dealer"], t["companion"]): t for t in finding.evidence["tests"]}
    assert tests[(None, None)]["steps"] == next(t.step_count for t in whole["P-reads"] if t.test.dealer is None)
    assert tests[(None, None)]["crossed"]["step"] == next(
        t.crossing.step for t in whole["P-reads"] if t.test.dealer is None and t.test.code == leak.HOLE_CARDING)


@pytest.mark.django_db
def test_a_night_reads_its_own_day_and_nothing_before_it(table, monkeypatch):
    _store_days(table)
    _nights(range(DAYS - 1))
    read: list[date] = []
    played = raising._played

    def counted(players, day, dealt):
        seats = played(players, day, dealt)
        read.extend(seat.day for seat in seats)
        return seats
    monkeypatch.setattr(raising, "_played", counted)
    last = FIRST + timedelta(days=DAYS - 1)
    raising.day_findings_raise(day=last)
    assert read and set(read) == {last}
    assert len(read) == SeatScore.objects.filter(gaming_day=last).exclude(player="").count()
    # The states read are the tests the day's seats touch, one row each: not a row a day of history.
    held = leak_state.states_before(last, [s for s in _played_all(last)], protection_config().leak.shares)
    assert len(held.rows) == len(set(held.rows)) <= sum(len(p.tests) for p in held.players.values())


def _played_all(day):
    players = list(SeatScore.objects.filter(gaming_day=day).exclude(player="").values_list("player", flat=True))
    return raising._played(sorted(set(players)), day, raising._dealt_within(day))


@pytest.mark.django_db
def test_a_rerun_of_an_earlier_day_with_a_late_seat_is_read_again_by_the_next_night(table):
    _store_days(table)
    _nights(range(DAYS))
    rerun = FIRST + timedelta(days=2)
    SeatScore.objects.bulk_create(_seat_rows(table, rerun, 99, ["P-reads", "P-late", "P-a"], "D-9", 7))
    raising.day_findings_raise(day=rerun)
    # What followed went on from the day before the late seats: it is dropped, to be read again.
    assert max(LeakStateDay.objects.values_list("gaming_day", flat=True)) == rerun
    assert not LeakTestState.objects.filter(day_from__gt=rerun).exists()
    assert LeakTestState.objects.filter(player="P-late", day_from=rerun).exists()
    after = FIRST + timedelta(days=DAYS)
    assert leak_state.days_to_read_first(after, protection_config().leak.shares) == [
        FIRST + timedelta(days=d) for d in range(3, DAYS)]
    raising.day_findings_raise(day=FIRST + timedelta(days=DAYS - 1))
    assert _without_meetings(_kept_now()) == _expected(_whole_history())


@pytest.mark.django_db
def test_with_nothing_kept_the_first_night_reads_the_history_once(table):
    # As after upgrading: every day before is read in order, kept, and the night goes on from it.
    _store_days(table)
    raising.day_findings_raise(day=FIRST + timedelta(days=DAYS - 1))
    assert _without_meetings(_kept_now()) == _expected(_whole_history())
    assert LeakStateDay.objects.count() == DAYS
    assert ProtectionFinding.objects.filter(code=leak.HOLE_CARDING, player="P-reads").exists()


@pytest.mark.django_db
def test_days_kept_by_an_earlier_design_of_the_tests_are_read_again(table):
    # States made before the companion's test read the pair are not gone on from: the next night
    # reads the history again, and each companion's test stands where the whole history puts it.
    _store_days(table)
    _nights(range(DAYS - 1))
    LeakStateDay.objects.update(design=leak_state.DESIGN - 1)
    LeakTestState.objects.filter(code=leak.COLLUSION).update(state={"stale": True})
    raising.day_findings_raise(day=FIRST + timedelta(days=DAYS - 1))
    assert _without_meetings(_kept_now()) == _expected(_whole_history())
    assert set(LeakStateDay.objects.values_list("design", flat=True)) == {leak_state.DESIGN}
    partnered = [s for s in SeatScore.objects.values_list("partners", flat=True) if s]
    assert partnered  # the stored seats carry their companions' steps, which the pair reads
    pairs = [state for (_, code, _, _), state in _kept_now().items() if code == leak.COLLUSION]
    assert any(state["parts"][leak.PAIR]["days"] and state["partner"][0] for state in pairs)


@pytest.mark.django_db
def test_a_player_met_again_keeps_the_weight_of_his_first_meeting(table):
    _store_days(table)
    _nights(range(DAYS))
    kept = _kept_now()
    whole = {(p, *leak.key_of(t.test)): t.test.weight for p, found in _whole_history().items() for t in found}
    assert {k: s["weight"] for k, s in kept.items()} == whole
    # P-c0 was met on day 0 and again on day 3: one test, its weight from day 0.
    rows = LeakTestState.objects.filter(player="P-a", companion="P-c0").order_by("day_from")
    assert [r.day_from for r in rows] == [FIRST, FIRST + timedelta(days=3)]
    assert rows[0].state["weight"] == rows[1].state["weight"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="one run after another needs PostgreSQL")
def test_two_days_run_at_once_from_two_processes_wait_for_each_other(table):
    # Two connections (threads) run two nights at once; the lock puts one after the other and
    # what is kept is what the whole history gives.
    _store_days(table)
    _nights(range(DAYS - 2))
    errors = []

    def night(d):
        try:
            raising.day_findings_raise(day=FIRST + timedelta(days=d))
        except Exception as error:  # noqa: BLE001 - the thread's failure is the test's
            errors.append(error)
        finally:
            connection.close()
    threads = [threading.Thread(target=night, args=(d,)) for d in (DAYS - 2, DAYS - 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    raising.day_findings_raise(day=FIRST + timedelta(days=DAYS - 1))
    assert _without_meetings(_kept_now()) == _expected(_whole_history())


def test_a_seat_scored_before_the_flop_was_tested_keeps_its_companions_river_steps():
    # Kept then as [chose, q]: every such step was the river's.
    assert partners_from_json({"P-2": [[True, 0.3], [False, 0.6]]}) == {
        "P-2": ((True, 0.3, "river"), (False, 0.6, "river"))}
    kept = {"P-2": ((True, 0.3, "flop"), (False, 0.6, "river"))}
    assert partners_from_json(partners_json(kept)) == kept
