"""The largest amounts the contract allows, settled exactly (ROUND_RECORD.md "amounts").

A wager has at most 12 integer digits, a ``paid`` amount at most 15 (a 500:1
Blind on the largest wager); everything that follows is settled exactly and
fits the money columns (``infra.models.MONEY``).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

import pytest
from django.core.exceptions import ValidationError
from django.db import models

from game import findings as f
from game.progressive import Meters
from game.settlement import SeatSettlement, _apply_aggregate_limit
from game.verdict import judge_round
from infra.models import MONEY

from tests.game.engine_rounds import codes, deal, results, seat
from tests.game.engine_rules import SE_50KR, US_30K, US_PROGRESSIVE

D = Decimal
CENT = D("0.01")
# The largest whole number of 50 kr units with 12 integer digits (999,999,999,999.99 is not one).
LARGEST = D("999999999950")
# se-50kr with its limits opened to the largest wager.
OPEN = replace(SE_50KR, ante_max=LARGEST, trips_max=LARGEST)

# Ah Kh Qh Jh on the board and the dealer's pair of twos (it qualifies); every
# seat beats it. Seven seats at the largest wager, each a different hand.
BOARD = "Ah Kh Qh Jh 2c"
DEALER = "2d 5s"
HOLES = {
    7: "Th 9c",  # royal flush: Blind 500, Trips 50
    6: "Ac Ad",  # three aces: Blind pushes, Trips 3
    5: "Tc 9d",  # straight: Blind 1, Trips 4
    4: "5h 6h",  # flush: Blind 3:2, Trips 7
    3: "Kc Kd",  # three kings
    2: "Qc Qd",  # three queens
    1: "Jc Jd",  # three jacks
}
# Settled in full, per seat: (Ante, Blind, Play, Trips) as multiples of the wager.
MULTIPLES = {
    7: (1, 500, 1, 50), 6: (1, 0, 1, 3), 5: (1, 1, 1, 4), 4: (1, D("1.5"), 1, 7),
    3: (1, 0, 1, 3), 2: (1, 0, 1, 3), 1: (1, 0, 1, 3),
}


def largest_seat(number: int, wager: Decimal = LARGEST, **kwargs):
    # river_1x: the Play equals the Ante, so it too stays within 12 integer digits.
    text = str(wager)
    return seat(number, HOLES[number], ante=text, trips=text, decision="river_1x", **kwargs)


def full_settlement(wager: Decimal = LARGEST) -> dict[int, dict[str, Decimal]]:
    return {
        n: dict(zip(("ante", "blind", "play", "trips"), (wager * m for m in multiples)))
        for n, multiples in MULTIPLES.items()
    }


def fits_a_money_column(amount: Decimal) -> bool:
    try:
        models.DecimalField(**MONEY).clean(amount, None)
    except ValidationError:
        return False
    # And reads back at the column's scale within its precision (SQLite's
    # converter quantises so; a value wider than the column is an error there).
    return amount.quantize(CENT, context=models.DecimalField(**MONEY).context) == amount


def test_a_royal_flush_on_the_largest_wager_pays_500_to_1_exactly():
    verdict = judge_round(deal(BOARD, DEALER, largest_seat(7)), OPEN)
    assert results(verdict)[7] == {
        "ante": D("999999999950"),
        "blind": D("499999999975000"),  # 15 integer digits: the largest paid amount
        "play": D("999999999950"),
        "trips": D("49999999997500"),
        "progressive": D(0),
    }
    assert verdict.status == "settled" and verdict.findings == ()


def test_the_largest_wager_paid_exactly_is_verified_and_a_cent_off_is_found_exactly():
    exact = {"ante": "999999999950", "blind": "499999999975000", "play": "999999999950",
             "trips": "49999999997500"}
    assert judge_round(deal(BOARD, DEALER, largest_seat(7, paid=exact)), OPEN).status == "verified"

    short = {**exact, "blind": "499999999974999.99"}
    verdict = judge_round(deal(BOARD, DEALER, largest_seat(7, paid=short)), OPEN)
    [finding] = verdict.findings
    assert (finding.code, finding.bet) == (f.PAYOUT_MISMATCH, "blind")
    assert (finding.expected, finding.claimed) == (D("499999999975000"), D("499999999974999.99"))


def test_seven_seats_at_the_largest_wager_settle_exactly():
    record = deal(BOARD, DEALER, *(largest_seat(n) for n in sorted(HOLES, reverse=True)))
    verdict = judge_round(record, OPEN)
    settled = results(verdict)
    assert {n: {bet: settled[n][bet] for bet in ("ante", "blind", "play", "trips")} for n in settled} == (
        full_settlement()
    )
    assert settled[4]["blind"] == D("1499999999925")  # 3:2 on the largest wager, to the cent
    assert all(fits_a_money_column(a) for bets in settled.values() for a in bets.values())


def exact_share(amount: Decimal, limit: Decimal, total: Decimal) -> Decimal:
    """``amount × limit ÷ total`` rounded down to the cent, in exact fractions."""
    cents = Fraction(amount) * Fraction(limit) / Fraction(total) * 100
    return D(cents.numerator // cents.denominator) * CENT


@pytest.mark.parametrize("limit", ["30000", "999999999999.99", "123456789012.34", "77318333144.52"])
def test_the_aggregate_limit_scales_seven_largest_seats_exactly(limit):
    limit = D(limit)
    record = deal(BOARD, DEALER, *(largest_seat(n) for n in HOLES))
    verdict = judge_round(record, replace(OPEN, aggregate_limit=limit))
    full = full_settlement()
    total = sum(a for bets in full.values() for a in bets.values() if a > 0)
    assert total == D("589499999970525.0")  # Σ over seven seats: 589.5 wagers
    [finding] = verdict.findings
    assert (finding.code, finding.expected, finding.claimed) == (f.AGGREGATE_LIMIT_APPLIED, limit, total)
    assert fits_a_money_column(finding.claimed)
    settled = results(verdict)
    for n, bets in full.items():
        for bet, amount in bets.items():
            assert settled[n][bet] == (exact_share(amount, limit, total) if amount > 0 else amount), (n, bet)
    assert sum(a for bets in settled.values() for a in bets.values() if a > 0) <= limit


def test_a_share_that_is_a_whole_cent_is_paid_in_full():
    # Two equal wins, 15 integer digits each, over a limit: each is owed exactly
    # half of it. Multiplied out in the decimal context's 28 digits, the product
    # is rounded and its quotient falls just short of the cent, floored away.
    win = D("396575639736144.47")
    seats = {
        n: SeatSettlement(n, None, {"ante": D(0), "blind": win, "play": D(0), "trips": D(0)})
        for n in (1, 2)
    }
    limit = D("77318333144.52")
    [finding] = _apply_aggregate_limit(seats, replace(US_30K, aggregate_limit=limit))
    assert finding.claimed == 2 * win
    assert [s.results["blind"] for s in seats.values()] == [D("38659166572.26")] * 2


def test_a_royal_flush_on_a_wager_of_2000000050_pays_1000000025000():
    record = deal(BOARD, DEALER, largest_seat(7, D("2000000050")))
    verdict = judge_round(record, OPEN)
    assert results(verdict)[7] == {
        "ante": D("2000000050"), "blind": D("1000000025000"), "play": D("2000000050"),
        "trips": D("100000002500"), "progressive": D(0),
    }
    assert all(fits_a_money_column(a) for a in results(verdict)[7].values())


def test_the_largest_wager_beside_a_progressive_meter_of_eighteen_digits():
    # The meter holds what the column holds; a 100 % award takes it to the cent.
    pool = replace(US_PROGRESSIVE, wager=D(5))
    meters = Meters(D("999999999999999998.00"))
    record = deal(BOARD, DEALER, largest_seat(7, progressive="5"))
    verdict = judge_round(record, replace(OPEN, currency="USD"), pool, meters)
    assert [(e.kind, e.amount, e.meter) for e in verdict.events] == [
        ("contribution", D("1.00"), D("999999999999999999.00")),
        ("award", D("999999999999999999.00"), D("0.00")),
        ("reseed", D("10000.00"), D("10000.00")),
    ]
    assert results(verdict)[7]["progressive"] == D("999999999999999994.00")
    assert all(fits_a_money_column(e.amount) and fits_a_money_column(e.meter) for e in verdict.events)
    assert codes(verdict) == [f.PROGRESSIVE_AWARD]
