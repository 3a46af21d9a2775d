"""Pay-table conformance: the multiple a table pays, read from what its dealers paid."""

from __future__ import annotations

import random
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from game import judge_round
from game.evaluator import FLUSH, FULL_HOUSE, STRAIGHT
from game.protection.conformance import (
    ConformanceSettings,
    PayObservation,
    fits,
    pay_lines,
    pay_observations,
    pay_table_mismatches,
    simplest_multiple,
)
from game.settlement import floor_to
from tests.game.engine_rounds import deal, seat
from tests.game.engine_rules import SE_50KR, US_30K

CENT, KRONA = Decimal("0.01"), Decimal(1)


def observation(wager, claimed, *, bet="trips", category=FULL_HOUSE, configured="8",
                minor=CENT, table="t1") -> PayObservation:
    return PayObservation(
        table, bet, category, Decimal(wager), Decimal(claimed), Decimal(configured),
        minor, "SEK",
    )


def paying(multiple: str, wagers, minor=CENT, **kwargs) -> list[PayObservation]:
    """What a table paying ``multiple`` pays on each wager, rounded down."""
    return [
        observation(w, floor_to(Decimal(w) * Decimal(multiple), minor), minor=minor, **kwargs)
        for w in wagers
    ]


def test_a_table_paying_nine_on_the_trips_full_house_against_eight_configured():
    found = paying("9", ["50", "100", "150", "250"]) + paying(
        "4", ["50", "100"], category=STRAIGHT, configured="4",
    )
    (mismatch,) = pay_table_mismatches(found)
    assert (mismatch.table, mismatch.bet, mismatch.category) == ("t1", "trips", FULL_HOUSE)
    assert (mismatch.configured, mismatch.observed) == (Decimal(8), Decimal(9))
    assert (mismatch.observations, mismatch.fit_observed, mismatch.fit_configured) == (4, 4, 0)
    assert mismatch.share == 1.0
    assert mismatch.examples == (
        (Decimal(50), Decimal(450)), (Decimal(100), Decimal(900)), (Decimal(150), Decimal(1350)),
    )


def test_the_conforming_lines_are_reported_too():
    lines = pay_lines(paying("4", ["50", "100"], category=STRAIGHT, configured="4"))
    (line,) = lines
    assert (line.observed, line.fit_observed, line.fit_observed_only) == (Decimal(4), 2, 0)
    assert not line.differs(ConformanceSettings())


def test_occasional_random_errors_raise_nothing():
    rng = random.Random(7)
    found = []
    for _ in range(300):
        wager = Decimal(50 * rng.randint(1, 20))
        claimed = wager * 8
        if rng.random() < 0.05:  # a one-off mistake: another line, or an odd amount
            claimed = rng.choice([wager * 9, wager * 7, claimed + 50, claimed - 5])
        found.append(observation(wager, claimed))
    assert pay_table_mismatches(found) == []
    (line,) = pay_lines(found)
    assert line.observed == Decimal(8) and line.share > 0.9


def test_a_minority_paying_another_multiple_is_not_the_table():
    found = paying("9", ["50", "100", "150"]) + paying("8", ["50", "100", "200", "250"])
    assert pay_table_mismatches(found) == []
    # The check can fire: once the nines are the majority, they are the table's pay.
    found += paying("9", ["300", "350"])
    (mismatch,) = pay_table_mismatches(found)
    assert (mismatch.observed, mismatch.fit_observed, mismatch.observations) == (9, 5, 9)


def test_another_multiple_must_fit_more_than_half_of_the_observations():
    # Nines fit 4 of 9: more than the eights, fewer than half (the rest are one-off errors).
    found = paying("9", ["50", "100", "150", "200"]) + paying("8", ["50", "100"])
    found += [observation("50", "123.45"), observation("100", "5"), observation("150", "-150")]
    (line,) = pay_lines(found)
    assert (line.observed, line.fit_observed, line.observations) == (Decimal(9), 4, 9)
    assert pay_table_mismatches(found) == []
    assert len(pay_table_mismatches(found, ConformanceSettings(majority=0.4))) == 1


def test_too_few_observations_are_no_case():
    found = paying("9", ["50", "100"])
    assert pay_table_mismatches(found) == []
    assert len(pay_table_mismatches(found, ConformanceSettings(min_observations=2))) == 1


def test_a_three_to_two_flush_on_odd_wagers_conforms_whatever_the_rounding():
    flush = {"bet": "blind", "category": FLUSH, "configured": "1.5"}
    whole = paying("1.5", ["5", "7", "9", "11", "13"], minor=KRONA, **flush)
    assert [o.claimed for o in whole] == [7, 10, 13, 16, 19]
    cents = paying("1.5", ["0.05", "0.15", "1.01", "3.33"], minor=CENT, table="t2", **flush)
    assert [str(o.claimed) for o in cents] == ["0.07", "0.22", "1.51", "4.99"]
    assert pay_table_mismatches(whole + cents) == []
    assert [(line.table, line.observed, line.share) for line in pay_lines(whole + cents)] == [
        ("t1", Decimal("1.5"), 1.0), ("t2", Decimal("1.5"), 1.0),
    ]


def test_a_three_to_two_flush_paid_where_even_money_is_configured_is_recognised():
    flush = {"bet": "blind", "category": FLUSH, "configured": "1"}
    (mismatch,) = pay_table_mismatches(paying("1.5", ["5", "7", "9", "11"], minor=KRONA, **flush))
    # 7 on 5 fits 1.4 as well; only the other wagers tell 3:2 apart.
    assert (mismatch.observed, mismatch.fit_observed) == (Decimal("1.5"), 4)


def test_an_observation_the_configured_line_explains_is_read_as_the_configured_line():
    # 7 on 5 at whole kronor: 1.4 fits as well as the configured 3:2, and is no evidence.
    (line,) = pay_lines([observation("5", "7", category=FLUSH, configured="1.5", minor=KRONA)])
    assert (line.observed, line.fit_configured, line.fit_observed_only) == (Decimal("1.5"), 1, 0)


def test_the_simplest_multiple_reads_through_the_floor():
    assert simplest_multiple(Decimal(5), Decimal(7), KRONA) == Decimal("1.4")
    assert simplest_multiple(Decimal(7), Decimal(10), KRONA) == Decimal("1.5")
    assert simplest_multiple(Decimal(50), Decimal(450), CENT) == Decimal(9)
    assert simplest_multiple(Decimal(50), Decimal(0), CENT) == Decimal(0)
    assert simplest_multiple(Decimal(50), Decimal(-50), CENT) is None
    assert fits(Decimal("1.5"), Decimal(5), Decimal(7), KRONA)
    assert not fits(Decimal("1.4"), Decimal(7), Decimal(10), KRONA)


PAYS = st.sampled_from(["1", "1.5", "1.2", "2.5", "3", "7", "8", "9", "10", "50", "500"])


@given(st.integers(1, 10**7), PAYS, st.sampled_from([CENT, KRONA]))
def test_what_a_line_pays_is_read_back_as_a_multiple_that_fits(units, pay, minor):
    wager, multiple = units * minor, Decimal(pay)
    claimed = floor_to(wager * multiple, minor)
    read = simplest_multiple(wager, claimed, minor)
    assert fits(read, wager, claimed, minor) and fits(multiple, wager, claimed, minor)
    # The line's own multiple fits, so the simplest has no more places than it.
    assert -read.as_tuple().exponent <= max(0, -multiple.as_tuple().exponent)


# Observations from judged rounds.

FLUSH_BOARD = "9h 8h 7h 2c Kd"  # "Ah 3h" makes an ace-high flush


def test_a_judged_round_gives_its_winning_lines():
    record = deal(
        FLUSH_BOARD, "2d 3s",
        seat(1, "Ah 3h", trips="50", paid={"ante": "100", "blind": "150", "play": "400",
                                          "trips": "350"}),
        seat(2, "Ks Qc", trips="50", paid={"ante": "100", "blind": "0", "play": "400",
                                          "trips": "-50"}),
        seat(3, "Qh 4h", decision="fold", paid={"ante": "-100", "blind": "-100"}),  # a flush
        seat(4, "Jh 5h"),  # a flush, but its payment was not reported
    )
    found = pay_observations("t1", record, judge_round(record, SE_50KR), SE_50KR)
    assert [(o.bet, o.category, o.wager, o.claimed, o.configured) for o in found] == [
        ("blind", FLUSH, Decimal(100), Decimal(150), Decimal("1.5")),
        ("trips", FLUSH, Decimal(50), Decimal(350), Decimal(7)),
    ]
    assert {(o.table, o.currency, o.minor_unit) for o in found} == {("t1", "SEK", CENT)}


def test_a_round_with_a_duplicated_card_is_no_evidence():
    record = deal(FLUSH_BOARD, "2d 3s", seat(1, "Ah 9h", paid={"blind": "150"}))
    assert pay_observations("t1", record, judge_round(record, SE_50KR), SE_50KR) == []


def test_a_round_under_the_aggregate_limit_is_no_evidence():
    # A royal flush Blind at 500:1 on 100 takes the round past the 30,000 limit.
    paid = {"ante": "59.40", "blind": "29702.97", "play": "237.62"}
    record = deal("Ah Kh Qh 2c 3d", "2s 5d", seat(1, "Jh Th", paid=paid))
    verdict = judge_round(record, US_30K)
    assert "aggregate_limit_applied" in {f.code for f in verdict.findings}
    assert pay_observations("t1", record, verdict, US_30K) == []
    # The same round at a table without a limit is evidence.
    unlimited = judge_round(record, SE_50KR)
    (line,) = pay_observations("t1", record, unlimited, SE_50KR)
    assert (line.bet, line.wager, line.configured) == ("blind", Decimal(100), Decimal(500))
