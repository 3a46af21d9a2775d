"""The settlement engine: plain Python, no Django, RULES.md in code.

Read it beside ``shared/spec/RULES.md``: ``cards`` and ``evaluator`` are "Cards
and hands", ``settlement`` is "Settlement" and the aggregate limit,
``progressive`` is "The Progressive side bet", ``validation`` turns rule and
limit breaks into findings, and ``verdict.judge_round`` puts them together
(``prepare_round`` and ``judge_prepared``: the same in two steps, the second
at the pool's meter).
"""

from .cards import CardError, card_text, cards_text, parse_card, parse_cards
from .evaluator import CATEGORIES, category_name, category_of, evaluate
from .findings import Finding
from .progressive import MeterEvent, Meters
from .record import RoundRecord, SeatRecord
from .rules import PayLine, PoolRules, RulesError, TableRules
from .verdict import Prepared, Verdict, judge_prepared, judge_round, prepare_round

__all__ = [
    "CATEGORIES",
    "CardError",
    "Finding",
    "MeterEvent",
    "Meters",
    "PayLine",
    "PoolRules",
    "Prepared",
    "RoundRecord",
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
]
