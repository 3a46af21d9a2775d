"""The settlement engine: plain Python, no Django, RULES.md in code.

Read it beside ``shared/spec/RULES.md``: ``cards`` and ``evaluator`` are "Cards
and hands", ``settlement`` is "Settlement" and the aggregate limit,
``progressive`` is "The Progressive side bet", ``validation`` turns rule and
limit breaks into findings, and ``verdict.judge_round`` puts them together
(``prepare_round`` and ``judge_prepared``: the same in two steps, the second
at the pool's meter). ``vocabulary`` declares the contract's words (bets,
decisions, statuses, finding codes, meter event kinds) and ``rules`` the
numbers of a table configuration (``TABLE_NUMBERS``), once for every app.
"""

from .cards import CardError, card_text, cards_text, parse_card, parse_cards
from .evaluator import CATEGORIES, category_name, category_of, evaluate
from .findings import Finding
from .progressive import MeterEvent, Meters
from .record import RoundRecord, SeatRecord
from .rules import TABLE_NUMBERS, PayLine, PoolRules, RulesError, TableRules, table_rules
from .verdict import Clock, Prepared, Verdict, judge_prepared, judge_round, prepare_round
from .vocabulary import Bet, Decision, FindingCode, MeterEventKind, RoundStatus

__all__ = [
    "CATEGORIES",
    "TABLE_NUMBERS",
    "Bet",
    "CardError",
    "Clock",
    "Decision",
    "Finding",
    "FindingCode",
    "MeterEvent",
    "MeterEventKind",
    "Meters",
    "PayLine",
    "PoolRules",
    "Prepared",
    "RoundRecord",
    "RoundStatus",
    "RulesError",
    "SeatRecord",
    "TableRules",
    "Verdict",
    "card_text",
    "cards_text",
    "category_name",
    "category_of",
    "evaluate",
    "judge_prepared",
    "judge_round",
    "parse_card",
    "parse_cards",
    "prepare_round",
    "table_rules",
]
