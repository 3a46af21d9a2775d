"""The seat-seat covariance: its bulk evaluator, strategy and settlement against the engine, its data."""

from __future__ import annotations

import hashlib
import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from books import seat_covariance as sc
from books.statistics import seven_card_category_counts, trips_math
from game import hand_arrays as ha
from game import strategy
from game.cards import parse_cards
from game.evaluator import evaluate
from game.record import RoundRecord, SeatRecord
from game.verdict import judge_round

from tests.game.engine_rules import BLIND_PAYS, SE_50KR, TRIPS_PAYS

GAME = sc.Game.of(BLIND_PAYS)
ANTE = Decimal(100)


def cards(text: str) -> tuple[int, ...]:
    return parse_cards(text.split())


def random_hands(rng: np.random.Generator, hands: int, size: int) -> np.ndarray:
    return np.argsort(rng.random((hands, 52)), axis=1)[:, :size]


# ---- the evaluator in bulk ---------------------------------------------------


def test_the_bulk_evaluator_values_seven_card_hands_as_the_engine_does():
    hands = random_hands(np.random.default_rng(20261201), 25_000, 7)
    values = ha.values_of(hands)
    assert values.tolist() == [evaluate(hand) for hand in hands.tolist()]


@pytest.mark.parametrize("size", [5, 6])
def test_the_bulk_evaluator_values_five_and_six_card_hands_as_the_engine_does(size):
    hands = random_hands(np.random.default_rng(size), 5_000, size)
    assert ha.values_of(hands).tolist() == [evaluate(h) for h in hands.tolist()]


def test_the_bulk_evaluator_meets_every_category_and_the_wheel():
    hands = [
        "Ah Kh Qh Jh Th 2c 3d", "9s 8s 7s 6s 5s Ac Ad", "5d 4d 3d 2d Ad Kc Kh", "Ac Ad Ah As Kc 2d 3h",
        "Kc Kd Kh 2s 2c 2d 3h", "2h 7h 9h Jh Kh Ac Ad", "Ac 2d 3h 4s 5c 9d Kh", "9c 9d 9h Ac 2d 4h 6s",
        "9c 9d 2h 2s Kc Kd 3h", "9c 9d 2h 4s 6c Kd 3h", "2c 4d 6h 8s Tc Qd Ah",
    ]
    rows = np.array([cards(text) for text in hands])
    assert ha.values_of(rows).tolist() == [evaluate(cards(t)) for t in hands]


def test_each_unseen_card_added_to_a_board_is_valued_as_the_engine_does():
    boards = random_hands(np.random.default_rng(7), 200, 5).tolist()
    boards.append(list(cards("Ah Kh Qh Jh 9h")))  # a flush on the board: every card adds to it
    values = ha.values_with_each_card(np.array(boards))
    for board, row in zip(boards, values.tolist()):
        assert row == [-1 if c in board else evaluate([*board, c]) for c in range(52)]


# ---- the strategy ------------------------------------------------------------


@pytest.mark.parametrize(
    "hole, raises",
    [
        ("Kh 2h", True), ("Kh 4c", False), ("Kh 5c", True), ("Qh 7c", False), ("Qh 8c", True),
        ("Qh 6h", True), ("Qh 5h", False), ("Jh 8h", True), ("Jh 7h", False), ("Jh Tc", True),
        ("Jh 9c", False), ("Th 9h", False), ("2h 2c", False), ("3h 3c", True), ("Ah 2c", True),
    ],
)
def test_the_preflop_4x_rule_on_known_hands(hole, raises):
    assert strategy.preflop_4x(cards(hole)) is raises


@pytest.mark.parametrize(
    "hole, flop, raises",
    [
        ("9c 4d", "7h 7s 7d", False),  # three of a kind on the flop alone
        ("9c 4d", "9h 4s 2d", True),  # two pair with both hole cards
        ("2c 2d", "Kh 7s 4d", False),  # pocket deuces
        ("2c 2d", "Kh Ks 4d", True),  # ... but two pair with a pair on the flop
        ("5c 5d", "Kh 7s 4d", True),  # a hidden pair
        ("9c 4d", "4h Ks 2d", True),  # a hole card pairs the flop
        ("Th 4c", "2h 7h Kh", True),  # four to a flush with a hidden ten of that suit
        ("9h 4c", "2h 7h Kh", False),  # ... with a hidden nine only
        ("9c 4h", "Ah 7h Kh", False),  # a ten or better of the suit must be a hole card
        ("8c 6d", "7h 5s 4d", True),  # a straight
        ("9c 6d", "8h 3s Td", False),  # nothing
    ],
)
def test_the_flop_2x_rule_on_known_hands(hole, flop, raises):
    assert strategy.flop_2x(cards(hole), cards(flop)) is raises


def test_the_river_rule_counts_dealer_outs_without_ties():
    # 15 cards pair the board, 4 kings and 4 jacks beat ten-high; the 3 tens only tie.
    hole, board = cards("Tc 3s"), cards("Ad Qh 8c 6s 4d")
    assert strategy.dealer_outs(hole, board) == 23
    assert strategy.river_1x(hole, board) is False
    assert strategy.river_1x(cards("8s 5c"), cards("8d Jh 2c Ks 7d")) is True  # a hidden pair
    assert strategy.river_1x(cards("2s 2c"), cards("Ad Kh Qc 9s 7d")) is True  # pocket deuces count here
    # Ace-king high: only the 15 cards that pair the board beat it, fewer than 21.
    hole, board = cards("Ad Kc"), cards("2s 5h 7c 8d Js")
    assert strategy.dealer_outs(hole, board) == 15
    assert strategy.river_1x(hole, board) is True
    # King-queen high: 15 pairing cards, 4 aces and 4 sixes (a straight) make 23.
    assert strategy.dealer_outs(cards("Kd Qc"), cards("2s 5h 7c 8d 9s")) == 23


def test_a_pair_on_the_board_alone_is_not_hidden():
    assert strategy.hidden_pair_or_better(cards("Kd 4c"), cards("9s 9h 2c 6d Js")) is False
    assert strategy.hidden_pair_or_better(cards("Kd 4c"), cards("9s 9h 2c 6d Ks")) is True
    # A straight made with a hole card beats what the board holds; the board's own straight does not.
    assert strategy.hidden_pair_or_better(cards("Kd 3c"), cards("9s Th Jc Qd 2s")) is True
    assert strategy.hidden_pair_or_better(cards("2d 3c"), cards("9s Th Jc Qd Ks")) is False


def dealt(rounds: int, seed: int) -> np.ndarray:
    return sc.deal(np.random.default_rng(seed), rounds)


def test_the_bulk_strategy_decides_as_the_plain_rules_do():
    deals = dealt(3_000, 11)
    played = sc.play_rounds(deals, GAME)
    for row, multiples in zip(deals.tolist(), played["multiple"].tolist()):
        board = tuple(row[sc.BOARD])
        assert multiples == [strategy.play_multiple(tuple(row[i] for i in hole), board) for hole in sc.HOLE]


def test_the_bulk_settlement_is_the_engines():
    deals = dealt(2_500, 12)
    played = sc.play_rounds(deals, GAME)
    for row, results in zip(deals.tolist(), played["result"].tolist()):
        board, dealer = tuple(row[sc.BOARD]), tuple(row[sc.DEALER])
        seats = []
        for number, hole in enumerate(sc.HOLE, start=1):
            hole_cards = (row[hole[0]], row[hole[1]])
            multiple = strategy.play_multiple(hole_cards, board)
            seats.append(SeatRecord(number, hole_cards, ANTE, ANTE, ANTE, ANTE * multiple,
                                    strategy.DECISION_OF_MULTIPLE[multiple]))
        verdict = judge_round(RoundRecord(tuple(seats), board, dealer), SE_50KR)
        engine = [
            (s.settled["ante"] + s.settled["blind"] + s.settled["play"]) / ANTE * GAME.scale
            for s in verdict.seats
        ]
        assert engine == [Decimal(r) for r in results], (row, engine, results)


def test_the_sample_meets_every_result_the_settlement_table_allows():
    played = sc.play_rounds(dealt(20_000, 13), GAME)
    multiples = set(played["multiple"].ravel().tolist())
    assert multiples == {0, 1, 2, 4}
    results = played["result"] // GAME.scale
    assert {-2, 0}.issubset(set(results.ravel().tolist()))
    dealer_qualifies = (played["dealer_hand"] >> 20) >= 1
    assert dealer_qualifies.any() and (~dealer_qualifies).any()


# ---- sums, chunks and the figures from them ---------------------------------


def test_the_same_seed_gives_the_same_sums_however_the_chunks_are_shared():
    whole = sc.derive(GAME, rounds=60_000, seed=5)
    halves = sc.merge(
        sc.derive(GAME, rounds=60_000, seed=5, chunks=[0, 2, 4]),
        sc.derive(GAME, rounds=60_000, seed=5, chunks=[1, 3, 5]),
    )
    assert [b.to_json() for b in halves.batches] == [b.to_json() for b in whole.batches]
    assert sc.derive(GAME, rounds=60_000, seed=5).total.to_json() == whole.total.to_json()
    assert sc.derive(GAME, rounds=60_000, seed=6).total.to_json() != whole.total.to_json()


def test_two_processes_give_the_sums_of_one():
    one = sc.derive(GAME, rounds=40_000, seed=8, processes=1)
    two = sc.derive(GAME, rounds=40_000, seed=8, processes=2)
    assert [b.to_json() for b in two.batches] == [b.to_json() for b in one.batches]


def test_the_sums_add_up():
    total = sc.derive(GAME, rounds=30_000, seed=9).total
    assert total.rounds == 30_000 == sum(map(sum, total.joint))
    assert sum(total.decisions) == 2 * total.rounds
    for seat in range(2):
        assert sum(total.same[seat]) == total.x[seat] == sum(total.other[seat])


def sums_with_joint(joint: list[list[int]]) -> sc.PairSums:
    return sc.PairSums(rounds=sum(map(sum, joint)), joint=joint)


def test_independent_seats_have_no_trips_covariance():
    first = [3, 5, 2, 7, 1, 1, 2, 1, 1, 1]
    second = [2, 9, 4, 1, 3, 2, 1, 1, 2, 5]  # other marginals: independence, not symmetry
    independent = sums_with_joint([[a * b for b in second] for a in first])
    assert sc.trips_covariance_of(independent, TRIPS_PAYS) == 0
    assert sc.trips_covariance_of(independent, {3: "1.5", 9: 1000}) == 0


def test_seats_that_always_share_a_category_have_the_trips_variance_as_covariance():
    counts = seven_card_category_counts()
    same = sums_with_joint([[counts[i] if i == j else 0 for j in range(10)] for i in range(10)])
    assert sc.trips_covariance_of(same, TRIPS_PAYS) == trips_math(TRIPS_PAYS).variance
    assert sc.trips_variance_of(same, TRIPS_PAYS) == trips_math(TRIPS_PAYS).variance


def test_base_figures_are_the_sample_moments():
    x = np.array([[2, -4], [0, 6], [-4, -4], [10, 2]])  # results in half Antes (scale 2)
    played = {"result": x, "category": np.zeros_like(x), "multiple": np.ones_like(x)}
    sums = sc.PairSums.of_rounds(played)
    half = x / 2
    mean = half.mean(axis=0)
    assert float(sc.base_mean(sums, 2)) == pytest.approx(mean.mean())
    assert float(sc.base_variance(sums, 2)) == pytest.approx(half.var(axis=0).mean())
    assert float(sc.base_covariance(sums, 2)) == pytest.approx(
        (half[:, 0] * half[:, 1]).mean() - mean[0] * mean[1])


# ---- the shipped data --------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> sc.SeatCovariance:
    sc.load_seat_covariance.cache_clear()
    return sc.load_seat_covariance()


def within(a: Decimal, b: Decimal, se_a: Decimal, se_b: Decimal, z: int = 4) -> bool:
    return abs(a - b) <= z * (se_a * se_a + se_b * se_b).sqrt()


def test_a_smaller_rederivation_agrees_with_the_shipped_figures(shipped):
    started = time.monotonic()
    sample = sc.derive(GAME, rounds=200_000, seed=424242)
    assert time.monotonic() - started < 30
    base = sc.base_figures(sample)
    trips = sc.trips_figures(sample, TRIPS_PAYS)
    assert within(base["base_covariance"].value, shipped.base_covariance,
                  base["base_covariance"].se, shipped.base_covariance_se)
    assert within(base["base_variance"].value, shipped.base_variance,
                  base["base_variance"].se, shipped.base_variance_se)
    # The Trips covariance shipped is exact: the sample's estimate agrees with it within its error.
    assert shipped.trips_covariance_se(TRIPS_PAYS) == 0
    assert within(trips["trips_covariance"].value, shipped.trips_covariance(TRIPS_PAYS),
                  trips["trips_covariance"].se, Decimal(0))


def test_the_shipped_simulation_agrees_with_the_exact_trips_variance(shipped):
    exact = trips_math(TRIPS_PAYS).variance
    simulated = sc.estimate(lambda s: sc.trips_variance_of(s, TRIPS_PAYS),
                            shipped.sums, shipped.batch_sums)
    assert within(simulated.value, sc.to_decimal(exact), simulated.se, Decimal(0))


def test_the_shipped_figures_are_the_ones_its_sums_give(shipped):
    document = sc._read(str(sc.DATA_PATH))[1]
    entry = document["games"][shipped.game]
    figures = entry["figures"]
    assert Decimal(figures["base_covariance"]["value"]) == shipped.base_covariance
    assert Decimal(figures["base_covariance"]["se"]) == shipped.base_covariance_se
    assert Decimal(figures["base_variance"]["value"]) == shipped.base_variance
    for name in ("se-50kr", "us-30k"):
        trips = figures["trips"][name]
        assert Decimal(trips["trips_covariance"]["value"]) == shipped.trips_covariance_simulated(TRIPS_PAYS)[0]
        assert Decimal(trips["base_trips_covariance_same_seat"]["value"]) == \
            shipped.base_trips_covariance(TRIPS_PAYS, same_seat=True)
        assert Decimal(trips["base_trips_covariance_other_seat"]["value"]) == \
            shipped.base_trips_covariance(TRIPS_PAYS, same_seat=False)
    total = sc.PairSums()
    for batch in shipped.batch_sums:
        total.add(batch)
    assert total.to_json() == shipped.sums.to_json() == entry["sums"]


def test_the_loader_names_its_file_and_its_game(shipped):
    raw = sc.DATA_PATH.read_bytes()
    assert shipped.fingerprint == "sha256:" + hashlib.sha256(raw).hexdigest()[:16]
    assert shipped.version == sc.VERSION
    assert shipped.strategy == sc.STRATEGY
    assert shipped.rounds == 10_000_000
    assert shipped.game == GAME.fingerprint
    assert sc.load_seat_covariance(BLIND_PAYS, "pair") is sc.load_seat_covariance(
        {"royal_flush": "500", "straight_flush": "50", "four_of_a_kind": "10",
         "full_house": "3", "flush": "1.50", "straight": 1})
    for value in (shipped.base_covariance, shipped.base_variance, shipped.base_covariance_se,
                  shipped.trips_covariance(TRIPS_PAYS),
                  shipped.base_trips_covariance(TRIPS_PAYS, same_seat=False)):
        assert type(value) is Decimal


def test_a_game_never_derived_is_refused():
    with pytest.raises(sc.SeatCovarianceMissing):
        sc.load_seat_covariance({**BLIND_PAYS, 9: Decimal(1000)})
    with pytest.raises(sc.SeatCovarianceMissing):
        sc.load_seat_covariance(BLIND_PAYS, dealer_qualifier="high_card")


def test_the_shipped_covariances_are_positive_and_below_the_variances(shipped):
    assert 0 < shipped.base_covariance < shipped.base_variance
    trips_variance = trips_math(TRIPS_PAYS).variance
    assert 0 < Fraction(shipped.trips_covariance(TRIPS_PAYS)) < trips_variance
    assert shipped.base_trips_covariance(TRIPS_PAYS, same_seat=True) > \
        shipped.base_trips_covariance(TRIPS_PAYS, same_seat=False) > 0
