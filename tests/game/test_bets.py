"""The bets' declaration (``game.bets``): every bet of the contract said once, and what the books
read from it."""

from __future__ import annotations

from game.bets import (
    BAND_BETS, BANDED_BETS, BET_TERMS, COUNTED_ONLY_WHEN_LIT, GAME_BETS, OWN_BAND, POOL_BETS, SettledBy, WinBand,
)
from game.vocabulary import BETS, Bet


def test_every_bet_of_the_contract_is_declared_once_in_its_order():
    assert tuple(t.bet for t in BET_TERMS) == BETS == tuple(Bet)


def test_each_bet_is_settled_by_the_rules_or_by_a_pool():
    assert set(GAME_BETS) | set(POOL_BETS) == set(BETS) and not set(GAME_BETS) & set(POOL_BETS)
    assert GAME_BETS == ("ante", "blind", "play", "trips") and POOL_BETS == ("progressive",)


def test_every_band_judges_some_bets_and_no_bet_two():
    assert all(BAND_BETS[band] for band in WinBand)
    banded = [bet for bets in BAND_BETS.values() for bet in bets]
    assert sorted(banded) == sorted(BANDED_BETS) and len(banded) == len(set(banded))
    assert BAND_BETS == {WinBand.BASE: ("ante", "blind", "play"), WinBand.TRIPS: ("trips",)}
    assert OWN_BAND == {"trips": WinBand.TRIPS}


def test_a_bet_a_pool_settles_has_no_band_and_counts_only_when_lit():
    """The Progressive: its pool's books judge it, and a wager under an unlit light is no bet."""
    for terms in BET_TERMS:
        if terms.settled_by is SettledBy.POOL:
            assert terms.band is None and terms.bet in COUNTED_ONLY_WHEN_LIT
    assert COUNTED_ONLY_WHEN_LIT == {"progressive"}
