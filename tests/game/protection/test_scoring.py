"""A posted round's seats scored: which streets, what was chosen, what it cost, what would have told."""

from __future__ import annotations

import random

import pytest

from game.protection import scoring
from game.protection import values as v
from game.protection.preflop import shipped_table
from game.protection.streets import choices
from game.protection.values import PayTable, river_values
from game.record import RoundRecord, SeatRecord
from game.vocabulary import DECISIONS
from tests.game.engine_rounds import cards, deal, seat
from tests.game.engine_rules import SE_50KR

PAYS = PayTable.of(SE_50KR)
TABLE = shipped_table()


@pytest.mark.parametrize("decision, streets", [
    ("preflop_4x", ["preflop"]), ("preflop_3x", ["preflop"]), ("flop_2x", ["preflop", "flop"]),
    ("river_1x", ["preflop", "flop", "river"]), ("fold", ["preflop", "flop", "river"]),
])
def test_a_seat_is_scored_on_every_street_it_decided(decision, streets):
    record = deal("Ah Kd 7c 2s 9h", "3c 3d", seat(1, "Qs Qh", decision=decision), seat(2, "Td 8s"))
    score = scoring.score_round(record, PAYS, TABLE)[1]
    assert [d.street for d in score.decisions] == streets == [s for s, _ in choices(decision)]
    assert score.scored
    for d in score.decisions:
        assert d.ev_lost == pytest.approx(max(d.values.values()) - d.values[d.chosen])
        assert d.ev_lost >= 0
    assert score.ev_lost == pytest.approx(sum(d.ev_lost for d in score.decisions))


def test_folding_a_winner_on_the_river_costs_what_the_values_say():
    record = deal("Ah Kd 7c 2s 9h", "3c 4d", seat(1, "As Ad", decision="fold"))
    river = scoring.score_round(record, PAYS, TABLE)[1].decisions[-1]
    values = river_values(cards("As Ad"), cards("Ah Kd 7c 2s 9h"), PAYS)
    assert river.best == "river_1x" and river.ev_lost == pytest.approx(values["river_1x"] + 2)


def test_seeing_the_dealers_card_tells_where_it_changes_the_best_option():
    # On the river a ten-high hand folds against an unknown dealer; seeing the dealer's
    # deuce (no pair possible with the other card but one), calling is best.
    record = deal("Ks Qd 8c 5h 3s", "2c 7d", seat(1, "Td 4c", decision="fold"), seat(2, "9s 6h"))
    river = scoring.score_round(record, PAYS, TABLE)[1].decisions[-1]
    assert set(river.informed) == {"dealer_first", "dealer_second", "companion:seat 2"}
    for knowledge, informed in river.informed.items():
        assert informed.values.keys() == river.values.keys()
        assert river.telling(knowledge) == (informed.best != river.best)
        if knowledge.startswith("companion:"):  # what the collusion test reads
            assert informed.shares is not None and sum(informed.shares.values()) == pytest.approx(1)
        else:  # the dealer's cards are tested from the verdict over the cards no seat held
            assert informed.shares is None
    assert river.informed["dealer_first"].values["river_1x"] != river.values["river_1x"]
    # The deuce, seen, says call; he folded: his choice is not what the first card made best.
    assert 0 < river.seen.share < 1 and not river.seen.informed[0]
    # The flop's knowledge carries no shares: the leak test does not read it.
    flop = scoring.score_round(
        deal("Ks Qd 8c 5h 3s", "2c 7d", seat(1, "Td 4c", decision="fold")), PAYS, TABLE,
    )[1].decisions[1]
    assert flop.street == "flop" and all(i.shares is None for i in flop.informed.values())


def test_a_players_own_second_seat_is_no_companion():
    record = deal(
        "Ks Qd 8c 5h 3s", "2c 7d", seat(1, "Td 4c", decision="fold", player="P-1"),
        seat(2, "9s 6h", decision="fold", player="P-1"), seat(3, "Jh Jc", decision="fold", player="P-2"),
    )
    river = scoring.score_round(record, PAYS, TABLE)[1].decisions[-1]
    assert {k for k in river.informed if k.startswith("companion:")} == {"companion:P-2"}


def test_rounds_whose_cards_cannot_be_trusted_are_not_scored():
    assert scoring.score_round(deal("Ah Kd 7c 2s 9h", "3c 3d", seat(1, "Ah Qh")), PAYS, TABLE) == {}
    assert scoring.score_round(deal(None, None, seat(1, "As Qh"), void=True), PAYS, TABLE) == {}
    assert scoring.score_round(deal("Ah Kd 7c 2s 9h", "3c 3d", seat(1, None)), PAYS, TABLE) == {}


def test_a_table_with_another_blind_pay_table_scores_flop_and_river_but_not_preflop():
    other = PayTable(tuple(p * 2 for p in PAYS.blind), PAYS.qualifier)
    record = deal("Ah Kd 7c 2s 9h", "3c 3d", seat(1, "Qs Jh", decision="river_1x"))
    score = scoring.score_round(record, other, TABLE)[1]
    assert not score.scored
    assert [d.street for d in score.decisions] == ["flop", "river"]


@pytest.mark.parametrize("deal_seed", range(3))
def test_a_rounds_seats_scored_together_are_each_scored_alone(deal_seed):
    # score_round values each street for every seat at once; one seat alone, knowing the
    # others' cards, must come out the same.
    rng = random.Random(deal_seed)
    deck = rng.sample(range(52), 7 + 2 * 5)
    decisions = [rng.choice(DECISIONS) for _ in range(5)]
    seats = tuple(
        SeatRecord(n + 1, tuple(deck[7 + 2 * n: 9 + 2 * n]), None, None, None, None, decisions[n])
        for n in range(5)
    )
    record = RoundRecord(seats, tuple(deck[:5]), tuple(deck[5:7]))
    together = scoring.score_round(record, PAYS, TABLE)
    for s in seats:
        others = {f"seat {o.seat}": o.hole for o in seats if o is not s}
        v.forget_values()
        alone = scoring.score_seat(s.hole, record.board, record.dealer_cards, s.decision, PAYS, TABLE, others)
        assert together[s.seat] == alone
