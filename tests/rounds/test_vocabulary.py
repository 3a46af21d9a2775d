"""One vocabulary: the engine declares each word and each configuration number once.

The models' choices, their migrated columns, the services' numbers and the
engine's own output are held to ``game.vocabulary`` and
``game.rules.TABLE_NUMBERS`` here; any of them drifting fails a test.
"""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest
from django.db.migrations.loader import MigrationLoader

from game import findings as f
from game import progressive as engine_progressive
from game import verdict as engine_verdict
from game.bets import GAME_BETS
from game.rules import DECISION_MULTIPLES, STORED_TYPES, TABLE_NUMBERS, TableRules, table_rules
from game.settlement import settle_game
from game.verdict import judge_round
from game.vocabulary import (
    BETS,
    DECISIONS,
    FINDING_CODES,
    INFORMATIONAL_CODES,
    METER_EVENT_KINDS,
    PERSON_EVENT_KINDS,
    ROUND_EVENT_KINDS,
    SERVICE_CODES,
    STATUSES,
    Bet,
    Decision,
    FindingCode,
    MeterEventKind,
    RoundStatus,
)
from progressive.models import MeterEvent
from rounds.models import Finding, Round, Seat, TableConfigVersion
from rounds.services.configs import SNAPSHOT_FIELDS, ConfigNumbers, config_numbers_check

from tests.game.engine_rounds import deal, seat
from tests.game.engine_rules import SE_50KR, US_30K, US_PROGRESSIVE


def values(choices) -> list[str]:
    return [value for value, _ in choices]


# (app, model, field) -> the engine's words it must offer, in their order.
CHOICES = {
    ("rounds", "round", "status"): STATUSES,
    ("rounds", "finding", "code"): FINDING_CODES,
    ("rounds", "seat", "decision"): DECISIONS,
    ("progressive", "meterevent", "kind"): METER_EVENT_KINDS,
}
MODELS = {"round": Round, "finding": Finding, "seat": Seat, "meterevent": MeterEvent}


@pytest.mark.parametrize("key", CHOICES, ids="/".join)
def test_each_models_choices_are_the_engines_words(key):
    _, model, name = key
    assert values(MODELS[model]._meta.get_field(name).choices) == list(CHOICES[key])


@pytest.mark.parametrize("key", CHOICES, ids="/".join)
def test_the_migrated_columns_offer_the_same_choices_as_the_models(key):
    # What the migrations say the column holds, not what the model says now:
    # a word added to the engine without its migration fails here.
    state = MigrationLoader(None, ignore_no_migrations=True).project_state()
    app, model, name = key
    migrated = state.models[(app, model)].fields[name].choices
    assert list(migrated) == list(MODELS[model]._meta.get_field(name).choices)


def test_the_text_choices_keep_the_engines_values_and_names():
    assert [(m.name, m.value) for m in Round.Status] == [(s.name, s.value) for s in RoundStatus]
    assert [(m.name, m.value) for m in MeterEvent.Kind] == [(k.name, k.value) for k in MeterEventKind]
    assert Round.Status.VOID == RoundStatus.VOID == engine_verdict.VOID == "void"
    assert MeterEvent.Kind.REVERSAL == MeterEventKind.REVERSAL == "reversal"


def test_the_tuples_are_the_enums_in_order():
    assert BETS == tuple(Bet) and GAME_BETS == BETS[:4] and STATUSES == tuple(RoundStatus)
    assert DECISIONS == tuple(Decision) and tuple(DECISION_MULTIPLES) == DECISIONS
    assert FINDING_CODES == tuple(FindingCode) and f.ALL_CODES == FINDING_CODES
    assert METER_EVENT_KINDS == tuple(MeterEventKind)
    # Every kind is a round's or a person's; the reseed is both (a pool's opening meter).
    assert set(ROUND_EVENT_KINDS) | set(PERSON_EVENT_KINDS) == set(METER_EVENT_KINDS)
    assert set(ROUND_EVENT_KINDS) & set(PERSON_EVENT_KINDS) == {"reseed"}
    assert INFORMATIONAL_CODES <= set(FINDING_CODES) and SERVICE_CODES <= set(FINDING_CODES)


def test_what_the_engine_hands_out_is_plain_text():
    # A verdict is plain data: an enum member as a JSON object's key is refused by orjson.
    verdict = judge_round(
        deal("Qh Jh Th 2c 3d", "4s 4c", seat(1, "Ah Kh", ante="5", progressive="5"),
             seat(2, "9s 9c", ante="7")),
        US_30K, US_PROGRESSIVE, engine_progressive.Meters(US_PROGRESSIVE.reseed),
    )
    assert type(verdict.status) is str
    assert {type(x.code) for x in verdict.findings} == {str} and verdict.findings
    assert {type(e.kind) for e in verdict.events} == {str} and verdict.events
    for settled in (s.settled for s in verdict.seats):
        assert tuple(settled) == BETS and {type(bet) for bet in settled} == {str}


def test_the_engines_names_are_the_vocabularys():
    for name in ("CONTRIBUTION", "OVERFLOW", "RESERVE", "AWARD", "FIXED_AWARD", "RESEED"):
        assert getattr(engine_progressive, name) == MeterEventKind[name].value
        assert getattr(engine_progressive, name) in ROUND_EVENT_KINDS
    for status in RoundStatus:
        assert getattr(engine_verdict, status.name) == status.value
    for code in FindingCode:
        assert getattr(f, code.name) == code.value
    game = settle_game(deal("Qh Jh Th 2c 3d", "4s 4c", seat(1, "Ah Kh")), SE_50KR)
    assert tuple(game.seats[1].results) == GAME_BETS


# ---- the configuration's numbers ----------------------------------------------------------

# TableConfigVersion's columns that are not numbers of the game: which
# configuration, which version, since when, its pool, and who made it.
BOOKKEEPING = {"id", "config", "version", "effective_from", "pool", "note", "created_at", "created_by"}


def test_the_numbers_are_table_rules_fields():
    assert TABLE_NUMBERS == tuple(x.name for x in fields(TableRules) if x.init)
    assert tuple(STORED_TYPES) == TABLE_NUMBERS


def test_config_numbers_has_a_field_for_each_number_and_nothing_else():
    assert tuple(x.name for x in fields(ConfigNumbers)) == TABLE_NUMBERS
    assert {x.name: x.type for x in fields(ConfigNumbers)} == dict(STORED_TYPES)
    assert SNAPSHOT_FIELDS == TABLE_NUMBERS


def test_config_numbers_check_takes_each_number_and_nothing_else():
    parameters = inspect.signature(config_numbers_check).parameters
    assert tuple(parameters) == TABLE_NUMBERS
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())


def test_a_configuration_version_has_a_column_for_each_number_and_nothing_else():
    columns = {x.name for x in TableConfigVersion._meta.concrete_fields}
    assert columns - BOOKKEEPING == set(TABLE_NUMBERS)
    assert BOOKKEEPING <= columns


@pytest.mark.django_db
@pytest.mark.parametrize("name,engine", [("se-50kr", SE_50KR), ("us-30k", US_30K)])
def test_a_shipped_version_its_checked_numbers_and_the_engine_agree(name, engine):
    version = TableConfigVersion.objects.filter(config__name=name).order_by("-version").first()
    stored = {number: getattr(version, number) for number in TABLE_NUMBERS}
    assert version.rules() == table_rules(stored) == engine
    checked = config_numbers_check(**stored)
    assert table_rules({number: getattr(checked, number) for number in TABLE_NUMBERS}) == engine
    assert {number: getattr(checked, number) for number in TABLE_NUMBERS} == stored
