"""The hand evaluator against RULES.md "Cards and hands".

The lookup tables are built from the same rules as ``evaluate_five``, so the
checks here go beyond "fast path == slow path": every five-card hand is counted
by class and category against the textbook numbers, the order of all 7,462
five-card classes is compared with an independent reference written below, and
every seven-card rank multiset and flush shape is compared with the
best-of-21 path.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations, combinations_with_replacement
from math import comb, prod

import pytest

from game.cards import parse_cards, rank_of, suit_of
from game.evaluator import (
    CATEGORIES,
    CATEGORY_INDEX,
    best_using_hole,
    category_name,
    category_of,
    evaluate,
    evaluate_by_combinations,
    evaluate_five,
)

# Five-card hands per category out of C(52, 5) = 2,598,960, and how many
# different hand values (classes of equal hands) each category holds.
FIVE_CARD_COUNTS = {
    "royal_flush": 4,
    "straight_flush": 36,
    "four_of_a_kind": 624,
    "full_house": 3744,
    "flush": 5108,
    "straight": 10200,
    "three_of_a_kind": 54912,
    "two_pair": 123552,
    "pair": 1098240,
    "high_card": 1302540,
}
FIVE_CARD_CLASSES = {
    "royal_flush": 1,
    "straight_flush": 9,
    "four_of_a_kind": 156,
    "full_house": 156,
    "flush": 1277,
    "straight": 10,
    "three_of_a_kind": 858,
    "two_pair": 858,
    "pair": 2860,
    "high_card": 1277,
}
HEARTS = 2


def cards(text: str) -> tuple[int, ...]:
    return parse_cards(text.split())


def value(text: str) -> int:
    return evaluate(cards(text))


# An independent reference: textbook poker ranking as a comparable tuple.
def reference_five(five) -> tuple[int, ...]:
    ranks = [rank_of(c) for c in five]
    flush = len({suit_of(c) for c in five}) == 1
    distinct = sorted(set(ranks), reverse=True)
    high = None
    if len(distinct) == 5:
        if distinct[0] - distinct[4] == 4:
            high = distinct[0]
        elif distinct == [12, 3, 2, 1, 0]:
            high = 3  # the wheel: the ace plays low
    groups = sorted(((ranks.count(r), r) for r in distinct), reverse=True)
    shape = [n for n, _ in groups]
    order = tuple(r for _, r in groups)
    if high is not None and flush:
        return (9 if high == 12 else 8, high)
    if shape == [4, 1]:
        return (7, *order)
    if shape == [3, 2]:
        return (6, *order)
    if flush:
        return (5, *order)
    if high is not None:
        return (4, high)
    if shape == [3, 1, 1]:
        return (3, *order)
    if shape == [2, 2, 1]:
        return (2, *order)
    if shape == [2, 1, 1, 1]:
        return (1, *order)
    return (0, *order)


def reference_seven(seven) -> tuple[int, ...]:
    return max(reference_five(five) for five in combinations(seven, 5))


def assert_same_order(pairs) -> None:
    """``(value, reference)`` pairs: equal values exactly for equal references, same order."""
    distinct = sorted(set(pairs))
    values = [v for v, _ in distinct]
    refs = [r for _, r in distinct]
    assert len(set(values)) == len(distinct), "one hand value stands for two different hands"
    assert len(set(refs)) == len(distinct), "two hand values for hands that tie"
    assert refs == sorted(refs), "hand values are ordered differently from the rules"


def spread_suits(ranks) -> list[int]:
    """Cards of these ranks (each at most four times) with no five of one suit."""
    out, suit = [], 0
    for rank in ranks:
        out.append(rank * 4 + suit % 4)
        suit += 1
    return out


def five_card_classes() -> list[tuple[list[int], int]]:
    """One hand of each of the 7,462 classes and how many of the 2,598,960 hands it stands for."""
    classes = []
    for ranks in combinations_with_replacement(range(13), 5):
        counts = Counter(ranks)
        if max(counts.values()) > 4:
            continue
        hands = prod(comb(4, n) for n in counts.values())
        if len(counts) == 5:
            hands -= 4  # the suited ones are flushes, their own class below
        classes.append((spread_suits(ranks), hands))
    for ranks in combinations(range(13), 5):
        classes.append(([r * 4 + HEARTS for r in ranks], 4))
    return classes


def test_category_names_are_the_snake_case_names_of_rules_md_low_to_high():
    assert CATEGORIES == (
        "high_card", "pair", "two_pair", "three_of_a_kind", "straight", "flush",
        "full_house", "four_of_a_kind", "straight_flush", "royal_flush",
    )
    assert [CATEGORY_INDEX[name] for name in CATEGORIES] == list(range(10))


def test_the_five_card_classes_are_ordered_as_the_reference_says():
    classes = five_card_classes()
    assert len(classes) == 7462
    assert sum(hands for _, hands in classes) == comb(52, 5)
    pairs = []
    for hand, _ in classes:
        v = evaluate(hand)
        assert v == evaluate_five(hand) == evaluate_by_combinations(hand), hand
        pairs.append((v, reference_five(hand)))
    assert_same_order(pairs)


@pytest.mark.slow
def test_every_five_card_hand_falls_in_its_class_and_category():
    seen = Counter(map(evaluate, combinations(range(52), 5)))

    expected = Counter()
    for hand, hands in five_card_classes():
        expected[evaluate_five(hand)] += hands
    # Each of the 7,462 values is given to exactly the hands of its class.
    assert seen == expected

    by_category = Counter()
    classes = Counter()
    for v, n in seen.items():
        by_category[category_name(v)] += n
        classes[category_name(v)] += 1
    assert dict(by_category) == FIVE_CARD_COUNTS
    assert dict(classes) == FIVE_CARD_CLASSES
    assert sum(by_category.values()) == 2_598_960


@pytest.mark.slow
def test_every_seven_card_rank_multiset_agrees_with_the_best_of_21():
    """The rank lookup covers all 49,205 rank multisets of seven cards (no flush).

    The best of the 21 five-card subsets is taken from a memo of
    ``evaluate_five`` by rank multiset (suits cannot matter without a flush),
    which is ``evaluate_by_combinations`` at a tenth of the cost.
    """
    by_ranks = {
        ranks: evaluate_five(spread_suits(ranks))
        for ranks in combinations_with_replacement(range(13), 5)
        if max(Counter(ranks).values()) <= 4
    }
    checked = 0
    for ranks in combinations_with_replacement(range(13), 7):
        if max(Counter(ranks).values()) > 4:
            continue
        seven = spread_suits(ranks)
        best = max(by_ranks[five] for five in combinations(ranks, 5))
        assert evaluate(seven) == best, seven
        checked += 1
        if checked % 50 == 0:
            assert best == evaluate_by_combinations(seven), seven
    assert checked == 49_205


def test_every_flush_shape_of_seven_cards_agrees_with_the_best_of_21():
    """Five, six or seven cards of one suit, with every rank pattern of that suit."""
    rng = random.Random(20261129)
    off_suit = [c for c in range(52) if suit_of(c) != HEARTS]
    for size in (5, 6, 7):
        for ranks in combinations(range(13), size):
            suited = [r * 4 + HEARTS for r in ranks]
            fills = [rng.sample(off_suit, 7 - size)]
            if size == 5:
                # Trips, and two pair, beside the flush: a full house cannot
                # also be there in seven cards, so the flush must stand.
                top, low = ranks[-1], ranks[0]
                fills.append([top * 4, top * 4 + 1])
                fills.append([top * 4, low * 4 + 3])
            for fill in fills:
                seven = suited + fill
                v = evaluate(seven)
                assert v == evaluate_by_combinations(seven), seven
                assert category_of(v) >= CATEGORY_INDEX["flush"], seven


@pytest.mark.slow
def test_a_seeded_random_sample_of_seven_card_hands_agrees_with_the_best_of_21():
    rng = random.Random(7_462)
    deck = list(range(52))
    categories = Counter()
    for _ in range(40_000):
        seven = rng.sample(deck, 7)
        v = evaluate(seven)
        assert v == evaluate_by_combinations(seven), seven
        categories[category_of(v)] += 1
    # The sample reaches every category up to four of a kind.
    assert all(categories[c] for c in range(CATEGORY_INDEX["four_of_a_kind"] + 1))


def test_seven_card_values_are_ordered_as_the_reference_says():
    rng = random.Random(133_784_560)
    deck = list(range(52))
    hands = [rng.sample(deck, 7) for _ in range(4_000)]
    # Hands made to land in the rare categories and to tie often.
    for _ in range(1_500):
        ranks = rng.sample(range(13), 3)
        small = [r * 4 + s for r in ranks for s in range(4)]
        hands.append(rng.sample(small, 7))
        hearts = [r * 4 + HEARTS for r in rng.sample(range(13), 5)]
        hands.append(hearts + rng.sample([c for c in deck if c not in hearts], 2))
    assert_same_order([(evaluate(h), reference_seven(h)) for h in hands])


CATEGORY_CASES = [
    ("Ah 2c 3d 4s 5h 9c Jd", "straight"),  # the wheel
    ("Ah 2h 3h 4h 5h 9c Jd", "straight_flush"),  # the steel wheel
    ("Ah Kh Qh Jh Th 2c 3d", "royal_flush"),
    ("Ah Kd Qh Jh Th 2c 3c", "straight"),  # broadway, not suited
    ("9h 8h 7h 6h 5h Tc 2d", "straight_flush"),
    ("2h 3h 4h 5h 6h Ah Kh", "straight_flush"),
    ("Ah Kh 9h 5h 2h Ad As", "flush"),  # trips beside a flush
    ("Ah Kh 9h 5h 2h Ad Kd", "flush"),  # two pair beside a flush
    ("Ah 9h 7h 4h 2h 3c 5d", "flush"),  # beats the wheel it also holds
    ("Ac Ad Ah Kc Kd Kh 2s", "full_house"),  # two trips
    ("Ac Ad Ah 5s 5c 5d 2h", "full_house"),
    ("Ac Ad Ah As Kc Kd Kh", "four_of_a_kind"),
    ("Ac Ad Kc Kd Qc Qd 2h", "two_pair"),  # three pairs
    ("4c 5d 6h 7s 8c 9d 2h", "straight"),
    ("Ac Ad Ah 7s 8c 9d Kh", "three_of_a_kind"),
    ("Qc Kd Ah 2s 3c 7d 8h", "high_card"),  # no straight wraps around the ace
    ("Jc Qd Kh As 2c 3d 4h", "high_card"),
    ("2c 2d 7h 9s Jc Qd Kh", "pair"),
]


@pytest.mark.parametrize("text,category", CATEGORY_CASES)
def test_corner_case_categories(text, category):
    seven = cards(text)
    assert category_name(evaluate(seven)) == category
    assert evaluate(seven) == evaluate_by_combinations(seven)


EQUAL = [
    # Suits never break ties.
    ("Ah Kh Qh Jh 9h 2c 3d", "As Ks Qs Js 9s 2c 3d"),
    ("Ah Kd Qc Jc 9s 2c 3d", "As Kc Qd Jh 9c 2d 3h"),
    ("Ah Kh Qh Jh Th 2c 3d", "As Ks Qs Js Ts 2c 3d"),
    # The sixth and seventh cards never play.
    ("Ah Ad Kc Qd Jc 3h 2s", "Ah Ad Kc Qd Jc 4h 2s"),
    ("Ac Ad Ah As Kc Kd Kh", "Ac Ad Ah As Kc 2d 3h"),
    ("Ac Ad Ah 5s 5c 5d 2h", "As Ad Ah 5s 5h 2c 3d"),
    ("Ac Ad Kc Kd Qc Qd 2h", "Ac Ad Kc Kd Qh 3d 2h"),
    ("4c 5d 6h 7s 8c 9d 2h", "5c 6d 7h 8s 9c 2d 2h"),
    ("9h 8h 7h 6h 5h Tc 2d", "9h 8h 7h 6h 5h 2c 3d"),
    ("Ah 9h 7h 4h 2h 3c 5d", "Ah 9h 7h 4h 2h Kc Qd"),
    # The board plays for both: kickers tie.
    ("Ac Kd Qh Jc 9s 2c 3d", "Ac Kd Qh Jc 9s 4h 5s"),
    # Counterfeited: the board's two pair outplays the player's small pair.
    ("7c 7d 8c 8d Kh 2s 2h", "7c 7d 8c 8d Kh 3s 4h"),
]


@pytest.mark.parametrize("a,b", EQUAL)
def test_hands_that_tie(a, b):
    assert value(a) == value(b)
    assert evaluate_by_combinations(cards(a)) == evaluate_by_combinations(cards(b))


BETTER = [
    ("6h 2c 3d 4s 5h Jc Qd", "Ah 2c 3d 4s 5h Jc Qd"),  # six-high straight beats the wheel
    ("Ah 2c 3d 4s 5h Jc Qd", "Ac Ad Ah 4s 9h Jc Qd"),  # the wheel beats trips aces
    ("Ah 2h 3h 4h 5h 9c Jd", "Ac Ad Ah As Kc 2d 3h"),  # steel wheel beats quads
    ("2h 3h 4h 5h 6h Ah Kh", "Ah 2h 3h 4h 5h 9c Jd"),  # 6-high straight flush beats the steel wheel
    ("Ah Kh Qh Jh Th 2c 3d", "Kh Qh Jh Th 9h 2c 3d"),  # royal beats king-high straight flush
    ("Kh Qh Jh Th 9h 2c 3d", "Ah Kd Qh Jh Th 2c 3c"),
    ("2c 2d 2h 3s 3c 7d 8h", "Ah Kh Qh Jh 9h 2c 3d"),  # the lowest full house beats the best flush
    ("Ah Kh Qh Jh 9h 2c 3d", "Ah Kd Qh Jh Th 2c 3c"),  # flush beats straight
    ("Ac Ad Kc Kd Qc Qd 2h", "Ac Ad Kc Kd Jc 3d 2h"),  # the third pair is the kicker
    ("Ac 7d 4h 2c 9s Ah Kc", "Ac 7d 4h 2c 9s Ad Qc"),  # the kicker decides
    ("7c 7d 8c 8d Kh Ks 2h", "7c 7d 8c 8d Kh 2s 2h"),  # a higher pair is no counterfeit
    ("Ac Ad Ah Kc Kd Kh 2s", "Ac Ad Ah Qc Qd Qh Ks"),
    ("Ac Kd Qh Jc 9s 2c 3d", "Ac Kd Qh Jc 8s 7c 3d"),  # fifth high card
    ("2c 2d 3h 4s 6c 7d 8h", "Ac Kd Qh Jc 9s 2h 3d"),  # any pair beats any high card
]


@pytest.mark.parametrize("better,worse", BETTER)
def test_hands_that_beat_others(better, worse):
    assert value(better) > value(worse)
    assert evaluate_by_combinations(cards(better)) > evaluate_by_combinations(cards(worse))


def test_categories_rank_low_to_high():
    examples = [
        "2c 4d 6h 8s Tc Qd Ah",
        "2c 2d 6h 8s Tc Qd Ah",
        "2c 2d 6h 6s Tc Qd Ah",
        "2c 2d 2h 8s Tc Qd Ah",
        "2c 3d 4h 5s 6c Qd Kh",
        "2h 4h 6h 8h Th Qd As",
        "2c 2d 2h 8s 8c Qd Ah",
        "2c 2d 2h 2s Tc Qd Ah",
        "2h 3h 4h 5h 6h Qd As",
        "Ah Kh Qh Jh Th 2c 3d",
    ]
    values = [value(text) for text in examples]
    assert [category_of(v) for v in values] == list(range(10))
    assert values == sorted(values)


def test_six_cards_take_the_slow_path_and_agree():
    rng = random.Random(6)
    for _ in range(2_000):
        six = rng.sample(range(52), 6)
        assert evaluate(six) == evaluate_by_combinations(six) == max(
            evaluate_five(five) for five in combinations(six, 5)
        )


def test_a_repeated_card_makes_no_flush():
    # duplicate_card rounds are still settled; a "flush" whose fifth heart is
    # a repeat is no flush, and the fast path hands it to the literal one.
    fake_flush = cards("Ah Kh Qh 9h 9h 2c 3d")
    assert category_of(evaluate(fake_flush)) < CATEGORY_INDEX["flush"]
    assert evaluate(fake_flush) == evaluate_by_combinations(fake_flush)


def test_five_cards_of_one_rank_through_a_repeat_are_judged_literally():
    repeated = cards("Ah Ah Ad Ac As Kd 2c")
    assert category_name(evaluate(repeated)) == "four_of_a_kind"
    assert evaluate(repeated) == evaluate_by_combinations(repeated)


# best_using_hole: the "hole" qualifier of PROGRESSIVE.md.


def test_best_using_hole_with_a_royal_on_the_board_is_a_straight_flush_at_most():
    board = cards("Ah Kh Qh Jh Th")
    assert best_using_hole(board, cards("9h 2c")) == evaluate_five(cards("Kh Qh Jh Th 9h"))
    assert category_name(best_using_hole(board, cards("9h 2c"))) == "straight_flush"
    # No hole card helps: the best hand using one is four board cards and a kicker.
    assert best_using_hole(board, cards("2c 3d")) == evaluate_five(cards("Ah Kh Qh Jh 3d"))
    assert category_name(best_using_hole(board, cards("2c 3d"))) == "high_card"
    assert category_name(evaluate(board + cards("2c 3d"))) == "royal_flush"


def test_best_using_hole_with_a_straight_flush_on_the_board():
    board = cards("9h 8h 7h 6h 5h")
    assert best_using_hole(board, cards("Th 2c")) == evaluate_five(cards("Th 9h 8h 7h 6h"))
    # A lower straight flush still uses a hole card.
    assert best_using_hole(board, cards("4h 2c")) == evaluate_five(cards("8h 7h 6h 5h 4h"))
    assert category_name(best_using_hole(board, cards("4h 2c"))) == "straight_flush"
    assert category_name(best_using_hole(board, cards("Ah 2c"))) == "flush"
    # Four board hearts and an off-suit hole card make no flush and no straight.
    assert category_name(best_using_hole(board, cards("Ac 2c"))) == "high_card"


def test_best_using_hole_with_quads_on_the_board_takes_the_hole_kicker():
    board = cards("Ac Ad Ah As Kc")
    assert best_using_hole(board, cards("2d 3d")) == evaluate_five(cards("Ac Ad Ah As 3d"))
    assert evaluate(board + cards("2d 3d")) == evaluate_five(board)


def test_best_using_hole_finds_a_royal_made_with_one_hole_card():
    board = cards("Kh Qh Jh Th 2c")
    assert category_name(best_using_hole(board, cards("Ah 3d"))) == "royal_flush"
    assert category_name(best_using_hole(board, cards("3d Ah"))) == "royal_flush"


def test_best_using_hole_is_the_best_hand_whenever_that_beats_the_board():
    rng = random.Random(2)
    for _ in range(3_000):
        dealt = rng.sample(range(52), 7)
        board, hole = dealt[:5], dealt[5:]
        best = evaluate(board + hole)
        with_hole = best_using_hole(board, hole)
        assert with_hole <= best
        if best > evaluate_five(board):
            assert with_hole == best
        assert with_hole == max(
            evaluate_five(five) for five in combinations(board + hole, 5)
            if set(five) & set(hole)
        )


def test_the_rank_table_filled_at_once_holds_every_hand_as_the_lazy_path_works_it_out():
    from game import evaluator

    evaluator.fill_rank_table()
    filled = {key: value for key, value in evaluator._BY_RANK_KEY.items() if value}
    assert len(filled) == 6_175 + 49_205  # rank multisets of five and of seven cards
    assert all(evaluator._value_from_rank_key(key) == value for key, value in filled.items())
