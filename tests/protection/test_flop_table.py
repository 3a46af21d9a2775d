"""The table of flops: one key for every suit renaming of a (hole, flop), and values read from it
exactly as the flop's own computation gives them."""

from __future__ import annotations

import random

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from game.protection import flop_table, preflop, scoring
from game.protection.values import PayTable, flop_values
from tests.game.engine_rules import SE_50KR

PAYS = PayTable.of(SE_50KR)
deals = st.lists(st.integers(0, 51), min_size=5, max_size=5, unique=True)


def renamed(cards, renaming):
    return [(c & ~3) | renaming[c & 3] for c in cards]


@settings(max_examples=300, deadline=None)
@given(deals, st.permutations(range(4)))
def test_every_suit_renaming_of_a_hole_and_flop_has_its_key(cards, renaming):
    hole, flop = cards[:2], cards[2:]
    key = flop_table.flop_key(hole, flop)
    assert flop_table.flop_key(renamed(hole, renaming), renamed(flop, renaming)) == key
    assert flop_table.flop_key(hole[::-1], flop[::-1]) == key


def test_keys_are_the_canonical_flops_of_each_hand():
    for name in ("AA", "AKs", "T9o"):
        hole = preflop.representative(name)
        canonical = preflop.canonical_flops(hole)
        keys = {flop_table.key_of_canonical(name, flop) for flop, _ in canonical}
        assert len(keys) == len(canonical)
        rng = random.Random(name)
        deck = [c for c in range(52) if c not in hole]
        for _ in range(200):
            assert flop_table.flop_key(hole, rng.sample(deck, 3)) in keys


def test_different_flops_have_different_keys():
    assert flop_table.flop_key([48, 49], [0, 4, 8]) != flop_table.flop_key([48, 49], [0, 4, 9])
    assert flop_table.flop_key([48, 44], [0, 5, 10]) != flop_table.flop_key([48, 45], [0, 5, 10])


@pytest.fixture(scope="module")
def small_table(tmp_path_factory):
    work, out = tmp_path_factory.mktemp("work"), tmp_path_factory.mktemp("out") / "flops.npz"
    call_command("flop_values", "--hands", "AA", "KQs", "--limit", "12", "--work", str(work),
                 "--write", "--output", str(out))
    return flop_table.read_table(out)


@pytest.mark.slow
def test_a_table_holds_the_flops_own_values(small_table):
    assert len(small_table.keys) == 24 and small_table.pays == PAYS
    for name in ("AA", "KQs"):
        hole = preflop.representative(name)
        for flop, _ in preflop.canonical_flops(hole)[:12]:
            exact = flop_values(hole, flop, PAYS)
            renaming = (2, 0, 3, 1)
            read = small_table.values(renamed(hole, renaming), renamed(flop, renaming), PAYS)
            assert read == pytest.approx(exact, rel=1e-6, abs=1e-6)


@pytest.mark.slow
def test_scoring_reads_the_table_and_values_what_it_lacks(small_table):
    hole = preflop.representative("AA")
    flop = preflop.canonical_flops(hole)[3][0]
    rest = [c for c in range(52) if c not in (*hole, *flop)]
    board, dealer = (*flop, rest[0], rest[1]), (rest[2], rest[3])
    with_table = scoring.score_seat(hole, board, dealer, "fold", PAYS, preflop.shipped_table(), flops=small_table)
    without = scoring.score_seat(hole, board, dealer, "fold", PAYS, preflop.shipped_table())
    assert with_table.decisions[1].values == pytest.approx(without.decisions[1].values, abs=1e-6)
    assert with_table.decisions[1].informed.keys() == without.decisions[1].informed.keys()
    other = PayTable(tuple(p * 2 for p in PAYS.blind), PAYS.qualifier)
    assert small_table.values(hole, flop, other) is None
    assert small_table.values(preflop.representative("72o"), flop[:3], PAYS) is None  # not in this part


def test_a_part_of_the_table_is_never_written_where_the_shipped_one_goes(tmp_path):
    with pytest.raises(CommandError, match="never shipped"):
        call_command("flop_values", "--hands", "AA", "--limit", "1", "--work", str(tmp_path), "--write")
    with pytest.raises(CommandError, match="unknown starting hands"):
        call_command("flop_values", "--hands", "ZZ", "--work", str(tmp_path))


def test_without_a_shipped_table_every_flop_is_valued(monkeypatch, tmp_path):
    monkeypatch.setattr(flop_table, "DATA", tmp_path / "none.npz")
    flop_table.shipped_table.cache_clear()
    try:
        assert flop_table.shipped_table() is None
    finally:
        flop_table.shipped_table.cache_clear()


def test_the_shipped_table_holds_every_flop_of_every_hand_at_the_shipped_pays():
    shipped = flop_table.shipped_table()
    assert shipped is not None, "game/protection/data/flop_values.npz: python manage.py flop_values --write"
    assert shipped.pays == PAYS and len(shipped.keys) == 1_286_792
    assert (shipped.keys[1:] > shipped.keys[:-1]).all()  # sorted, each flop once
    per_hand = np.bincount(shipped.keys // flop_table.SPAN, minlength=169)
    for name, count in zip(preflop.starting_hands(), per_hand, strict=True):
        assert count == {"pair": 6212, "suited": 4494, "offsuit": 10968}[kind(name)], name
    for name in ("AA", "KQs", "72o"):
        canonical = preflop.canonical_flops(preflop.representative(name))
        keys = [flop_table.key_of_canonical(name, flop) for flop, _ in canonical]
        assert np.isin(keys, shipped.keys).all()
    rng = random.Random(7)
    for _ in range(1000):
        cards = rng.sample(range(52), 5)
        assert shipped.values(cards[:2], cards[2:], PAYS) is not None


def kind(name: str) -> str:
    return "pair" if len(name) == 2 else {"s": "suited", "o": "offsuit"}[name[2]]


@pytest.mark.slow
def test_the_shipped_tables_values_are_the_flops_exact_values():
    # A sample the table was not written from in this run: any hand, any flop, any suit renaming.
    shipped, rng = flop_table.shipped_table(), random.Random(20261202)
    for _ in range(40):
        cards = rng.sample(range(52), 5)
        hole, flop = cards[:2], cards[2:]
        assert shipped.values(hole, flop, PAYS) == pytest.approx(flop_values(hole, flop, PAYS), rel=1e-6, abs=1e-6)
