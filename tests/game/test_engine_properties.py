"""Properties of judge_round over generated rounds that keep every rule (RULES.md)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game.progressive import Meters
from game.record import RoundRecord, SeatRecord
from game.rules import BETS, DECISION_MULTIPLES, FOLD, PoolRules, TableRules
from game.settlement import settle_game
from game.verdict import judge_prepared, judge_round, prepare_round

from .engine_rules import SE_50KR, US_30K, US_PROGRESSIVE

ZERO = Decimal(0)
CENT = Decimal("0.01")
DECISIONS = tuple(DECISION_MULTIPLES)
TABLES = (SE_50KR, US_30K)
# Hearts and the high cards of the other suits: dealt from these first, rounds
# are rich in flushes, straight flushes and royals, so awards and reseeds happen.
HOT = tuple(c for c in range(52) if c % 4 == 2 or c >> 2 >= 10)
# The hearts from the eight up, dealt to the board and the first seat: that
# seat holds a royal or a straight flush, with or without a hole card in it.
JACKPOT = tuple(rank * 4 + 2 for rank in range(6, 13))

engine_settings = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def units(rules: TableRules, low: Decimal, high: Decimal) -> st.SearchStrategy[Decimal]:
    return st.integers(int(low / rules.unit), int(high / rules.unit)).map(lambda n: rules.unit * n)


@st.composite
def rounds(
    draw, rules: TableRules, *, ties: bool = False, hot: bool = False, progressive: bool = True
):
    """A round that keeps every rule and limit of ``rules``; no ``paid``."""
    count = draw(st.integers(1, 7))
    numbers = draw(st.lists(st.integers(1, 7), min_size=count, max_size=count, unique=True))
    first = draw(st.sampled_from([(), HOT, JACKPOT])) if hot else ()
    head = draw(st.permutations(first))
    tail = draw(st.permutations([c for c in range(52) if c not in first]))
    if first == JACKPOT:
        deck = head[:5] + tail[:2] + head[5:] + tail[2:]
    else:
        deck = head + tail
    board, dealer = tuple(deck[:5]), tuple(deck[5:7])
    used = set(deck[:7])
    pending = iter(deck[7:])

    def take() -> int:
        card = next(c for c in pending if c not in used)
        used.add(card)
        return card

    seats = []
    for number in numbers:
        if ties and draw(st.booleans()):
            # The dealer's ranks in other suits: the two hands often tie.
            hole = []
            for card in dealer:
                twins = [c for c in range(52) if c >> 2 == card >> 2 and c not in used]
                twin = draw(st.sampled_from(twins)) if twins else take()
                used.add(twin)
                hole.append(twin)
        else:
            hole = [take(), take()]
        ante = draw(units(rules, rules.ante_min, rules.ante_max))
        decision = draw(st.sampled_from(DECISIONS))
        trips = draw(st.one_of(st.just(ZERO), units(rules, rules.trips_min, rules.trips_max)))
        lit = progressive and draw(st.booleans())
        seats.append(
            SeatRecord(
                seat=number, hole=(hole[0], hole[1]), ante=ante, blind=ante, trips=trips,
                play=ante * DECISION_MULTIPLES[decision], decision=decision,
                progressive=US_PROGRESSIVE.wager if lit else ZERO, progressive_lit=lit,
            )
        )
    return RoundRecord(seats=tuple(seats), board=board, dealer_cards=dealer)


def table_rounds(**kwargs):
    # Only a table linked to a pool takes Progressive wagers.
    return st.sampled_from(TABLES).flatmap(
        lambda rules: st.tuples(
            st.just(rules), rounds(rules, progressive=pool_of(rules) is not None, **kwargs)
        )
    )


def pool_of(rules: TableRules) -> PoolRules | None:
    return US_PROGRESSIVE if rules is US_30K else None


def meters_of(rules: TableRules) -> Meters | None:
    return Meters(US_PROGRESSIVE.reseed) if rules is US_30K else None


def judge(rules: TableRules, record: RoundRecord, meters: Meters | None = None):
    return judge_round(record, rules, pool_of(rules), meters or meters_of(rules))


def by_seat(verdict) -> dict[int, dict[str, Decimal]]:
    return {s.seat: s.settled for s in verdict.seats}


@engine_settings
@given(table_rounds())
def test_a_generated_round_keeps_every_rule(case):
    rules, record = case
    verdict = judge(rules, record)
    assert {f.code for f in verdict.findings} <= {"aggregate_limit_applied", "progressive_award"}
    assert verdict.status == "settled"


@engine_settings
@given(table_rounds())
def test_folding_never_wins_the_ante_or_blind(case):
    rules, record = case
    settled = by_seat(judge(rules, record))
    for seat in record.seats:
        if seat.decision == FOLD:
            assert settled[seat.seat]["ante"] == -seat.ante
            assert settled[seat.seat]["blind"] == -seat.blind
            assert settled[seat.seat]["play"] == ZERO


@engine_settings
@given(table_rounds(ties=True))
def test_the_play_follows_the_showdown_and_a_tie_moves_no_money(case):
    rules, record = case
    verdict = judge(rules, record)
    hands = {s.seat: s.hand for s in verdict.seats}
    settled = by_seat(verdict)
    for seat in record.seats:
        if seat.decision == FOLD:
            continue
        result = settled[seat.seat]
        if hands[seat.seat] == verdict.dealer_hand:
            assert (result["ante"], result["blind"], result["play"]) == (ZERO, ZERO, ZERO)
        elif hands[seat.seat] > verdict.dealer_hand:
            assert result["play"] > 0 and result["blind"] >= 0 and result["ante"] >= 0
        else:
            assert result["play"] < 0 and result["blind"] < 0 and result["ante"] <= 0
        if not verdict.dealer_qualifies:
            assert result["ante"] == ZERO


@engine_settings
@given(
    table_rounds(),
    st.sampled_from([Decimal(50), Decimal(100), Decimal(1000), Decimal(5000), Decimal(30000)]),
)
def test_the_aggregate_limit_never_raises_a_win_and_is_never_exceeded(case, limit):
    rules, record = case
    limited_rules = replace(rules, aggregate_limit=limit)
    free = settle_game(record, replace(rules, aggregate_limit=None))
    limited = settle_game(record, limited_rules)
    total = sum((a for s in free.seats.values() for a in s.results.values() if a > 0), ZERO)
    paid = ZERO
    for number, seat in limited.seats.items():
        for bet, amount in seat.results.items():
            unlimited = free.seats[number].results[bet]
            if unlimited > 0:
                assert ZERO <= amount <= unlimited
                paid += amount
            else:
                assert amount == unlimited  # losses and pushes are not touched
    assert paid <= limit
    applied = ["aggregate_limit_applied"] if total > limit else []
    assert [f.code for f in limited.findings] == applied
    if total <= limit:
        assert paid == total
    # Progressive results do not depend on the limit.
    a = judge_round(record, limited_rules, pool_of(rules), meters_of(rules))
    b = judge_round(record, replace(rules, aggregate_limit=None), pool_of(rules), meters_of(rules))
    assert [s.settled["progressive"] for s in a.seats] == [
        s.settled["progressive"] for s in b.seats
    ]
    assert a.events == b.events


@engine_settings
@given(rounds(SE_50KR, progressive=False), st.data())
def test_trips_does_not_depend_on_the_decision(record, data):
    base = settle_game(record, SE_50KR)
    decision = data.draw(st.sampled_from(DECISIONS))
    changed = replace(
        record,
        seats=tuple(
            replace(s, decision=decision, play=s.ante * DECISION_MULTIPLES[decision])
            for s in record.seats
        ),
    )
    other = settle_game(changed, SE_50KR)
    for number, seat in base.seats.items():
        assert other.seats[number].results["trips"] == seat.results["trips"]
        assert other.seats[number].hand == seat.hand


@engine_settings
@given(table_rounds(hot=True))
def test_a_void_round_settles_all_zero_and_moves_no_meter(case):
    rules, record = case
    meters = meters_of(rules)
    verdict = judge(rules, replace(record, void=True), meters)
    assert verdict.status == "void"
    assert verdict.findings == () and verdict.events == ()
    assert verdict.meters_after == meters
    for seat in verdict.seats:
        assert seat.settled == dict.fromkeys(BETS, ZERO)


@engine_settings
@given(table_rounds(hot=True), st.permutations(range(4)))
def test_settlement_is_deterministic_and_blind_to_seat_order_and_suits(case, suits):
    rules, record = case
    verdict = judge(rules, record)
    assert judge(rules, record) == verdict

    reordered = judge(rules, replace(record, seats=tuple(reversed(record.seats))))
    assert reordered.seats == verdict.seats
    assert reordered.meters_after == verdict.meters_after
    assert sorted(reordered.findings, key=repr) == sorted(verdict.findings, key=repr)
    # Contributions and awards alike go from the highest seat down, whatever the body's order.
    assert reordered.events == verdict.events

    def recolour(cards):
        return tuple(c - c % 4 + suits[c % 4] for c in cards)

    recoloured = replace(
        record,
        board=recolour(record.board),
        dealer_cards=recolour(record.dealer_cards),
        seats=tuple(replace(s, hole=recolour(s.hole)) for s in record.seats),
    )
    assert judge(rules, recoloured) == verdict


@engine_settings
@given(table_rounds(hot=True))
def test_paying_what_the_engine_settles_is_verified(case):
    rules, record = case
    verdict = judge(rules, record)
    settled = by_seat(verdict)
    paid = replace(
        record,
        seats=tuple(
            replace(s, paid={k: v for k, v in settled[s.seat].items() if v})
            for s in record.seats
        ),
    )
    again = judge(rules, paid)
    assert again.status == "verified"
    assert again.findings == verdict.findings


@st.composite
def pools(draw):
    ceiling = draw(
        st.one_of(st.none(), st.sampled_from([Decimal(10000), Decimal("10003.50"), Decimal(20000)]))
    )
    reserve_rate = draw(st.sampled_from([ZERO, Decimal("0.05"), Decimal("0.1")]))
    rate = draw(st.sampled_from([Decimal("0.2"), Decimal("0.123"), Decimal("0.5")]))
    pool = replace(US_PROGRESSIVE, ceiling=ceiling, reserve_rate=reserve_rate, rate=rate)
    cents = st.one_of(
        st.sampled_from([0, 1, 999_950, 1_000_000, 1_000_300, 1_999_999, 2_000_000]),
        st.integers(0, 2_500_000),
    ).map(lambda n: Decimal(n) * CENT)
    return pool, Meters(draw(cents), draw(cents), draw(cents))


@engine_settings
@given(rounds(US_30K, hot=True), pools())
def test_the_meter_is_the_sum_of_its_events_and_never_negative(record, pool_and_meters):
    pool, before = pool_and_meters
    verdict = judge_round(record, US_30K, pool, before)
    meter, overflow, reserve = before.meter, before.overflow, before.reserve
    contributed = awarded = reseeded = ZERO
    for event in verdict.events:
        if event.kind == "contribution":
            meter += event.amount
            contributed += event.amount
        elif event.kind == "award":
            meter -= event.amount
            awarded += event.amount
        elif event.kind == "reseed":
            meter += event.amount
            reseeded += event.amount
            reserve -= min(reserve, event.amount)
        elif event.kind == "overflow":
            overflow += event.amount
        elif event.kind == "reserve":
            reserve += event.amount
        else:
            assert event.kind == "fixed_award"
        assert event.amount >= 0
        assert (event.meter, event.overflow, event.reserve) == (meter, overflow, reserve)
        assert event.meter >= 0 and event.reserve >= 0
        if pool.ceiling is not None and event.kind == "contribution":
            assert event.meter <= max(pool.ceiling, before.meter)
    after = verdict.meters_after
    assert after.meter == before.meter + contributed - awarded + reseeded
    assert (after.meter, after.overflow, after.reserve) == (meter, overflow, reserve)
    lit = [s for s in record.seats if s.progressive_lit and s.progressive]
    assert [e.seat for e in verdict.events if e.kind == "contribution"] == sorted(
        (s.seat for s in lit), reverse=True
    )
    # A lit wager is always collected: its result is award − wager.
    awards = {e.seat: e.amount for e in verdict.events if e.kind in ("award", "fixed_award")}
    for seat in verdict.seats:
        wager = next(s.progressive for s in record.seats if s.seat == seat.seat)
        expected = awards.get(seat.seat, ZERO) - wager if wager else ZERO
        assert seat.settled["progressive"] == expected


@engine_settings
@given(table_rounds(hot=True), st.sampled_from(["10000.00", "150000.00", "30000.00"]))
def test_a_round_prepared_before_the_meter_is_known_is_judged_as_a_whole_round(case, meter):
    # The service prepares a round before it locks the pool's meter, and
    # finishes it under the lock: the verdict must be judge_round's at that meter.
    rules, record = case
    meters = Meters(Decimal(meter)) if pool_of(rules) else None
    ready = prepare_round(record, rules)
    assert judge_prepared(ready, pool_of(rules), meters) == judge(rules, record, meters)
    with pytest.raises(ValueError, match="judged already"):
        judge_prepared(ready, pool_of(rules), meters)
