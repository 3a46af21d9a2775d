"""A companion's cards on the flop: the rule the collusion test reads, its counts, and the scores
that carry it (``game.protection.flop_companions``)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from game.cards import parse_card
from game.evaluator import evaluate
from game.protection import flop_companions as fc
from game.protection import values as v
from game.protection.lines import LineModel, ShownSeat
from game.protection.preflop import shipped_table
from game.protection.scoring import best_of, companion_knowledge, score_seats, shown_lines
from game.protection.streets import CHECK, choices
from tests.game.engine_rules import SE_50KR

PAYS = v.PayTable.of(SE_50KR)


def cards(text: str) -> list[int]:
    return [parse_card(c) for c in text.split()]


def test_every_dealer_hand_drawn_leaves_the_flop_and_its_turn_and_river():
    flop = cards("2s 7s 9d")
    found = fc.flop_runouts(flop)
    assert found is fc.flop_runouts(list(reversed(flop)))  # the order the flop is listed in changes nothing
    assert len(found.runouts) == 49 * 48 // 2 and len({tuple(r) for r in found.runouts.tolist()}) == len(found.runouts)
    assert not np.isin(found.runouts, flop).any()
    flop_bits = sum(1 << c for c in flop)
    assert (found.dealers & flop_bits == 0).all()
    assert (found.dealers & found.runout_bits[:, None] == 0).all()
    assert all(bin(int(d)).count("1") == 2 for d in found.dealers.ravel()[:500])
    # Each hand's value is the engine's, of the flop, the turn and river, and the two drawn cards.
    for r, k in [(0, 0), (700, 5), (1175, fc.RUNOUT_DEALERS - 1)]:
        dealer = [c for c in range(52) if int(found.dealers[r, k]) >> c & 1]
        assert found.values[r, k] == evaluate([*flop, *found.runouts[r].tolist(), *dealer])


def _moved_by_hand(hole, flop, found, pair) -> float:
    """The pair's move of the equity, counted turn and river by turn and river."""
    def equity(r: int) -> float | None:
        if set(found.runouts[r].tolist()) & set(hole):
            return None
        player = evaluate([*hole, *flop, *found.runouts[r].tolist()])
        beats = [np.sign(player - int(found.values[r, k])) for k in range(fc.RUNOUT_DEALERS)
                 if not any(int(found.dealers[r, k]) >> c & 1 for c in hole)]
        return sum(beats) / len(beats) if beats else 0.0

    every = [(r, e) for r in range(len(found.runouts)) if (e := equity(r)) is not None]
    without = [e for r, e in every if not set(found.runouts[r].tolist()) & set(pair)]
    return sum(without) / len(without) - sum(e for _, e in every) / len(every)


def test_a_pair_s_move_is_the_mean_over_the_turns_and_rivers_without_its_cards():
    rng = random.Random(5)
    for _ in range(3):
        deck = rng.sample(range(52), 5)
        hole, flop = deck[:2], deck[2:]
        found = fc.flop_runouts(flop)
        pairs = fc.unseen_pairs(hole, flop)
        moved = fc.equity_moved(hole, flop, found, pairs)
        for row in rng.sample(range(len(pairs)), 4):
            assert moved[row] == pytest.approx(_moved_by_hand(hole, flop, found, pairs[row].tolist()), abs=1e-12)


def test_no_pair_moves_the_equity_further_than_the_bound_that_spares_the_counting():
    rng = random.Random(7)
    bound = 2 * fc.MOST_TAKEN / (fc.CLEAR - fc.MOST_TAKEN)
    for _ in range(20):
        deck = rng.sample(range(52), 7)
        hole, board = deck[:2], deck[2:]
        found, pairs = fc.flop_runouts(board[:3]), fc.unseen_pairs(hole, board)
        moved = fc.equity_moved(hole, board[:3], found, pairs)
        assert np.abs(moved).max() < bound
        wide = fc.FLOP_SLOPE * bound + 1e-9
        for gap in (wide, -wide):
            assert (fc.pair_bets(hole, board[:3], found, {"flop_2x": gap, CHECK: 0.0}, pairs)
                    == (gap + fc.FLOP_SLOPE * moved > 0)).all()


def test_a_pair_holding_his_outs_makes_his_draw_worth_less():
    hole, flop = cards("As Ks"), cards("2s 7s 9d")
    pairs = np.asarray([cards("3s 4s"), cards("3d 4c")])
    moved = fc.equity_moved(hole, flop, fc.flop_runouts(flop), pairs)
    assert moved[0] < -0.02 and moved[0] < moved[1] - 0.02


def test_the_rule_follows_what_the_pair_does_to_the_exact_values():
    rng = random.Random(3)
    agree = total = 0
    for _ in range(25):
        deck = rng.sample(range(52), 7)
        hole, board = deck[:2], deck[2:]
        own = v.flop_values(hole, board[:3], PAYS)
        pairs = fc.unseen_pairs(hole, board)
        bets = fc.pair_bets(hole, board[:3], fc.flop_runouts(board[:3]), own, pairs)
        for row in rng.sample(range(len(pairs)), 4):
            exact = best_of(v.flop_values(hole, board[:3], PAYS, dead=tuple(pairs[row].tolist())))
            agree += (exact == "flop_2x") == bool(bets[row])
            total += 1
    assert agree >= 0.95 * total


def test_each_seat_on_the_flop_carries_each_companion_s_verdict_and_its_shares():
    board, dealer = cards("2s 7s 9d Qh 3c"), cards("Kd Kc")
    holes = [cards("Ac Tc"), cards("8h 8d"), cards("Jd 4h")]  # A-T: a flop on the edge of 2x
    decisions = ["river_1x", "flop_2x", "fold"]
    names = ["A", "B", "C"]
    others = [{n: h for n, h in zip(names, holes) if n != names[i]} for i in range(3)]
    scores = score_seats(holes, decisions, board, dealer, PAYS, shipped_table(), others)
    marginal = 0
    for i, score in enumerate(scores):
        flop = next(d for d in score.decisions if d.street == "flop")
        pairs = fc.unseen_pairs(holes[i], board)
        bets = fc.pair_bets(holes[i], board[:3], fc.flop_runouts(board[:3]), flop.values, pairs)
        for name, hole in others[i].items():
            told = flop.informed[companion_knowledge(name)]
            assert told.values == {}  # a rule, not an exact valuation
            assert told.best == ("flop_2x" if bets[fc.pair_row(holes[i], board, hole)] else CHECK)
            # His pairs leave every card dealt elsewhere: the other seat's and the dealer's.
            elsewhere = [*dealer, *(c for n, h in others[i].items() if n != name for c in h)]
            free = ~np.isin(pairs, elsewhere).any(axis=1)
            assert free.sum() == len(pairs) - 4 * 44 + 6
            assert told.shares == pytest.approx({"flop_2x": bets[free].mean(), CHECK: 1 - bets[free].mean()})
            marginal += 0 < told.shares["flop_2x"] < 1
    assert marginal >= 2
    # Without companions (collusion not tested) the flop carries only the dealer's cards.
    alone = score_seats(holes, decisions, board, dealer, PAYS, shipped_table())
    assert all(not any(k.startswith("companion:") for k in d.informed) for s in alone for d in s.decisions)


def test_on_the_flop_a_companion_s_line_counts_what_he_had_shown_by_then():
    plans = [choices(d) for d in ("fold", "flop_2x", "preflop_4x")]
    shown = shown_lines(plans, ["A", "B", "C"], "flop")
    assert shown[0]["B"] == (("preflop", CHECK),)  # B bets the flop after A
    assert shown[1]["A"] == (("preflop", CHECK), ("flop", CHECK))  # A checked it before B's turn
    assert shown[0]["C"] == shown[1]["C"] == (("preflop", "preflop_4x"),)
    # Weighed by the lines: a companion who raised before the flop holds strong cards, and the
    # shares move with what they make best.
    board, dealer = cards("2s 7s 9d Qh 3c"), cards("Kd Kc")
    holes = [cards("Ac Tc"), cards("8h 8d"), cards("Jd 4h")]  # A-T: a flop on the edge of 2x
    rng = random.Random(2)
    seats = []
    for _ in range(400):
        deck = rng.sample(range(52), 7)
        seats.append(ShownSeat("C", tuple(deck[:2]), tuple(deck[2:]),
                               choices("preflop_4x" if deck[0] >> 2 >= 10 or deck[1] >> 2 >= 10 else "fold")))
    model = LineModel.of(seats)
    others = [{n: h for n, h in zip("ABC", holes) if n != "ABC"[i]} for i in range(3)]
    decisions = ["fold", "flop_2x", "preflop_4x"]
    alike = score_seats(holes, decisions, board, dealer, PAYS, shipped_table(), others)
    weighed = score_seats(holes, decisions, board, dealer, PAYS, shipped_table(), others, lines=model,
                          names=list("ABC"))
    flop_of = lambda score: next(d for d in score.decisions if d.street == "flop")  # noqa: E731
    key = companion_knowledge("C")
    assert flop_of(weighed[0]).informed[key].best == flop_of(alike[0]).informed[key].best
    assert 0 < flop_of(alike[0]).informed[key].shares["flop_2x"] < 1
    assert flop_of(weighed[0]).informed[key].shares["flop_2x"] != pytest.approx(
        flop_of(alike[0]).informed[key].shares["flop_2x"], abs=1e-3)
