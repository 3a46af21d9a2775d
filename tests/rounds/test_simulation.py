"""Simulated tables deal well-formed, correctly settled rounds, plus the mistakes asked for."""

from __future__ import annotations

import random
import re
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from game import judge_round
from game.progressive import Meters
from game.record import round_from_wire
from game.rules import DECISION_MULTIPLES
from rounds import simulation
from rounds.models import TableConfig
from rounds.selectors import config_version_in_force, pool_version_in_force
from rounds.simulation import TableSimulator, simulate_rounds
from rounds.wire.serializers import RoundRecordSerializer

START = datetime(2026, 11, 28, 18, 0, tzinfo=ZoneInfo("Europe/Stockholm"))
CLEAN = {"dealer_error_rate": 0, "rule_break_rate": 0, "void_rate": 0}
TROUBLED = {"dealer_error_rate": 0.2, "rule_break_rate": 0.1, "void_rate": 0.02}
# The finding each injected mistake must raise.
EXPECTED_CODE = {
    simulation.BLIND_PAID_BELOW_STRAIGHT: "payout_mismatch",
    simulation.BLIND_WRONG_ODDS: "payout_mismatch",
    simulation.ANTE_SETTLED_UNQUALIFIED: "payout_mismatch",
    simulation.TRIPS_TAKEN_ON_FOLD: "payout_mismatch",
    simulation.OFF_UNIT_ANTE: "bet_off_unit",
    simulation.PLAY_MISMATCH: "play_mismatch",
    simulation.PROGRESSIVE_UNLIT: "progressive_not_lit",
}


@pytest.fixture
def shipped(db):
    """``shipped("us-30k")`` → (TableRules, PoolRules or None) as the migrations ship them."""

    def rules(name: str):
        version = config_version_in_force(config=TableConfig.objects.get(name=name), at=START)
        pool = pool_version_in_force(pool=version.pool, at=START).rules() if version.pool else None
        return version.rules(), pool

    return rules


def _records(shipped, config="us-30k", seed=1, count=200, **rates):
    rules, pool = shipped(config)
    return list(
        simulate_rounds(
            table="U01", rules=rules, pool=pool, rng=random.Random(seed), start=START,
            count=count, **(rates or TROUBLED),
        )
    )


def _rejudged(records, rules, pool):
    """Each record judged afresh from its wire form, the meter carried from round to round."""
    meters = Meters(pool.reseed) if pool else None
    for record in records:
        verdict = judge_round(round_from_wire(record), rules, pool, meters)
        meters = verdict.meters_after
        yield record, verdict


def test_the_same_seed_deals_the_same_rounds(shipped):
    assert _records(shipped, seed=5) == _records(shipped, seed=5)
    assert _records(shipped, seed=5) != _records(shipped, seed=6)


@pytest.mark.parametrize("config", ["se-50kr", "us-30k"])
def test_every_record_is_a_well_formed_wire_record(shipped, config):
    records = _records(shipped, config=config)
    previous = None
    for record in records:
        serializer = RoundRecordSerializer(data=record)
        assert serializer.is_valid(), (record["round"], serializer.errors)
        dealt_at = datetime.fromisoformat(record["dealt_at"])
        assert dealt_at.utcoffset() is not None
        assert previous is None or dealt_at > previous
        previous = dealt_at
        assert re.fullmatch(r"\d{8}-\d{6}", record["round"])
        numbers = [seat["seat"] for seat in record["seats"]]
        assert numbers == sorted(set(numbers)) and set(numbers) <= set(range(1, 8))
        players = [seat["player"] for seat in record["seats"]]
        assert len(set(players)) == len(players)
        assert all(re.fullmatch(r"P-\d{4}", p) for p in players)
    assert len({r["round"] for r in records}) == len(records)


def test_cards_are_distinct_in_every_round(shipped):
    for record in _records(shipped, count=300):
        cards = record["board"] + record["dealer_cards"]
        for seat in record["seats"]:
            cards += seat["hole"]
        assert len(cards) == 7 + 2 * len(record["seats"])
        assert len(set(cards)) == len(cards), record["round"]


@pytest.mark.parametrize("config", ["se-50kr", "us-30k"])
def test_without_mistakes_every_round_is_verified(shipped, config):
    rules, pool = shipped(config)
    records = _records(shipped, config=config, count=300, **CLEAN)
    statuses = {verdict.status for _, verdict in _rejudged(records, rules, pool)}
    assert statuses == {"verified"}


def test_mistakes_are_flagged_with_the_finding_they_cause(shipped):
    rules, pool = shipped("us-30k")
    simulator = TableSimulator(
        table="U01", rules=rules, pool=pool, rng=random.Random(3), start=START, **TROUBLED
    )
    meters = Meters(pool.reseed)
    injected = {"dealer": 0, "rule": 0, "void": 0}
    for _ in range(400):
        dealt = simulator.deal(meters)
        verdict = judge_round(round_from_wire(dealt.record), rules, pool, meters)
        assert dealt.meters_after == verdict.meters_after
        meters = verdict.meters_after
        codes = {f.code for f in verdict.findings if not f.informational}
        expected = {EXPECTED_CODE[m] for m in (dealt.dealer_error, dealt.rule_break) if m}
        # An off-unit Ante can make an off-unit Play too; nothing else may appear.
        where = (dealt.record["round"], dealt.dealer_error, dealt.rule_break, codes)
        assert codes == expected, where
        if expected:
            assert verdict.status == "flagged"
        else:
            assert verdict.status == ("void" if dealt.record["void"] else "verified")
        injected["dealer"] += bool(dealt.dealer_error)
        injected["rule"] += bool(dealt.rule_break)
        injected["void"] += dealt.record["void"]
    assert all(injected.values()), injected


def test_bets_keep_to_the_table_limits_unless_a_rule_break_was_injected(shipped):
    rules, pool = shipped("us-30k")
    simulator = TableSimulator(
        table="U01", rules=rules, pool=pool, rng=random.Random(4), start=START, **TROUBLED
    )
    broken = 0
    for _ in range(300):
        dealt = simulator.deal()
        if dealt.rule_break:
            broken += 1
            continue
        for seat in dealt.record["seats"]:
            ante, trips = Decimal(seat["ante"]), Decimal(seat.get("trips", "0"))
            assert Decimal(seat["blind"]) == ante
            assert rules.ante_min <= ante <= rules.ante_max and ante % rules.unit == 0
            if trips:
                assert rules.trips_min <= trips <= rules.trips_max and trips % rules.unit == 0
            assert Decimal(seat["play"]) == ante * DECISION_MULTIPLES[seat["decision"]]
            if "progressive" in seat:
                assert Decimal(seat["progressive"]) == pool.wager and seat["progressive_lit"]
    assert broken


def test_pairs_and_aces_raise_before_the_flop(shipped):
    for record in _records(shipped, count=200, **CLEAN):
        for seat in record["seats"]:
            ranks = [card[0] for card in seat["hole"]]
            if ranks[0] == ranks[1] or "A" in ranks:
                assert seat["decision"] in ("preflop_4x", "preflop_3x"), seat


def test_a_table_without_a_pool_never_bets_the_progressive(shipped):
    records = _records(shipped, config="se-50kr", count=200)
    assert not any("progressive" in seat for r in records for seat in r["seats"])
