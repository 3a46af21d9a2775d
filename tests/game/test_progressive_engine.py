"""The Progressive side bet as RULES.md and PROGRESSIVE.md lay it out, on us-progressive."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from game.evaluator import CATEGORY_INDEX, category_of, evaluate_five
from game.progressive import Meters, settle_progressive, winning_line
from game.verdict import judge_round

from .engine_rounds import cards, deal, events, results, seat
from .engine_rules import US_30K, US_PROGRESSIVE, US_PROGRESSIVE_LINES

D = Decimal
DEALER = "4s 4c"
START = Meters(D("10000.00"))
LINE = {n: line for n, line in enumerate(US_PROGRESSIVE_LINES, start=1)}


def lit(number: int, hole: str, **kwargs):
    return seat(number, hole, ante="5", progressive="5", **kwargs)


def line_of(board: str, hole: str):
    b = cards(board)
    return winning_line(US_PROGRESSIVE_LINES, b, cards(hole), category_of(evaluate_five(b)))


def test_the_shipped_pool_is_progressive_md():
    assert [(l.category, l.qualifier, l.kind, l.amount) for l in US_PROGRESSIVE_LINES] == [
        (CATEGORY_INDEX["royal_flush"], "hole", "percent", D(100)),
        (CATEGORY_INDEX["straight_flush"], "hole", "percent", D(10)),
        (CATEGORY_INDEX["royal_flush"], "board", "fixed", D(1000)),
        (CATEGORY_INDEX["four_of_a_kind"], "any", "fixed", D(300)),
        (CATEGORY_INDEX["full_house"], "any", "fixed", D(25)),
        (CATEGORY_INDEX["flush"], "any", "fixed", D(20)),
        (CATEGORY_INDEX["straight"], "any", "fixed", D(15)),
    ]
    assert LINE[1].resets_meter and not any(LINE[n].resets_meter for n in range(2, 8))


@pytest.mark.parametrize(
    "board,hole,line",
    [
        ("Qh Jh Th 2c 3d", "Ah Kh", 1),  # royal with both hole cards
        ("Kh Qh Jh Th 2c", "Ah 3d", 1),  # royal with one hole card
        ("9h 8h 7h 2c Kd", "6h 5h", 2),  # straight flush with hole cards
        ("Ah 2h 3h 4h Kc", "5h 9c", 2),  # the steel wheel with a hole card
        ("Ah Kh Qh Jh Th", "2c 3d", 3),  # royal on the board
        ("Ah Kh Qh Jh Th", "Kc Kd", 3),
        ("Ah Kh Qh Jh Th", "9h 2c", 2),  # ...but the 9h makes a straight flush with it
        ("9h 8h 7h 6h 5h", "2c 3d", 4),  # straight flush on the board alone
        ("9h 8h 7h 6h 5h", "Th 2c", 2),  # extended by a hole card
        ("9h 8h 7h 6h 5h", "4h 2c", 2),  # a lower straight flush still uses a hole card
        ("9h 9d 7h 2c Kd", "9s 9c", 4),  # four of a kind
        ("9h 9d 9s 9c Kd", "2c 3d", 4),  # four of a kind on the board: qualifier any
        ("9h 9d 7h 2c Kd", "9s 7c", 5),  # full house
        ("Ah 9h 7h 2c Kd", "4h 3h", 6),  # flush
        ("Ah 9h 7h 4h 2h", "2c 3d", 6),  # flush on the board
        ("9h 8d 7h 2c Kd", "6s 5c", 7),  # straight
        ("9h 8d 7c 6s 5h", "2c 2d", 7),  # straight on the board
        ("Ah 2c 3d 4s Kd", "5h 9c", 7),  # the wheel
        ("9h 8d 7h 2c Kd", "9s 9c", None),  # three of a kind pays nothing
        ("9h 8d 7h 2c Kd", "9s 8c", None),
        ("9h 8d 6h 2c Kd", "As 5c", None),
    ],
)
def test_each_seat_wins_the_highest_line_it_satisfies(board, hole, line):
    assert line_of(board, hole) == (LINE[line] if line else None)


def award_of(board: str, hole: str, meters: Meters = START):
    record = deal(board, DEALER, lit(1, hole))
    return settle_progressive(record, US_PROGRESSIVE, meters)


def test_a_royal_with_a_hole_card_takes_the_whole_meter_and_reseeds():
    out = award_of("Qh Jh Th 2c 3d", "Ah Kh")
    assert events(out.events) == [
        ("contribution", 1, D("1.00"), D("10001.00")),
        ("award", 1, D("10001.00"), D("0.00")),
        ("reseed", 1, D("10000.00"), D("10000.00")),
    ]
    assert out.results[1] == D("9996.00")
    assert out.meters == Meters(D("10000.00"))
    assert [f.code for f in out.findings] == ["progressive_award"]
    assert out.findings[0].expected == D("10001.00")


def test_a_straight_flush_with_a_hole_card_takes_ten_percent_rounded_down():
    out = award_of("9h 8h 7h 2c Kd", "6h 5h", Meters(D("10003.33")))
    # 10 % of 10,004.33 is 1,000.433: the player gets 1,000.43.
    assert events(out.events) == [
        ("contribution", 1, D("1.00"), D("10004.33")),
        ("award", 1, D("1000.43"), D("9003.90")),
    ]
    assert out.results[1] == D("995.43")
    assert out.meters.meter == D("9003.90")


def test_a_fixed_award_is_paid_by_the_house_and_the_meter_only_grows():
    out = award_of("9h 9d 7h 2c Kd", "9s 7c")
    assert events(out.events) == [
        ("contribution", 1, D("1.00"), D("10001.00")),
        ("fixed_award", 1, D(25), D("10001.00")),
    ]
    assert out.results[1] == D(20)
    assert out.meters.meter == D("10001.00")


def test_no_line_loses_the_wager_into_the_meter():
    out = award_of("9h 8d 7h 2c Kd", "9s 9c")
    assert events(out.events) == [("contribution", 1, D("1.00"), D("10001.00"))]
    assert out.results[1] == D(-5)
    assert out.findings == []


def test_a_royal_on_the_board_pays_line_3_to_every_lit_seat_but_a_straight_flush():
    record = deal(
        "Ah Kh Qh Jh Th", "2c 3c",
        lit(1, "2d 3d"), lit(3, "9h 4c"), lit(5, "Kc Kd"),
        seat(7, "5s 6s", progressive="5", lit=False),
    )
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, START)
    assert events(verdict) == [
        ("contribution", 5, D("1.00"), D("10001.00")),
        ("contribution", 3, D("1.00"), D("10002.00")),
        ("contribution", 1, D("1.00"), D("10003.00")),
        ("fixed_award", 5, D(1000), D("10003.00")),
        ("award", 3, D("1000.30"), D("9002.70")),
        ("fixed_award", 1, D(1000), D("9002.70")),
    ]
    settled = results(verdict)
    assert [settled[n]["progressive"] for n in (1, 3, 5, 7)] == [D(995), D("995.30"), D(995), D(0)]
    assert verdict.meters_after.meter == D("9002.70")


def test_a_straight_flush_on_the_board_alone_pays_line_4():
    record = deal("9h 8h 7h 6h 5h", "2c 3c", lit(1, "2d 3d"), lit(2, "Th Ac"))
    out = settle_progressive(record, US_PROGRESSIVE, START)
    assert events(out.events)[2:] == [
        ("award", 2, D("1000.20"), D("9001.80")),
        ("fixed_award", 1, D(300), D("9001.80")),
    ]
    assert out.results == {1: D(295), 2: D("995.20")}


def test_progressive_md_worked_order():
    # Meter 10,000.00; seats 2, 5 and 6 lit; seat 6 a royal with a hole card, seat 2 a full house.
    record = deal(
        "Qh Jh Th 7c 7d", DEALER, lit(2, "7s Qc"), lit(5, "3s 4c"), lit(6, "Ah Kh"),
    )
    out = settle_progressive(record, US_PROGRESSIVE, START)
    assert events(out.events) == [
        # 1. Contributions: 3 × 1.00 → meter 10,003.00 (highest seat first, as the awards).
        ("contribution", 6, D("1.00"), D("10001.00")),
        ("contribution", 5, D("1.00"), D("10002.00")),
        ("contribution", 2, D("1.00"), D("10003.00")),
        # 2. Seat 6: 100 % → award 10,003.00, meter 0.00; reseed → meter 10,000.00.
        ("award", 6, D("10003.00"), D("0.00")),
        ("reseed", 6, D("10000.00"), D("10000.00")),
        # 3. Seat 5: nothing. 4. Seat 2: fixed 25; meter stays 10,000.00.
        ("fixed_award", 2, D(25), D("10000.00")),
    ]
    assert out.results == {2: D(20), 5: D(-5), 6: D("9998.00")}
    assert out.meters == Meters(D("10000.00"))


def test_contributions_then_awards_each_from_the_highest_seat_and_reseed_at_once():
    record = deal(
        "Qh Jh Th 2c 3d", DEALER,
        lit(2, "Ah Kh"), lit(6, "9h 8h"), lit(4, "5h 7h"), lit(1, "2d 2s"),
    )
    out = settle_progressive(record, US_PROGRESSIVE, START)
    assert events(out.events) == [
        ("contribution", 6, D("1.00"), D("10001.00")),
        ("contribution", 4, D("1.00"), D("10002.00")),
        ("contribution", 2, D("1.00"), D("10003.00")),
        ("contribution", 1, D("1.00"), D("10004.00")),
        ("award", 6, D("1000.40"), D("9003.60")),
        ("fixed_award", 4, D(20), D("9003.60")),
        ("award", 2, D("9003.60"), D("0.00")),
        ("reseed", 2, D("10000.00"), D("10000.00")),
    ]
    assert [f.seat for f in out.findings] == [6, 4, 2]


def test_a_reseed_before_a_lower_seats_percentage_award_is_what_that_seat_shares():
    # Seat 6's royal resets the meter; seat 3's straight flush then takes 10 % of the reseed.
    record = deal("Qh Jh Th 9h 2c", DEALER, lit(6, "Ah Kh"), lit(3, "8h 3d"))
    out = settle_progressive(record, US_PROGRESSIVE, START)
    assert events(out.events)[2:] == [
        ("award", 6, D("10002.00"), D("0.00")),
        ("reseed", 6, D("10000.00"), D("10000.00")),
        ("award", 3, D("1000.00"), D("9000.00")),
    ]


def test_an_unlit_wager_contributes_nothing_and_wins_nothing():
    record = deal("Qh Jh Th 2c 3d", DEALER, seat(1, "Ah Kh", ante="5", progressive="5", lit=False))
    out = settle_progressive(record, US_PROGRESSIVE, START)
    assert out.events == [] and out.results == {1: D(0)}
    assert out.meters == START
    assert [f.code for f in out.findings] == ["progressive_not_lit"]


def test_a_lit_sensor_without_a_wager_is_nothing():
    record = deal("Qh Jh Th 2c 3d", DEALER, seat(1, "Ah Kh", ante="5", lit=True))
    out = settle_progressive(record, US_PROGRESSIVE, START)
    assert out.events == [] and out.findings == [] and out.results == {1: D(0)}


def test_a_void_round_moves_no_meter():
    record = deal("Qh Jh Th 2c 3d", DEALER, lit(1, "Ah Kh"), void=True)
    out = settle_progressive(record, US_PROGRESSIVE, START)
    assert out.events == [] and out.findings == [] and out.results == {1: D(0)}
    assert out.meters == START


def test_a_contribution_is_rate_times_wager_rounded_down():
    pool = replace(US_PROGRESSIVE, rate=D("0.123"))
    out = settle_progressive(deal("9h 8d 7h 2c Kd", DEALER, lit(1, "9s 9c")), pool, START)
    assert events(out.events) == [("contribution", 1, D("0.61"), D("10000.61"))]  # 0.615


def test_a_percentage_award_of_a_fractional_meter_is_rounded_down():
    pool = replace(US_PROGRESSIVE, rate=D(0))
    record = deal("9h 8h 7h 2c Kd", DEALER, lit(1, "6h 5h"))
    out = settle_progressive(record, pool, Meters(D("0.09")))
    assert events(out.events) == [
        ("contribution", 1, D("0.00"), D("0.09")),
        ("award", 1, D("0.00"), D("0.09")),  # 10 % of 0.09 is 0.009: nothing
    ]


def test_the_ceiling_sends_contributions_to_overflow():
    pool = replace(US_PROGRESSIVE, ceiling=D("10001.50"))
    record = deal("9h 8d 7h 2c Kd", DEALER, lit(1, "9s 9c"), lit(2, "As 3c"), lit(3, "Ac 3d"))
    out = settle_progressive(record, pool, Meters(D("10000.00")))
    assert [(e.kind, e.seat, e.amount, e.meter, e.overflow) for e in out.events] == [
        ("contribution", 3, D("1.00"), D("10001.00"), D(0)),
        ("contribution", 2, D("0.50"), D("10001.50"), D(0)),
        ("overflow", 2, D("0.50"), D("10001.50"), D("0.50")),
        ("contribution", 1, D("0.00"), D("10001.50"), D("0.50")),
        ("overflow", 1, D("1.00"), D("10001.50"), D("1.50")),
    ]
    assert out.meters == Meters(D("10001.50"), overflow=D("1.50"))
    assert out.results == {1: D(-5), 2: D(-5), 3: D(-5)}


def test_a_meter_at_its_ceiling_still_pays_its_percentage_awards():
    pool = replace(US_PROGRESSIVE, ceiling=D("10000.00"))
    out = settle_progressive(
        deal("9h 8h 7h 2c Kd", DEALER, lit(1, "6h 5h")), pool, Meters(D("10000.00"), D("7.00")),
    )
    assert [(e.kind, e.amount, e.meter, e.overflow) for e in out.events] == [
        ("contribution", D("0.00"), D("10000.00"), D("7.00")),
        ("overflow", D("1.00"), D("10000.00"), D("8.00")),
        ("award", D("1000.00"), D("9000.00"), D("8.00")),
    ]


def test_the_reserve_rate_feeds_the_hidden_meter():
    pool = replace(US_PROGRESSIVE, reserve_rate=D("0.10"))
    record = deal("9h 8d 7h 2c Kd", DEALER, lit(1, "9s 9c"), lit(2, "As 3c"))
    out = settle_progressive(record, pool, Meters(D("10000.00"), reserve=D("100.00")))
    assert [(e.kind, e.seat, e.amount, e.meter, e.reserve) for e in out.events] == [
        ("contribution", 2, D("1.00"), D("10001.00"), D("100.00")),
        ("reserve", 2, D("0.50"), D("10001.00"), D("100.50")),
        ("contribution", 1, D("1.00"), D("10002.00"), D("100.50")),
        ("reserve", 1, D("0.50"), D("10002.00"), D("101.00")),
    ]
    assert out.meters == Meters(D("10002.00"), reserve=D("101.00"))


@pytest.mark.parametrize(
    "reserve_before,reserve_after",
    [(D("25000.00"), D("15000.50")), (D("3000.00"), D("0.00")), (D("0"), D("0"))],
)
def test_a_reseed_is_funded_from_the_reserve_as_far_as_it_goes(reserve_before, reserve_after):
    pool = replace(US_PROGRESSIVE, reserve_rate=D("0.10"))
    out = settle_progressive(
        deal("Qh Jh Th 2c 3d", DEALER, lit(1, "Ah Kh")), pool,
        Meters(D("10000.00"), reserve=reserve_before),
    )
    kinds = [e.kind for e in out.events]
    assert kinds[-2:] == ["award", "reseed"]
    reseed = out.events[-1]
    assert (reseed.amount, reseed.meter) == (D("10000.00"), D("10000.00"))
    assert reseed.reserve == reserve_after
    assert out.meters == Meters(D("10000.00"), reserve=reserve_after)


def test_the_meter_ledger_adds_up_and_never_goes_negative():
    record = deal("Qh Jh Th 2c 3d", DEALER, lit(2, "Ah Kh"), lit(6, "9h 8h"), lit(4, "5h 7h"))
    before = Meters(D("123.45"))
    out = settle_progressive(record, US_PROGRESSIVE, before)
    delta = {
        "contribution": 1, "award": -1, "reseed": 1,
        "fixed_award": 0, "overflow": 0, "reserve": 0,
    }
    meter = before.meter
    for e in out.events:
        meter += delta[e.kind] * e.amount
        assert e.meter == meter >= 0
    assert out.meters.meter == meter


def test_no_pool_or_no_meters_settles_no_progressive():
    record = deal("Qh Jh Th 2c 3d", DEALER, lit(1, "Ah Kh"))
    out = settle_progressive(record, None, None)
    assert out.events == [] and out.results == {1: D(0)}
    assert [f.code for f in out.findings] == ["progressive_wager_invalid"]


@pytest.mark.parametrize("order", [(2, 6, 4, 1), (1, 2, 4, 6), (6, 4, 2, 1), (4, 1, 6, 2)])
def test_the_bodys_seat_order_never_changes_what_a_round_records(order):
    # RULES.md: contributions, then awards, each from the highest seat down.
    hole = {2: "Ah Kh", 6: "9h 8h", 4: "5h 7h", 1: "2d 2s"}
    seats = {n: lit(n, hole[n]) for n in hole}
    seats[4] = seat(4, hole[4], ante="5", progressive="10")  # lit, but not the pool's wager
    seats[1] = seat(1, hole[1], ante="5", progressive="5", lit=False)
    out = settle_progressive(deal("Qh Jh Th 2c 3d", DEALER, *(seats[n] for n in order)), US_PROGRESSIVE, START)
    assert events(out.events) == [
        ("contribution", 6, D("1.00"), D("10001.00")),
        ("contribution", 4, D("2.00"), D("10003.00")),
        ("contribution", 2, D("1.00"), D("10004.00")),
        ("award", 6, D("1000.40"), D("9003.60")),
        ("award", 2, D("9003.60"), D("0.00")),
        ("reseed", 2, D("10000.00"), D("10000.00")),
    ]
    # The wager's own findings come highest seat first too, then the awards.
    assert [(f.code, f.seat) for f in out.findings] == [
        ("progressive_wager_invalid", 4), ("progressive_not_lit", 1),
        ("progressive_award", 6), ("progressive_award", 2),
    ]
    assert out.results == {1: D(0), 2: D("8998.60"), 4: D(-10), 6: D("995.40")}
