"""Dealer-error fingerprints: each type read from a real round settled by the engine with a
deliberate mistake in what the dealer paid, the tallies, and the exact sweetheart test."""

from __future__ import annotations

import random
from decimal import Decimal
from fractions import Fraction
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from game import judge_round
from game.progressive import Meters
from game.protection.fingerprints import (
    EXPLANATIONS,
    Direction,
    ErrorType,
    Fingerprint,
    MismatchContext,
    Outcome,
    SeatRound,
    SweetheartSettings,
    classify,
    fingerprint_round,
    hypergeometric_tail,
    suspected_sweetheart_dealing,
    tally_errors,
)
from game.rules import DECISION_MULTIPLES
from tests.game.engine_rounds import deal, seat
from tests.game.engine_rules import SE_50KR, TRIPS_PAYS, US_30K, US_PROGRESSIVE

T = ErrorType
FOR_PLAYER, FOR_HOUSE = Direction.FOR_PLAYER, Direction.FOR_HOUSE

# "2d 3s" makes the dealer a pair of twos on BOARD (qualifies), "3d 4s" king-high (does not).
BOARD = "9h 8d 7h 2c Kd"
DEALER_PAIR = "2d 3s"
DEALER_HIGH = "3d 4s"
FLUSH_BOARD = "9h 8h 7h 2c Kd"  # "Ah 3h" makes an ace-high flush
FULL_BOARD = "9h 9d 7h 2c Kd"  # "9s 7c" makes nines full of sevens


def judged(board, dealer, mistakes, *, rules=SE_50KR, pool=None, meters=None, **kwargs):
    """The round judged once to learn the settlement, then again with the dealer's mistakes."""
    honest = judge_round(deal(board, dealer, seat(1, **kwargs)), rules, pool, meters)
    paid = {bet: str(amount) for bet, amount in honest.seats[0].settled.items()}
    record = deal(board, dealer, seat(1, paid=paid | mistakes, **kwargs))
    return record, judge_round(record, rules, pool, meters), rules


def fingerprints(board, dealer, mistakes, **kwargs) -> tuple[Fingerprint, ...]:
    return fingerprint_round(*judged(board, dealer, mistakes, **kwargs))[1]


def only(board, dealer, mistakes, **kwargs) -> tuple[ErrorType, Direction, str, Decimal]:
    (found,) = fingerprints(board, dealer, mistakes, **kwargs)
    return found.type, found.direction, found.bet, found.amount_for_player


def test_every_type_is_explained_in_one_sentence():
    assert set(EXPLANATIONS) == set(ErrorType)
    for sentence in EXPLANATIONS.values():
        assert sentence.endswith(".") and sentence.count(". ") == 0


def test_a_dealer_who_paid_right_leaves_no_fingerprint():
    assert fingerprints(BOARD, DEALER_PAIR, {}, hole="6s 5c", trips="50") == ()


@pytest.mark.parametrize(
    "board,dealer,kwargs,mistakes,expected",
    [
        # The dealer does not qualify: a winner's Ante paid, a loser's collected.
        (BOARD, DEALER_HIGH, {"hole": "6s 5c"}, {"ante": "100"},
         (T.ANTE_NOT_PUSHED, FOR_PLAYER, "ante", Decimal(100))),
        ("9h 8d 6h 2c Kd", "As 4c", {"hole": "Qs 3c"}, {"ante": "-100"},
         (T.ANTE_NOT_PUSHED, FOR_HOUSE, "ante", Decimal(-100))),
        # The Ante pushed though the dealer qualified; a folded Ante pushed (it is lost).
        (BOARD, DEALER_PAIR, {"hole": "6s 5c"}, {"ante": "0"},
         (T.ANTE_PUSHED_WRONGLY, FOR_HOUSE, "ante", Decimal(-100))),
        (BOARD, DEALER_HIGH, {"hole": "6s 5c", "decision": "fold"}, {"ante": "0"},
         (T.ANTE_PUSHED_WRONGLY, FOR_PLAYER, "ante", Decimal(100))),
        # A folded hand paid its Ante: lost whether or not the dealer qualified.
        (BOARD, DEALER_HIGH, {"hole": "6s 5c", "decision": "fold"}, {"ante": "100"},
         (T.WRONG_WINNER, FOR_PLAYER, "ante", Decimal(200))),
        # A pair of kings wins, but its Blind pushes.
        (BOARD, DEALER_PAIR, {"hole": "Ks Qc"}, {"blind": "100"},
         (T.BLIND_BELOW_STRAIGHT, FOR_PLAYER, "blind", Decimal(100))),
        # A flush Blind (3:2, 150) paid at the straight line, at the full house line, pushed.
        (FLUSH_BOARD, DEALER_PAIR, {"hole": "Ah 3h"}, {"blind": "100"},
         (T.BLIND_WRONG_LINE, FOR_HOUSE, "blind", Decimal(-50))),
        (FLUSH_BOARD, DEALER_PAIR, {"hole": "Ah 3h"}, {"blind": "300"},
         (T.BLIND_WRONG_LINE, FOR_PLAYER, "blind", Decimal(150))),
        (FLUSH_BOARD, DEALER_PAIR, {"hole": "Ah 3h"}, {"blind": "0"},
         (T.BLIND_WRONG_LINE, FOR_HOUSE, "blind", Decimal(-150))),
        # A 3x Play paid as 4x; a lost 3x Play collected as 2x.
        (BOARD, DEALER_PAIR, {"hole": "6s 5c", "decision": "preflop_3x"}, {"play": "400"},
         (T.PLAY_MULTIPLE, FOR_PLAYER, "play", Decimal(100))),
        (BOARD, "Ks 4c", {"hole": "As 3c", "decision": "preflop_3x"}, {"play": "-200"},
         (T.PLAY_MULTIPLE, FOR_PLAYER, "play", Decimal(100))),
        # Trips on a full house (8:1) paid at the flush line, collected; on a pair, paid.
        (FULL_BOARD, DEALER_PAIR, {"hole": "9s 7c", "trips": "100"}, {"trips": "700"},
         (T.TRIPS_WRONG_LINE, FOR_HOUSE, "trips", Decimal(-100))),
        (FULL_BOARD, DEALER_PAIR, {"hole": "9s 7c", "trips": "100"}, {"trips": "-100"},
         (T.TRIPS_WRONG_LINE, FOR_HOUSE, "trips", Decimal(-900))),
        (BOARD, DEALER_PAIR, {"hole": "Ks Qc", "trips": "100"}, {"trips": "300"},
         (T.TRIPS_WRONG_LINE, FOR_PLAYER, "trips", Decimal(400))),
        # A losing Blind paid; a lost Play paid; a tied Ante paid.
        (BOARD, "Ks 4c", {"hole": "As 3c"}, {"blind": "100"},
         (T.WRONG_WINNER, FOR_PLAYER, "blind", Decimal(200))),
        (BOARD, "Ks 4c", {"hole": "As 3c"}, {"play": "400"},
         (T.WRONG_WINNER, FOR_PLAYER, "play", Decimal(800))),
        ("Ac Kd Qh Jc Ts", "2c 3d", {"hole": "4h 5s"}, {"ante": "100"},
         (T.WRONG_WINNER, FOR_PLAYER, "ante", Decimal(100))),
        # No pattern: 9:1 on the Trips full house is no line of the table (conformance's
        # business); a folded seat's Play collected.
        (FULL_BOARD, DEALER_PAIR, {"hole": "9s 7c", "trips": "100"}, {"trips": "900"},
         (T.OTHER, FOR_PLAYER, "trips", Decimal(100))),
        (BOARD, DEALER_PAIR, {"hole": "6s 5c", "decision": "fold"}, {"play": "-100"},
         (T.OTHER, FOR_HOUSE, "play", Decimal(-100))),
    ],
)
def test_each_mistake_has_its_fingerprint(board, dealer, kwargs, mistakes, expected):
    assert only(board, dealer, mistakes, **kwargs) == expected


def test_a_progressive_paid_without_collecting_its_wager():
    # A flush wins the fixed 20; the result is 20 - 5. The dealer forgot the wager.
    found = only(
        FLUSH_BOARD, DEALER_PAIR, {"progressive": "20"}, hole="Ah 3h", progressive="5",
        rules=US_30K, pool=US_PROGRESSIVE, meters=Meters(Decimal("50000.00")),
    )
    assert found == (T.PROGRESSIVE_LINE, FOR_PLAYER, "progressive", Decimal(5))


def test_a_win_paid_in_full_past_the_aggregate_limit():
    # A royal flush Blind at 500:1 on 100 is 50,000; the round's 50,500 is scaled to 30,000.
    record, verdict, rules = judged(
        "Ah Kh Qh 2c 3d", "2s 5d", {"blind": "50000"}, hole="Jh Th", rules=US_30K,
    )
    assert "aggregate_limit_applied" in {finding.code for finding in verdict.findings}
    (found,) = fingerprint_round(record, verdict, rules)[1]
    assert (found.type, found.direction) == (T.AGGREGATE_LIMIT_IGNORED, FOR_PLAYER)
    assert found.amount_for_player == Decimal(50000) - verdict.seats[0].settled["blind"] > 0


def test_several_mistakes_on_one_seat_each_have_a_fingerprint():
    # The dealer misread the straight: Ante paid though he did not qualify, Blind pushed.
    found = fingerprints(BOARD, DEALER_HIGH, {"ante": "100", "blind": "0"}, hole="6s 5c")
    assert [(f.bet, f.type, f.direction) for f in found] == [
        ("ante", T.ANTE_NOT_PUSHED, FOR_PLAYER), ("blind", T.BLIND_WRONG_LINE, FOR_HOUSE),
    ]


def test_a_seat_without_a_reported_payment_is_no_opportunity():
    record = deal(BOARD, DEALER_PAIR, seat(1, "6s 5c"), seat(2, "Ks Qc", paid={"ante": "100"}))
    found = fingerprint_round(record, judge_round(record, SE_50KR), SE_50KR)
    assert set(found) == {2}


def test_a_round_with_a_duplicated_card_says_nothing_about_the_dealer():
    record = deal(BOARD, DEALER_PAIR, seat(1, "9h 5c", paid={"ante": "500"}))
    assert fingerprint_round(record, judge_round(record, SE_50KR), SE_50KR) == {}


def test_classifying_a_correct_settlement_is_refused():
    context = MismatchContext(
        "ante", Decimal(100), Decimal(100), Decimal(100), Decimal(100), Decimal(400), Decimal(0),
        "preflop_4x", 4, 1, True, Outcome.WON, SE_50KR.blind_pays, TRIPS_PAYS, SE_50KR.minor_unit,
    )
    with pytest.raises(ValueError):
        classify(context)


ANTES = st.integers(1, 20).map(lambda units: Decimal(50 * units))
BETS = ("ante", "blind", "play", "trips")


@settings(max_examples=150, deadline=None)
@given(
    st.permutations(range(52)), ANTES, st.sampled_from(sorted(DECISION_MULTIPLES)),
    st.booleans(), st.sampled_from(BETS), st.integers(-5000, 5000).filter(bool),
)
def test_any_single_mistake_gets_one_fingerprint_of_its_amount(
    deck, ante, decision, trips, bet, cents
):
    delta = Decimal(cents) / 100
    texts = [f"{'23456789TJQKA'[c // 4]}{'cdhs'[c % 4]}" for c in deck[:9]]
    board, dealer, hole = " ".join(texts[:5]), " ".join(texts[5:7]), " ".join(texts[7:])
    kwargs = {
        "hole": hole, "ante": str(ante), "decision": decision, "trips": str(ante if trips else 0),
    }
    honest = judge_round(deal(board, dealer, seat(1, **kwargs)), SE_50KR)
    wrong = str(honest.seats[0].settled[bet] + delta)
    (found,) = fingerprints(board, dealer, {bet: wrong}, **kwargs)
    assert found.bet == bet and found.amount_for_player == delta
    assert found.direction is (FOR_PLAYER if delta > 0 else FOR_HOUSE)


# Tallies.


def fp(kind: ErrorType, amount: str, bet: str = "blind") -> Fingerprint:
    direction = FOR_PLAYER if Decimal(amount) > 0 else FOR_HOUSE
    return Fingerprint(kind, direction, bet, Decimal(amount))


def test_tallies_count_every_seat_round_and_keep_currencies_apart():
    tallies = tally_errors([
        SeatRound("d1", "p1", "SEK", (
            fp(T.BLIND_WRONG_LINE, "150"), fp(T.ANTE_NOT_PUSHED, "-100", "ante"),
        )),
        SeatRound("d1", "p1", "SEK", ()),
        SeatRound("d1", "p1", "USD", (fp(T.BLIND_WRONG_LINE, "7.50"),)),
        SeatRound("d1", None, "SEK", (fp(T.BLIND_WRONG_LINE, "50"),)),
        SeatRound("d2", "p1", "SEK", ()),
    ])
    sek, usd = tallies.by_dealer["d1"]["SEK"], tallies.by_dealer["d1"]["USD"]
    assert (sek.seat_rounds, sek.erring, sek.favourable) == (3, 2, 2)
    assert sek.counts == {(T.BLIND_WRONG_LINE, FOR_PLAYER): 2, (T.ANTE_NOT_PUSHED, FOR_HOUSE): 1}
    assert sek.amounts[T.BLIND_WRONG_LINE, FOR_PLAYER] == Decimal(200)
    assert sek.amount_for_player == Decimal(100)
    assert (usd.seat_rounds, usd.amount_for_player) == (1, Decimal("7.50"))
    # The unknown player counts for the dealer, never as a pair.
    assert set(tallies.by_pair) == {("d1", "p1"), ("d2", "p1")}
    assert tallies.by_pair["d1", "p1"]["SEK"].seat_rounds == 2
    assert tallies.by_pair["d2", "p1"]["SEK"].erring == 0


# The hypergeometric tail, exactly.


def brute_force_tail(population: int, successes: int, draws: int, observed: int) -> Fraction:
    hands = list(combinations(range(population), draws))
    hits = sum(1 for hand in hands if sum(1 for i in hand if i < successes) >= observed)
    return Fraction(hits, len(hands))


def test_the_tail_by_hand():
    # P(X >= 2), N=10, K=3, n=4: (C(3,2) C(7,2) + C(3,3) C(7,1)) / C(10,4) = 70/210.
    assert hypergeometric_tail(10, 3, 4, 2) == Fraction(1, 3)


@given(st.integers(0, 11).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(0, n), st.integers(0, n), st.integers(-1, n + 1))))
def test_the_tail_equals_counting_every_draw(case):
    assert hypergeometric_tail(*case) == brute_force_tail(*case)


def test_the_tail_is_exact_far_out():
    # 10 of a dealer's 10 errors on 10 of his 100,000 seat-rounds: 1 / C(100000, 10).
    p = hypergeometric_tail(100_000, 10, 10, 10)
    by_draws = Fraction(1)
    for i in range(10):  # each draw in turn one of the errors left
        by_draws *= Fraction(10 - i, 100_000 - i)
    assert p == by_draws
    assert 0 < float(p) < 1e-40


# The sweetheart test on seeded synthetic shifts.


def shift(seed: int, *, rate: float, friend_rate: float | None = None, friend_rounds: int = 0):
    """Dealer d1 deals 20 players 250 seat-rounds each, erring for the player at ``rate``;
    a friend, when given, sits ``friend_rounds`` times and is favoured at ``friend_rate``."""
    rng = random.Random(seed)
    rows = []

    def dealt(player: str, chance: float) -> None:
        favoured = rng.random() < chance
        against = rng.random() < rate / 2
        found = (fp(T.BLIND_WRONG_LINE, "50"),) if favoured else ()
        found += (fp(T.PLAY_MULTIPLE, "-100", "play"),) if against else ()
        rows.append(SeatRound("d1", player, "SEK", found))

    for i in range(20 * 250):
        dealt(f"p{i % 20}", rate)
    for _ in range(friend_rounds):
        dealt("friend", friend_rate)
    return rows


@pytest.mark.parametrize("seed", range(8))
def test_random_errors_spread_over_players_raise_nothing(seed):
    assert suspected_sweetheart_dealing(tally_errors(shift(seed, rate=0.03))) == []


@pytest.mark.parametrize("seed", range(4))
def test_a_dealer_who_errs_for_everyone_is_no_sweetheart(seed):
    # A fifth of every player's seat-rounds overpaid: the friend's 40-odd errors are chance.
    rows = shift(seed, rate=0.2, friend_rate=0.2, friend_rounds=200)
    assert suspected_sweetheart_dealing(tally_errors(rows)) == []


@pytest.mark.parametrize("seed", range(4))
def test_a_dealer_who_overpays_one_player_is_flagged(seed):
    rows = shift(seed, rate=0.03, friend_rate=0.25, friend_rounds=200)
    (case,) = suspected_sweetheart_dealing(tally_errors(rows))
    friend = [r for r in rows if r.player == "friend"]
    favoured = [r for r in rows if any(f.direction is FOR_PLAYER for f in r.fingerprints)]
    assert (case.dealer, case.player) == ("d1", "friend")
    assert (case.dealer_seat_rounds, case.pair_seat_rounds) == (len(rows), 200)
    assert case.dealer_favourable == len(favoured)
    assert case.pair_favourable == sum(1 for r in friend if r in favoured) >= 3
    assert case.p_value == hypergeometric_tail(len(rows), len(favoured), 200, case.pair_favourable)
    assert case.p_value < case.threshold == 1e-4
    assert case.rate_to_others < Fraction(case.pair_favourable, 200)
    (line,) = [e for e in case.errors if e.direction is FOR_PLAYER]
    assert (line.currency, line.type) == ("SEK", T.BLIND_WRONG_LINE)
    assert line.amount_for_player == 50 * case.pair_favourable


def test_two_favourable_errors_are_never_a_case_however_unlikely():
    rows = [SeatRound("d1", f"p{i % 50}", "SEK") for i in range(10_000)]
    rows += [SeatRound("d1", "friend", "SEK", (fp(T.BLIND_WRONG_LINE, "50"),))] * 2
    assert suspected_sweetheart_dealing(tally_errors(rows)) == []
    lenient = SweetheartSettings(min_favourable=2)
    (case,) = suspected_sweetheart_dealing(tally_errors(rows), lenient)
    assert (case.pair_seat_rounds, case.pair_favourable, case.dealer_favourable) == (2, 2, 2)
    assert case.p_value == Fraction(1, 10_002 * 10_001 // 2)
