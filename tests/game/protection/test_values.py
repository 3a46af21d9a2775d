"""Decision values against brute force: the river through the settlement engine itself, the
flop by enumerating every turn, river and dealer hand."""

from __future__ import annotations

import random
from decimal import Decimal
from itertools import combinations

import pytest

from game.evaluator import evaluate
from game.protection import values as v
from game.protection.streets import CHECK
from game.record import RoundRecord, SeatRecord
from game.rules import DECISION_MULTIPLES
from game.settlement import settle_game
from tests.game.engine_rounds import cards
from tests.game.engine_rules import SE_50KR

PAYS = v.PayTable.of(SE_50KR)
ONE = Decimal(1)


def settled_in_antes(hole, board, dealer, decision: str) -> float:
    """The seat's Ante + Blind + Play result, Ante = 1, as the settlement engine gives it."""
    seat = SeatRecord(1, tuple(hole), ONE, ONE, Decimal(0), Decimal(DECISION_MULTIPLES[decision]), decision)
    game = settle_game(RoundRecord((seat,), tuple(board), tuple(dealer)), SE_50KR)
    results = game.seats[1].results
    return float(results["ante"] + results["blind"] + results["play"])


def spots(count: int, board_cards: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        deck = list(range(52))
        rng.shuffle(deck)
        yield deck[:2], deck[2:2 + board_cards], deck[2 + board_cards:]


@pytest.mark.parametrize("hole, board, rest", list(spots(12, 5, seed=990)))
def test_the_river_is_the_mean_of_the_engines_settlement_over_every_dealer_hand(hole, board, rest):
    dealers = list(combinations(rest, 2))
    assert len(dealers) == 990
    expected = sum(settled_in_antes(hole, board, d, "river_1x") for d in dealers) / len(dealers)
    got = v.river_values(hole, board, PAYS)
    assert got["river_1x"] == pytest.approx(expected, abs=1e-12)
    assert got["fold"] == -2 == settled_in_antes(hole, board, dealers[0], "fold")


@pytest.mark.parametrize("hole, board, rest", list(spots(6, 5, seed=44)))
def test_the_river_with_a_dealer_card_seen_and_dead_cards(hole, board, rest):
    seen, dead = rest[0], rest[1:7]
    others = [c for c in rest[7:]]
    expected = sum(settled_in_antes(hole, board, (seen, o), "river_1x") for o in others) / len(others)
    assert v.river_values(hole, board, PAYS, known_dealer=(seen,), dead=dead)["river_1x"] == pytest.approx(expected)
    dealers = list(combinations(rest[1:], 2))  # the seen card is not dead: it is the dealer's
    expected = sum(settled_in_antes(hole, board, d, "river_1x") for d in dealers) / len(dealers)
    assert v.river_values(hole, board, PAYS, dead=(seen,))["river_1x"] == pytest.approx(expected)


def brute_flop(hole, flop, pays, known_dealer=()):
    """Every turn and river, every dealer hand: 2x, and check then the better of 1x and fold."""
    qualifier = pays.qualifier

    def result(player, dealer, multiple):
        qualifies = dealer >= qualifier
        if player > dealer:
            return (1 if qualifies else 0) + pays.blind[player >> 20] + multiple
        if player < dealer:
            return -(1 if qualifies else 0) - 1 - multiple
        return 0.0

    deck = [c for c in range(52) if c not in (*hole, *flop, *known_dealer)]
    bet_total, check_total, boards = 0.0, 0.0, 0
    for turn_river in combinations(deck, 2):
        board = [*flop, *turn_river]
        player = evaluate([*hole, *board])
        rest = [c for c in deck if c not in turn_river]
        hands = (
            [(known_dealer[0], c) for c in rest] if known_dealer else list(combinations(rest, 2))
        )
        bet = call = 0.0
        for hand in hands:
            dealer = evaluate([*board, *hand])
            bet += result(player, dealer, 2)
            call += result(player, dealer, 1)
        bet_total += bet / len(hands)
        check_total += max(call / len(hands), -2.0)
        boards += 1
    return {"flop_2x": bet_total / boards, CHECK: check_total / boards}


@pytest.mark.slow
@pytest.mark.parametrize("hole, flop", [
    (cards("Ah 7c"), cards("7d 2s Kh")),   # a pair, top kicker
    (cards("9s 8s"), cards("Ts 2s Jd")),   # a flush and a straight draw
])
def test_the_flop_against_every_turn_river_and_dealer_hand(hole, flop):
    got = v.flop_values(hole, flop, PAYS)
    expected = brute_flop(hole, flop, PAYS)
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("hole, board, rest", list(spots(3, 3, seed=3)))
def test_the_flop_with_a_dealer_card_seen(hole, board, rest):
    seen = (rest[0],)
    assert v.flop_values(hole, board, PAYS, known_dealer=seen) == pytest.approx(
        brute_flop(hole, board, PAYS, seen), abs=1e-12
    )


def seated(seed: int, seats: int, board_cards: int):
    """A dealt round: the board, the dealer's cards, each seat's hole cards."""
    deck = random.Random(seed).sample(range(52), board_cards + 2 + 2 * seats)
    holes = [tuple(deck[board_cards + 2 + 2 * i: board_cards + 4 + 2 * i]) for i in range(seats)]
    return deck[:board_cards], deck[board_cards:board_cards + 2], holes


def views_of_a_round(dealer, holes):
    """Every view scoring values: each seat's own, each dealer card known, the others' cards dead."""
    views = []
    for hole in holes:
        others = [c for h in holes if h != hole for c in h]
        views += [v.View.of(hole), v.View.of(hole, known_dealer=dealer[:1]),
                  v.View.of(hole, known_dealer=dealer[1:]), v.View.of(hole, dead=others),
                  v.View.of(hole, known_dealer=dealer[:1], dead=others[:2])]
    return views


@pytest.mark.parametrize("seed", range(4))
def test_the_views_of_a_round_valued_together_are_each_valued_alone(seed):
    # Together the dealer's hands are valued once, from every card off the board, and each
    # view takes back what its own cards make impossible; alone a view's dealer hands leave
    # its cards out from the start. Two ways of counting, the same counts and values.
    for board_cards, seats in ((5, 6), (3, 3)):
        board, dealer, holes = seated(seed, seats, board_cards)
        views = views_of_a_round(dealer, holes)
        v.forget_values()
        together = v.values_of(views, board, PAYS)
        alone = []
        for view in views:
            v.forget_values()
            v._dealer_hands.cache_clear()
            alone.append(v.values_of([view], board, PAYS)[0])
        assert together == alone


@pytest.mark.parametrize("seed", range(3))
def test_a_river_valued_for_every_view_at_once_is_the_engines_settlement(seed):
    board, dealer, holes = seated(100 + seed, 4, 5)
    views = views_of_a_round(dealer, holes)
    got = v.values_of(views, board, PAYS)
    for view, values in zip(views, got):
        rest = [c for c in range(52) if c not in (*board, *view.hole, *view.dead)]
        hands = [h for h in combinations(rest, 2) if set(view.known_dealer) <= set(h)]
        expected = sum(settled_in_antes(view.hole, board, h, "river_1x") for h in hands) / len(hands)
        assert values["river_1x"] == pytest.approx(expected, abs=1e-12)


def test_a_card_given_twice_is_refused():
    with pytest.raises(ValueError, match="twice"):
        v.river_values(cards("Ah Kh"), cards("Ah 2c 3d 4s 9h"), PAYS)


@pytest.mark.parametrize("hole, flop, best", [
    ("Qd Qc", "2s 7h 9c", "flop_2x"),   # a hidden pair
    ("3d 7c", "3s Th Kc", "flop_2x"),   # a hidden pair of threes
    ("2d 2c", "8s Th Kc", CHECK),       # deuces under the board: the published exception
    ("Jh 4h", "Ah 9h 2c", "flop_2x"),   # four to a flush, jack high to it
    ("6d 4c", "9s Th Kc", CHECK),       # nothing
    ("Kd 9c", "Ks 9h 3c", "flop_2x"),   # two pair
])
def test_flop_decisions_the_published_strategy_names(hole, flop, best):
    values = v.flop_values(cards(hole), cards(flop), PAYS)
    assert max(values, key=values.get) == best


@pytest.mark.parametrize("hole, board, best", [
    ("8d 3c", "8s Th Kc 2d 5h", "river_1x"),  # a hidden pair
    ("7d 3c", "Ks Kh 9c 9d 2h", "fold"),      # the board plays, few outs beat it
    ("Ad Kc", "Qs 8h 6c 4d 2h", "river_1x"),  # ace high: only a pair beats it
])
def test_river_decisions_the_published_strategy_names(hole, board, best):
    values = v.river_values(cards(hole), cards(board), PAYS)
    assert max(values, key=values.get) == best
