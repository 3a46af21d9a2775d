"""Settlement of Ante, Blind, Play and Trips: every row of the RULES.md table and its notes."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from game.evaluator import category_name
from game.progressive import Meters
from game.settlement import floor_to, settle_game
from game.verdict import judge_round

from .engine_rounds import ZERO, bets, codes, deal, events, results, seat
from .engine_rules import SE_50KR, US_30K, US_PROGRESSIVE

# A board on which the dealer's "2d 3s" makes a pair of twos (qualifies) and
# "3d 4s" only king-high (does not qualify).
BOARD = "9h 8d 7h 2c Kd"
DEALER_PAIR = "2d 3s"
DEALER_HIGH = "3d 4s"


def settle_one(board: str, dealer: str, **kwargs) -> dict[str, Decimal]:
    hole = kwargs.pop("hole")
    game = settle_game(deal(board, dealer, seat(1, hole, **kwargs)), SE_50KR)
    return game.seats[1].results


# The settlement table of RULES.md, one row at a time (Ante 100, Blind 100, Play 400).


def test_player_folded_loses_ante_and_blind_and_play_is_zero():
    # "6s 5c" makes a straight that would have won: a fold is a fold.
    result = settle_one(BOARD, DEALER_PAIR, hole="6s 5c", decision="fold")
    assert result == bets("-100", "-100", "0")


def test_player_folded_loses_the_ante_even_when_the_dealer_does_not_qualify():
    game = settle_game(deal(BOARD, DEALER_HIGH, seat(1, "6s 5c", decision="fold")), SE_50KR)
    assert game.dealer_qualifies is False
    assert game.seats[1].results == bets("-100", "-100", "0")


def test_player_beats_a_qualifying_dealer():
    game = settle_game(deal(BOARD, DEALER_PAIR, seat(1, "6s 5c")), SE_50KR)
    assert game.dealer_qualifies is True
    assert category_name(game.dealer_hand) == "pair"
    # A straight: Blind 1 to 1.
    assert game.seats[1].results == bets("100", "100", "400")


def test_player_beats_a_dealer_who_does_not_qualify_and_the_ante_pushes():
    game = settle_game(deal(BOARD, DEALER_HIGH, seat(1, "6s 5c")), SE_50KR)
    assert game.dealer_qualifies is False
    assert category_name(game.dealer_hand) == "high_card"
    assert game.seats[1].results == bets("0", "100", "400")


def test_dealer_beats_player_and_qualifies():
    game = settle_game(deal(BOARD, "Ks 4c", seat(1, "As 3c")), SE_50KR)
    assert game.dealer_qualifies is True
    assert game.seats[1].results == bets("-100", "-100", "-400")


def test_dealer_beats_player_without_qualifying_and_the_ante_pushes():
    game = settle_game(deal("9h 8d 6h 2c Kd", "As 4c", seat(1, "Qs 3c")), SE_50KR)
    assert game.dealer_qualifies is False
    assert game.seats[1].results == bets("0", "-100", "-400")


@pytest.mark.parametrize(
    "board,dealer,hole",
    [
        ("Ah Ad Kc Kd Qs", "2c 3c", "4h 5h"),  # dealer qualifies on the board's two pair
        ("Ac Kd 9h 7c 4s", "2c 3d", "2h 3h"),  # dealer does not qualify
        ("Ac Kd Qh Jc Ts", "2c 3d", "4h 5s"),  # both play the board's straight
    ],
)
def test_a_tie_moves_no_money(board, dealer, hole):
    game = settle_game(deal(board, dealer, seat(1, hole, decision="flop_2x")), SE_50KR)
    assert game.seats[1].hand == game.dealer_hand
    assert game.seats[1].results == bets("0", "0", "0")


def test_a_tie_still_settles_trips():
    game = settle_game(deal("Ac Kd Qh Jc Ts", "2c 3d", seat(1, "4h 5s", trips="50")), SE_50KR)
    assert game.seats[1].results == bets("0", "0", "0", "200")  # straight: 4 to 1


def test_play_wins_the_chips_placed_for_each_decision():
    plays = (("preflop_4x", "400"), ("preflop_3x", "300"), ("flop_2x", "200"), ("river_1x", "100"))
    for decision, play in plays:
        result = settle_one(BOARD, DEALER_PAIR, hole="6s 5c", decision=decision)
        assert result == bets("100", "100", play), decision
        result = settle_one(BOARD, "Ks 4c", hole="As 3c", decision=decision)
        assert result == bets("-100", "-100", "-" + play), decision


# Blind pays when the player wins, by the player's hand (RULES.md, seed 001).
# Each hand beats the dealer's pair of twos on its board.
HANDS = {
    "royal_flush": ("Ah Kh Qh 2c 7d", "Jh Th"),
    "straight_flush": ("9h 8h 7h 2c Kd", "6h 5h"),
    "four_of_a_kind": ("9h 9d 7h 2c Kd", "9s 9c"),
    "full_house": ("9h 9d 7h 2c Kd", "9s 7c"),
    "flush": ("Ah 9h 7h 2c Kd", "4h 3h"),
    "straight": (BOARD, "6s 5c"),
    "three_of_a_kind": (BOARD, "9s 9c"),
    "two_pair": (BOARD, "9s 8c"),
    "pair": (BOARD, "Ks 4c"),
}
BLIND_PAYS = {
    "royal_flush": "50000",
    "straight_flush": "5000",
    "four_of_a_kind": "1000",
    "full_house": "300",
    "flush": "150",
    "straight": "100",
    "three_of_a_kind": "0",
    "two_pair": "0",
    "pair": "0",
}
TRIPS_PAYS = {
    "royal_flush": "2500",
    "straight_flush": "2000",
    "four_of_a_kind": "1500",
    "full_house": "400",
    "flush": "350",
    "straight": "200",
    "three_of_a_kind": "150",
    "two_pair": "-50",
    "pair": "-50",
}


@pytest.mark.parametrize("category", list(HANDS))
def test_blind_pays_by_the_players_hand_and_pushes_below_a_straight(category):
    board, hole = HANDS[category]
    game = settle_game(deal(board, DEALER_PAIR, seat(1, hole)), SE_50KR)
    assert category_name(game.seats[1].hand) == category
    assert game.dealer_qualifies is True
    assert game.seats[1].results == bets("100", BLIND_PAYS[category], "400")


def test_a_high_card_win_pushes_the_blind():
    game = settle_game(deal("9h 8d 6h 2c Kd", "3d 4s", seat(1, "As 5c")), SE_50KR)
    assert category_name(game.seats[1].hand) == "high_card"
    assert game.seats[1].results == bets("0", "0", "400")


def test_a_losing_royal_blind_is_lost_not_paid():
    # The Blind pays only on a win: a royal flush on the board ties everyone.
    game = settle_game(deal("Ah Kh Qh Jh Th", "2c 3c", seat(1, "4d 5d")), SE_50KR)
    assert game.seats[1].results == bets("0", "0", "0")


@pytest.mark.parametrize("category", list(HANDS))
def test_trips_pays_by_the_players_hand(category):
    board, hole = HANDS[category]
    result = settle_one(board, DEALER_PAIR, hole=hole, trips="50")
    assert result["trips"] == Decimal(TRIPS_PAYS[category])


def test_trips_high_card_loses():
    result = settle_one("9h 8d 6h 2c Kd", DEALER_HIGH, hole="As 5c", trips="50")
    assert result["trips"] == Decimal(-50)


@pytest.mark.parametrize("decision", ["fold", "river_1x"])
def test_trips_is_independent_of_the_dealer_and_of_folding(decision):
    # Kings beat the player's sevens; king-high does not qualify; the player may fold.
    for dealer in ("Ks Kc", DEALER_HIGH):
        result = settle_one(BOARD, dealer, hole="7c 7s", decision=decision, trips="100")
        assert result["trips"] == Decimal(300)
    assert settle_one(BOARD, "Ks Kc", hole="7c 7s", decision="river_1x")["play"] == Decimal(-100)


def test_fold_with_three_of_a_kind_still_wins_trips():
    result = settle_one(BOARD, DEALER_PAIR, hole="9s 9c", decision="fold", trips="50")
    assert result == bets("-100", "-100", "0", "150")


def test_no_trips_wager_settles_trips_at_zero():
    board, hole = HANDS["royal_flush"]
    assert settle_one(board, DEALER_PAIR, hole=hole)["trips"] == ZERO


def test_a_pay_table_is_configuration():
    # Trips 50/40/30/9/7/4/3 (the other table RULES.md mentions): full house 9 to 1.
    rules = replace(SE_50KR, trips_pays={**SE_50KR.trips_pays, 6: Decimal(9)})
    board, hole = HANDS["full_house"]
    game = settle_game(deal(board, DEALER_PAIR, seat(1, hole, trips="50")), rules)
    assert game.seats[1].results["trips"] == Decimal(450)


# Money: exact decimals, wins rounded down to the minor unit.


def test_flush_three_to_two_on_an_odd_amount_rounds_down_to_the_minor_unit():
    whole_kronor = replace(SE_50KR, minor_unit=Decimal(1), unit=Decimal(1), ante_min=Decimal(1))
    board, hole = HANDS["flush"]
    game = settle_game(deal(board, DEALER_PAIR, seat(1, hole, ante="75")), whole_kronor)
    assert game.seats[1].results["blind"] == Decimal(112)  # 112.5 down, not up


def test_a_fraction_of_a_cent_is_rounded_down_not_to_nearest():
    # Chips that break the unit are still settled as placed: 5.55 × 1.5 = 8.325.
    board, hole = HANDS["flush"]
    game = settle_game(deal(board, DEALER_PAIR, seat(1, hole, ante="5.55")), US_30K)
    assert game.seats[1].results["blind"] == Decimal("8.32")
    game = settle_game(deal(board, DEALER_PAIR, seat(1, hole, ante="0.03")), US_30K)
    assert game.seats[1].results["blind"] == Decimal("0.04")  # 0.045
    game = settle_game(deal(board, DEALER_PAIR, seat(1, hole, ante="0.01")), US_30K)
    assert game.seats[1].results["blind"] == Decimal("0.01")  # 0.015


def test_settled_amounts_are_decimals():
    board, hole = HANDS["flush"]
    game = settle_game(deal(board, DEALER_PAIR, seat(1, hole, trips="50")), SE_50KR)
    assert all(type(amount) is Decimal for amount in game.seats[1].results.values())


def test_floor_to_rounds_toward_minus_infinity_at_the_minor_unit():
    cent = Decimal("0.01")
    assert floor_to(Decimal("8.329"), cent) == Decimal("8.32")
    assert floor_to(Decimal("8.32"), cent) == Decimal("8.32")
    assert floor_to(Decimal("112.5"), Decimal(1)) == Decimal(112)


# Seats and the order they are settled in.


def test_every_seat_is_settled_against_the_same_dealer():
    record = deal(
        BOARD, DEALER_PAIR,
        seat(7, "6s 5c"),
        seat(1, "As 3c"),
        seat(4, "Ks 4c", decision="fold", trips="50"),
    )
    game = settle_game(record, SE_50KR)
    assert set(game.seats) == {7, 4, 1}
    assert game.seats[7].results == bets("100", "100", "400")
    assert game.seats[1].results == bets("-100", "-100", "-400")
    assert game.seats[4].results == bets("-100", "-100", "0", "-50")


# The table aggregate limit (us-30k: 30,000 per round).

ROYAL_BOARD = "Qh Jh Th 2c 3d"


def big_royal(**kwargs):
    # Royal flush at the maximum: Ante 500, Blind 500 × 500, Play 2,000, Trips 100 × 50.
    return seat(2, "Ah Kh", ante="500", trips="100", **kwargs)


def test_the_aggregate_limit_scales_each_win_and_rounds_it_down():
    record = deal(ROYAL_BOARD, "4s 4c", big_royal(), seat(5, "7c 8d", ante="50", decision="fold"))
    game = settle_game(record, US_30K)
    # 500 + 250,000 + 2,000 + 5,000 = 257,500 in wins, scaled by 30,000 / 257,500.
    assert game.seats[2].results == bets("58.25", "29126.21", "233.00", "582.52")
    # Losses are not touched.
    assert game.seats[5].results == bets("-50", "-50", "0")
    [finding] = game.findings
    assert finding.code == "aggregate_limit_applied"
    assert finding.expected == Decimal(30000)
    assert finding.claimed == Decimal(257500)


def test_the_aggregate_limit_is_never_exceeded_and_never_raises_a_win():
    record = deal(
        ROYAL_BOARD, "4s 4c", big_royal(), seat(6, "9h 8h", ante="25", trips="5"),
        seat(4, "Qc Qd", ante="500", trips="100"),
    )
    limited = settle_game(record, US_30K)
    free = settle_game(record, replace(US_30K, aggregate_limit=None))
    wins = [a for s in limited.seats.values() for a in s.results.values() if a > 0]
    assert sum(wins) <= Decimal(30000)
    assert sum(wins) > Decimal(30000) - Decimal("0.01") * len(wins)  # only the floor is lost
    for number, settled in limited.seats.items():
        for bet, amount in settled.results.items():
            unlimited = free.seats[number].results[bet]
            if unlimited > 0:
                assert ZERO <= amount <= unlimited
                assert amount == floor_to(unlimited * 30000 / Decimal(sum(
                    a for s in free.seats.values() for a in s.results.values() if a > 0
                )), Decimal("0.01"))
            else:
                assert amount == unlimited


def test_winnings_at_the_limit_are_not_scaled():
    rules = replace(US_30K, aggregate_limit=Decimal(600))
    # Ante 100 + Blind 100 (straight) + Play 400 = 600: at, not over, the limit.
    game = settle_game(deal(BOARD, DEALER_PAIR, seat(1, "6s 5c")), rules)
    assert game.seats[1].results == bets("100", "100", "400")
    assert game.findings == []
    game = settle_game(deal(BOARD, DEALER_PAIR, seat(1, "6s 5c", trips="5")), rules)
    # Trips counts towards the sum: 620 > 600, each win × 600/620.
    assert game.seats[1].results == bets("96.77", "96.77", "387.09", "19.35")
    assert [f.code for f in game.findings] == ["aggregate_limit_applied"]


def test_the_aggregate_limit_leaves_progressive_awards_alone():
    meters = Meters(Decimal("10000.00"))
    record = deal(ROYAL_BOARD, "4s 4c", big_royal(progressive="5"))
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, meters)
    assert results(verdict)[2] == {
        **bets("58.25", "29126.21", "233.00", "582.52"), "progressive": Decimal("9996.00")
    }
    assert codes(verdict) == ["aggregate_limit_applied", "progressive_award"]


def test_a_table_without_an_aggregate_limit_pays_in_full():
    record = deal(ROYAL_BOARD, "4s 4c", big_royal())
    game = settle_game(record, replace(SE_50KR, aggregate_limit=None))
    assert game.seats[2].results == bets("500", "250000", "2000", "5000")
    assert game.findings == []


# Void rounds: "Machine malfunctions void all hands".


def test_a_void_round_settles_every_bet_at_zero_and_moves_no_meter():
    meters = Meters(Decimal("12345.67"))
    record = deal(
        ROYAL_BOARD, "4s 4c", big_royal(progressive="5"), seat(3, "7c 2d", decision="fold"),
        void=True,
    )
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, meters)
    assert verdict.status == "void"
    assert verdict.dealer_hand is None and verdict.dealer_qualifies is None
    for settled in results(verdict).values():
        assert settled == dict.fromkeys(("ante", "blind", "play", "trips", "progressive"), ZERO)
    assert verdict.events == ()
    assert verdict.meters_after == meters
    assert verdict.findings == ()


def test_a_void_round_may_omit_its_cards():
    record = deal(None, None, seat(1, None), seat(2, None, trips="50"), void=True)
    verdict = judge_round(record, SE_50KR)
    assert verdict.status == "void"
    assert [s.hand for s in verdict.seats] == [None, None]
    assert all(not any(s.settled.values()) for s in verdict.seats)


def test_a_void_round_paid_as_if_played_is_a_payout_mismatch_and_still_void():
    paid = {"ante": "100", "blind": "100", "play": "400"}
    record = deal(BOARD, DEALER_PAIR, seat(1, "6s 5c", paid=paid), void=True)
    verdict = judge_round(record, SE_50KR)
    assert codes(verdict) == ["payout_mismatch"] * 3
    assert verdict.status == "void"  # ROUND_RECORD.md: void wins over flagged


# Rounds with a card dealt twice: settled, flagged, never verified.


def test_a_duplicate_card_round_is_settled_flagged_and_not_verified():
    paid = {"ante": "999", "blind": "1", "play": "0", "trips": "0", "progressive": "0"}
    # 6s is both the dealer's and seat 1's; it changes neither hand.
    record = deal(
        BOARD, "2d 6s",
        seat(1, "6s 5c", paid=paid, progressive="5"),
        seat(2, "Ts Jc", progressive="5"),
    )
    meters = Meters(Decimal("10000.00"))
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, meters)
    assert verdict.status == "flagged"
    assert codes(verdict) == ["duplicate_card"]  # no payout_mismatch, no award
    # The game is still settled on the cards as dealt.
    assert results(verdict)[1] == {**bets("100", "100", "400"), "progressive": Decimal(-5)}
    # A straight: the Blind pays 1 to 1, but the Progressive's fixed 15 is not paid.
    assert results(verdict)[2] == {**bets("100", "100", "400"), "progressive": Decimal(-5)}
    # Contributions are collected; no award is paid from impossible cards.
    assert events(verdict) == [
        ("contribution", 2, Decimal("1.00"), Decimal("10001.00")),
        ("contribution", 1, Decimal("1.00"), Decimal("10002.00")),
    ]
    assert verdict.meters_after == Meters(Decimal("10002.00"))


def test_a_duplicate_card_round_pays_no_jackpot():
    record = deal("Qh Jh Th 2c 3d", "Qh 4c", seat(1, "Ah Kh", progressive="5"))
    verdict = judge_round(record, US_30K, US_PROGRESSIVE, Meters(Decimal("50000.00")))
    assert [e.kind for e in verdict.events] == ["contribution"]
    assert verdict.meters_after.meter == Decimal("50001.00")
    assert results(verdict)[1]["progressive"] == Decimal(-5)


def test_a_duplicate_card_round_with_five_cards_of_one_rank_is_still_judged():
    record = deal("Ah Ad Ac As Kd", DEALER_PAIR, seat(1, "Ah 7c"))
    verdict = judge_round(record, SE_50KR)
    assert verdict.status == "flagged"
    assert codes(verdict) == ["duplicate_card"]
