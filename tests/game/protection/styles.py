"""Honest players the scoring code did not write, for the leak test's tests and benchmark."""

from __future__ import annotations

from game import strategy as published
from game.protection import players as pl


def basic_strategy(name: str, pays, preflop, flops=None) -> pl.RulePlayer:
    """The published basic strategy, as the seat covariance's simulation plays it."""
    return pl.RulePlayer(name, pays, preflop, flops, raises=published.preflop_4x,
                         bets_flop=published.flop_2x, calls=published.river_1x)
