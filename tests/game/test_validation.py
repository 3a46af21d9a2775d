"""Every finding code the engine raises (ROUND_RECORD.md), and the verdict's status."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from game import findings as f
from game.findings import Finding
from game.progressive import Meters
from game.record import round_from_wire
from game.validation import duplicate_cards, rule_breaks
from game.verdict import STATUSES, judge_round

from .engine_rounds import codes, deal, results, seat
from .engine_rules import SE_50KR, US_30K, US_PROGRESSIVE

BOARD = "9h 8d 7h 2c Kd"
DEALER = "2d 3s"  # a pair of twos
WINNER = "6s 5c"  # a straight: Ante +, Blind 1:1, Play +
LOSER = "As 3c"
METERS = Meters(Decimal("10000.00"))


def breaks(*seats, rules=SE_50KR) -> list[Finding]:
    return rule_breaks(deal(BOARD, DEALER, *seats), rules)


def one(found: list[Finding]) -> Finding:
    assert len(found) == 1, found
    return found[0]


def test_a_round_within_every_rule_has_no_findings():
    assert breaks(seat(1, WINNER, ante="50", trips="1000"), seat(2, LOSER, ante="1000")) == []
    assert duplicate_cards(deal(BOARD, DEALER, seat(1, WINNER))) == []


def test_ante_blind_unequal():
    finding = one(breaks(seat(3, WINNER, ante="100", blind="150")))
    assert (finding.code, finding.seat, finding.bet) == (f.ANTE_BLIND_UNEQUAL, 3, "blind")
    assert (finding.expected, finding.claimed) == (Decimal(100), Decimal(150))


def test_ante_blind_unequal_is_settled_on_the_chips_placed():
    verdict = judge_round(deal(BOARD, DEALER, seat(3, WINNER, ante="100", blind="150")), SE_50KR)
    assert results(verdict)[3]["blind"] == Decimal(150)
    assert verdict.status == "flagged"


@pytest.mark.parametrize(
    "kwargs,off",
    [
        ({"ante": "75", "decision": "fold"}, {"ante", "blind"}),
        ({"ante": "75", "decision": "flop_2x"}, {"ante", "blind"}),  # Play 150 is on the unit
        ({"ante": "75", "decision": "river_1x"}, {"ante", "blind", "play"}),
        ({"ante": "100", "trips": "60"}, {"trips"}),
        ({"ante": "100", "play": "410"}, {"play"}),
        ({"ante": "100", "blind": "125"}, {"blind"}),
        ({"ante": "100.50"}, {"ante", "blind", "play"}),
    ],
)
def test_bet_off_unit(kwargs, off):
    found = [x for x in breaks(seat(2, WINNER, **kwargs)) if x.code == f.BET_OFF_UNIT]
    assert {x.bet for x in found} == off
    assert all(x.seat == 2 and x.claimed % 50 for x in found)


def test_the_progressive_wager_is_not_a_unit_bet():
    # 5 is not a whole number of 50 kr units, but the Progressive has its own fixed wager.
    assert breaks(seat(1, WINNER, progressive="5")) == []


def test_bet_below_minimum():
    rules = replace(SE_50KR, ante_min=Decimal(100), trips_min=Decimal(100))
    found = breaks(seat(4, WINNER, ante="50", trips="50"), rules=rules)
    assert [(x.code, x.seat, x.bet, x.expected, x.claimed) for x in found] == [
        (f.BET_BELOW_MINIMUM, 4, "ante", Decimal(100), Decimal(50)),
        (f.BET_BELOW_MINIMUM, 4, "trips", Decimal(100), Decimal(50)),
    ]


def test_a_zero_ante_is_below_the_minimum():
    finding = one(breaks(seat(1, WINNER, ante="0", decision="fold")))
    assert (finding.code, finding.bet) == (f.BET_BELOW_MINIMUM, "ante")


def test_no_trips_wager_is_not_below_the_trips_minimum():
    assert breaks(seat(1, WINNER, trips="0")) == []


def test_bet_above_maximum():
    found = breaks(seat(5, WINNER, ante="1050", trips="1050"))
    assert [(x.code, x.seat, x.bet, x.expected, x.claimed) for x in found] == [
        (f.BET_ABOVE_MAXIMUM, 5, "ante", Decimal(1000), Decimal(1050)),
        (f.BET_ABOVE_MAXIMUM, 5, "trips", Decimal(1000), Decimal(1050)),
    ]


def test_the_play_bet_is_never_limited_by_the_ante_maximum():
    assert breaks(seat(1, WINNER, ante="1000", decision="preflop_4x")) == []


def test_an_off_unit_ante_above_the_maximum_raises_both():
    assert sorted(x.code for x in breaks(seat(1, WINNER, ante="1025", decision="fold"))) == [
        f.BET_ABOVE_MAXIMUM, f.BET_OFF_UNIT, f.BET_OFF_UNIT,  # Ante and Blind
    ]


@pytest.mark.parametrize(
    "decision,play,expected",
    [("preflop_4x", "250", "200"), ("preflop_3x", "200", "150"), ("flop_2x", "50", "100"),
     ("river_1x", "100", "50"), ("fold", "50", "0")],
)
def test_play_mismatch(decision, play, expected):
    finding = one(breaks(seat(6, WINNER, ante="50", decision=decision, play=play)))
    assert (finding.code, finding.seat, finding.bet) == (f.PLAY_MISMATCH, 6, "play")
    assert (finding.expected, finding.claimed) == (Decimal(expected), Decimal(play))


def test_a_play_mismatch_is_settled_on_the_chips_placed():
    record = deal(BOARD, DEALER, seat(6, WINNER, ante="50", play="250"))
    assert results(judge_round(record, SE_50KR))[6]["play"] == Decimal(250)


def test_player_multiple_hands():
    found = breaks(
        seat(1, WINNER, player="P-1"), seat(3, LOSER, player="P-1"),
        seat(5, "Qc Qs", player="P-1"), seat(6, "Jc Js", player="P-2"), seat(7, "Tc Ts"),
    )
    assert [(x.code, x.seat) for x in found] == [
        (f.PLAYER_MULTIPLE_HANDS, 3), (f.PLAYER_MULTIPLE_HANDS, 5),
    ]
    assert "P-1" in found[0].detail


def test_seats_without_a_player_id_are_not_one_player():
    assert breaks(seat(1, WINNER), seat(2, LOSER)) == []


def test_a_table_may_allow_one_player_several_hands():
    rules = replace(SE_50KR, one_hand_per_player=False)
    assert breaks(seat(1, WINNER, player="P-1"), seat(3, LOSER, player="P-1"), rules=rules) == []


def test_duplicate_card_names_each_repeated_card_once():
    # Ah on the board and in a hole; Qc in two holes, three times in all.
    record = deal(
        "Ah 8d 7h 2c Kd", DEALER, seat(1, "Ah Qc"), seat(2, "Qc 5c"), seat(3, "Qc 4h"),
    )
    found = duplicate_cards(record)
    assert [x.code for x in found] == [f.DUPLICATE_CARD, f.DUPLICATE_CARD]
    assert "Qc appears 3 times" in found[0].detail
    assert "Ah appears 2 times" in found[1].detail


def test_duplicate_card_between_dealer_and_board():
    found = duplicate_cards(deal(BOARD, "9h 3s", seat(1, WINNER)))
    assert [x.code for x in found] == [f.DUPLICATE_CARD]


def test_payout_mismatch_for_each_bet_that_differs():
    paid = {"ante": "100", "blind": "150", "play": "400", "trips": "-50"}
    verdict = judge_round(deal(BOARD, DEALER, seat(2, WINNER, trips="50", paid=paid)), SE_50KR)
    # The straight pays the Blind 1:1 and Trips 4:1.
    mismatches = [(x.code, x.seat, x.bet, x.expected, x.claimed) for x in verdict.findings]
    assert mismatches == [
        (f.PAYOUT_MISMATCH, 2, "blind", Decimal(100), Decimal(150)),
        (f.PAYOUT_MISMATCH, 2, "trips", Decimal(200), Decimal(-50)),
    ]
    assert verdict.status == "flagged"


def test_a_bet_left_out_of_paid_reads_as_zero():
    verdict = judge_round(deal(BOARD, DEALER, seat(2, LOSER, paid={"ante": "-100"})), SE_50KR)
    assert [(x.bet, x.expected, x.claimed) for x in verdict.findings] == [
        ("blind", Decimal(-100), Decimal(0)),
        ("play", Decimal(-400), Decimal(0)),
    ]
    verdict = judge_round(
        deal(BOARD, DEALER, seat(2, LOSER, paid={"ante": "-100", "blind": "-100", "play": "-400"})),
        SE_50KR,
    )
    assert verdict.findings == () and verdict.status == "verified"


def test_paid_compares_amounts_not_their_spelling():
    paid = {"ante": "100.00", "blind": "1E+2", "play": "400.0"}
    verdict = judge_round(deal(BOARD, DEALER, seat(2, WINNER, paid=paid)), SE_50KR)
    assert verdict.status == "verified"


def test_progressive_wager_invalid_on_a_lit_wager_of_another_amount():
    record = deal(BOARD, DEALER, seat(1, LOSER, ante="50", progressive="10"))
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, METERS)
    finding = one(list(verdict.findings))
    assert (finding.code, finding.seat, finding.bet) == (
        f.PROGRESSIVE_WAGER_INVALID, 1, "progressive",
    )
    assert (finding.expected, finding.claimed) == (Decimal(5), Decimal(10))
    # Lit, so it is collected (RULES.md: "A lit wager is always collected")
    # and adds rate × wager to the meter.
    assert results(verdict)[1]["progressive"] == Decimal(-10)
    assert [(e.kind, e.amount) for e in verdict.events] == [("contribution", Decimal("2.00"))]


def test_progressive_wager_invalid_on_a_table_without_a_pool():
    verdict = judge_round(deal(BOARD, DEALER, seat(1, WINNER, progressive="50")), SE_50KR)
    finding = one(list(verdict.findings))
    assert (finding.code, finding.seat, finding.expected) == (f.PROGRESSIVE_WAGER_INVALID, 1, None)
    assert results(verdict)[1]["progressive"] == Decimal(0)
    assert verdict.events == () and verdict.meters_after is None


def test_progressive_not_lit_voids_the_wager():
    unlit = seat(1, "Ah Kh", ante="50", progressive="5", lit=False)
    record = deal("Qh Jh Th 2c 3d", "4s 4c", unlit)
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, METERS)
    finding = one(list(verdict.findings))
    assert (finding.code, finding.seat, finding.bet, finding.claimed) == (
        f.PROGRESSIVE_NOT_LIT, 1, "progressive", Decimal(5),
    )
    # A royal flush, but the wager was void: no contribution, no award, result 0.
    assert results(verdict)[1]["progressive"] == Decimal(0)
    assert verdict.events == ()
    assert verdict.meters_after == METERS
    assert verdict.status == "flagged"


def test_aggregate_limit_applied_is_informational():
    record = deal("Qh Jh Th 2c 3d", "4s 4c", seat(2, "Ah Kh", ante="500"))
    first = judge_round(record, US_30K)
    [finding] = first.findings
    assert finding.code == f.AGGREGATE_LIMIT_APPLIED and finding.informational
    assert first.status == "settled"
    paid = {bet: str(amount) for bet, amount in results(first)[2].items()}
    record = deal("Qh Jh Th 2c 3d", "4s 4c", seat(2, "Ah Kh", ante="500", paid=paid))
    verdict = judge_round(record, US_30K)
    assert codes(verdict) == [f.AGGREGATE_LIMIT_APPLIED]
    assert verdict.status == "verified"


def test_progressive_award_is_informational():
    paid = {"ante": "50", "blind": "50", "play": "200", "progressive": "10"}
    record = deal(BOARD, DEALER, seat(1, WINNER, ante="50", progressive="5", paid=paid))
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, METERS)
    [finding] = verdict.findings
    assert (finding.code, finding.seat, finding.bet, finding.expected) == (
        f.PROGRESSIVE_AWARD, 1, "progressive", Decimal(15),  # a straight: fixed 15
    )
    assert finding.informational
    assert verdict.status == "verified"


def test_only_the_informational_codes_are_informational():
    assert f.INFORMATIONAL == {f.AGGREGATE_LIMIT_APPLIED, f.PROGRESSIVE_AWARD}
    problems = [code for code in f.ALL_CODES if code not in f.INFORMATIONAL]
    assert not any(Finding(code).informational for code in problems)


# Statuses (ROUND_RECORD.md "Response").


def test_statuses_are_the_four_of_the_contract():
    assert STATUSES == ("verified", "flagged", "settled", "void")


def test_verified_when_every_claim_matches_and_no_rule_is_broken():
    paid = {"ante": "100", "blind": "100", "play": "400", "trips": "0", "progressive": "0"}
    verdict = judge_round(deal(BOARD, DEALER, seat(1, WINNER, paid=paid)), SE_50KR)
    assert verdict.status == "verified" and verdict.findings == ()


def test_settled_when_no_paid_was_given():
    verdict = judge_round(deal(BOARD, DEALER, seat(1, WINNER), seat(2, LOSER)), SE_50KR)
    assert verdict.status == "settled" and verdict.findings == ()


def test_flagged_by_a_rule_break_even_without_paid():
    verdict = judge_round(deal(BOARD, DEALER, seat(1, WINNER, ante="75")), SE_50KR)
    assert verdict.status == "flagged"


def test_void_when_the_round_is_void_and_nothing_is_wrong():
    verdict = judge_round(deal(BOARD, DEALER, seat(1, WINNER), void=True), SE_50KR)
    assert verdict.status == "void"
    paid = {"ante": "0", "blind": "0", "play": "0"}
    verdict = judge_round(deal(BOARD, DEALER, seat(1, WINNER, paid=paid), void=True), SE_50KR)
    assert verdict.status == "void"


def test_void_beats_flagged_and_its_findings_are_kept():
    record = deal(BOARD, DEALER, seat(1, WINNER, paid={"ante": "100"}), void=True)
    verdict = judge_round(record, SE_50KR)
    assert verdict.status == "void"
    assert [(x.code, x.bet) for x in verdict.findings] == [(f.PAYOUT_MISMATCH, "ante")]


def test_a_void_round_that_breaks_a_rule_is_void_with_the_break_recorded():
    # Off the unit and above the maximum: settled at 0 all the same, and listed.
    record = deal(BOARD, DEALER, seat(1, WINNER, ante="1025"), void=True)
    verdict = judge_round(record, SE_50KR)
    assert verdict.status == "void"
    assert sorted({x.code for x in verdict.findings}) == [f.BET_ABOVE_MAXIMUM, f.BET_OFF_UNIT]
    assert all(not amount for amount in results(verdict)[1].values())


def test_findings_come_in_a_stable_order_rule_breaks_before_payouts():
    record = deal(
        BOARD, DEALER,
        seat(2, WINNER, ante="7", paid={"ante": "0"}),
        seat(1, LOSER, ante="5", progressive="5", lit=False),
    )
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, METERS)
    assert [(x.code, x.seat, x.bet) for x in verdict.findings] == [
        (f.BET_OFF_UNIT, 2, "ante"), (f.BET_OFF_UNIT, 2, "blind"), (f.BET_OFF_UNIT, 2, "play"),
        (f.PROGRESSIVE_NOT_LIT, 1, "progressive"),
        (f.PAYOUT_MISMATCH, 2, "ante"), (f.PAYOUT_MISMATCH, 2, "blind"),
        (f.PAYOUT_MISMATCH, 2, "play"),
    ]


# The record as the engine reads it from the wire (ROUND_RECORD.md defaults).


def test_round_from_wire_reads_the_contracts_defaults():
    record = round_from_wire(
        {
            "board": ["Ah", "KH", "Qh", "Jh", "Th"], "dealer_cards": ["2c", "2d"],
            "seats": [
                {"seat": 3, "hole": ["9s", "9d"], "ante": "100", "blind": 100,
                 "decision": "river_1x", "play": "100.00", "paid": {"ante": "-100"}},
                {"seat": 1, "hole": ["8s", "8d"], "ante": "50", "blind": "50",
                 "decision": "fold", "play": "0", "player": ""},
            ],
        }
    )
    assert record.void is False
    assert [s.seat for s in record.seats] == [3, 1]  # as listed
    first, second = record.seats
    assert (first.trips, first.progressive, first.progressive_lit) == (0, 0, False)
    assert first.blind == Decimal(100) and first.play == Decimal(100)
    assert first.paid == {"ante": Decimal(-100)}
    assert second.paid is None and second.player is None
    assert record.board[1] == record.board[0] - 4  # "KH" is the king of hearts


def test_round_from_wire_reads_a_void_round_without_cards():
    record = round_from_wire(
        {
            "void": True,
            "seats": [{"seat": 1, "ante": "50", "blind": "50", "decision": "fold", "play": "0"}],
        }
    )
    assert record.void and record.board is None and record.dealer_cards is None
    assert record.seats[0].hole is None
    assert judge_round(record, SE_50KR).status == "void"


def test_a_lit_wager_of_another_amount_cannot_win_the_meter():
    # A royal flush with a hole card would take 100 % of the meter on the pool's wager.
    record = deal("Qh Jh Th 2c 3d", DEALER, seat(1, "Ah Kh", ante="50", progressive="1"))
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, METERS)
    assert [f.code for f in verdict.findings if f.code.startswith("progressive")] == [
        f.PROGRESSIVE_WAGER_INVALID
    ]
    assert [e.kind for e in verdict.events] == ["contribution"]
    assert results(verdict)[1]["progressive"] == Decimal(-1)
