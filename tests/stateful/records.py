"""Hypothesis strategies for round records as tables post them (ROUND_RECORD.md).

``round_records`` makes records the service must accept: cards all distinct,
amounts in whole units within the table's limits, Ante = Blind, Play the
decision's multiple, lit Progressive wagers of the pool's fixed wager on a
table that feeds a pool. Some deals put a royal or a straight flush in the
first seat's hand, so awards and reseeds happen. ``paid`` is left out, or is a
claim that may or may not match (the round is then stored flagged: breaking a
rule is never a refusal).

``almost_valid`` takes such a record and breaks exactly one field so that the
record can no longer be read as a round: the service must refuse it with a
400 naming that field, and store nothing.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal

from hypothesis import strategies as st

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = tuple(rank + suit for rank in RANKS for suit in SUITS)
# A royal in hearts: three on the board and two in the first seat's hand.
ROYAL = ("Th", "Jh", "Qh", "Kh", "Ah")
# A straight flush in spades, the same way.
STRAIGHT_FLUSH = ("5s", "6s", "7s", "8s", "9s")
MULTIPLES = {"fold": 0, "river_1x": 1, "flop_2x": 2, "preflop_3x": 3, "preflop_4x": 4}


@dataclass(frozen=True)
class Limits:
    """What a table's configuration allows, in whole units."""

    unit: int
    ante: tuple[int, int]
    trips: tuple[int, int]
    wager: int | None  # the pool's fixed Progressive wager; None: the table feeds no pool


US_30K = Limits(unit=5, ante=(5, 500), trips=(5, 100), wager=5)
SE_50KR = Limits(unit=50, ante=(50, 1000), trips=(50, 1000), wager=None)


def units(limits: Limits, low: int, high: int):
    return st.integers(low // limits.unit, high // limits.unit).map(lambda n: n * limits.unit)


@st.composite
def deals(draw, seats: int):
    """Board, dealer cards and ``seats`` hole pairs, all distinct; sometimes a jackpot hand."""
    hand = draw(st.sampled_from([None, None, None, ROYAL, STRAIGHT_FLUSH]))
    rest = list(draw(st.permutations([c for c in DECK if not hand or c not in hand])))
    if hand:
        board = [hand[0], hand[1], hand[2], rest.pop(), rest.pop()]
        holes = [[hand[3], hand[4]]]
    else:
        board = [rest.pop() for _ in range(5)]
        holes = []
    dealer = [rest.pop(), rest.pop()]
    while len(holes) < seats:
        holes.append([rest.pop(), rest.pop()])
    return board, dealer, holes


@st.composite
def seat_records(draw, number: int, hole: list[str], limits: Limits):
    ante = draw(units(limits, *limits.ante))
    decision = draw(st.sampled_from(list(MULTIPLES)))
    trips = draw(st.one_of(st.just(0), units(limits, *limits.trips)))
    play = ante * MULTIPLES[decision]
    seat = {
        "seat": number,
        "player": f"P-{number:02d}-{draw(st.integers(0, 999)):03d}",
        "hole": hole,
        "ante": str(ante),
        "blind": str(ante),
        "trips": str(trips),
        "decision": decision,
        "play": str(play),
    }
    if limits.wager and draw(st.booleans()):
        seat.update(progressive=str(limits.wager), progressive_lit=True)
    if draw(st.booleans()):
        # What a dealer who took every losing bet would claim: right or wrong, never refused.
        seat["paid"] = {"ante": f"-{ante}", "blind": f"-{ante}", "play": f"-{play}" if play else "0",
                        "trips": f"-{trips}" if trips else "0"}
        if "progressive" in seat:
            seat["paid"]["progressive"] = f"-{limits.wager}"
    return seat


@st.composite
def round_records(draw, *, table: str, round_id: str, dealt_at: str, limits: Limits):
    count = draw(st.integers(1, 7))
    numbers = draw(st.lists(st.integers(1, 7), min_size=count, max_size=count, unique=True))
    board, dealer, holes = draw(deals(count))
    return {
        "table": table,
        "round": round_id,
        "dealt_at": dealt_at,
        "dealer": f"D{draw(st.integers(1, 99)):02d}",
        "void": False,
        "board": board,
        "dealer_cards": dealer,
        "seats": [draw(seat_records(n, hole, limits)) for n, hole in zip(numbers, holes)],
    }


# ---- one field broken ------------------------------------------------------------
# (what is broken, how, the top-level field the 400 must name)


def _seat0(change):
    def apply(record):
        change(record["seats"][0])
    return apply


def _set(field, value):
    def apply(record):
        record[field] = value
    return apply


def _drop(field):
    def apply(record):
        record.pop(field, None)
    return apply


def _seat_twice(record):
    record["seats"] = record["seats"][:6] + [copy.deepcopy(record["seats"][0])]


BREAKS = (
    ("an unknown card on the board", lambda r: r["board"].__setitem__(0, "Zz"), "board"),
    ("four board cards", lambda r: r["board"].pop(), "board"),
    ("three hole cards", _seat0(lambda s: s["hole"].append("2c")), "seats"),
    ("seat number 8", _seat0(lambda s: s.__setitem__("seat", 8)), "seats"),
    ("a negative Ante", _seat0(lambda s: s.__setitem__("ante", "-5")), "seats"),
    ("an Ante with three decimals", _seat0(lambda s: s.__setitem__("ante", "5.001")), "seats"),
    ("an Ante as a float", _seat0(lambda s: s.__setitem__("ante", 5.5)), "seats"),
    ("an unknown decision", _seat0(lambda s: s.__setitem__("decision", "all_in")), "seats"),
    ("an unknown bet in paid", _seat0(lambda s: s.__setitem__("paid", {"tip": "5"})), "seats"),
    ("a seat listed twice", _seat_twice, "seats"),
    ("no seats", _set("seats", []), "seats"),
    ("eight seats", lambda r: r.__setitem__("seats", r["seats"] * 8), "seats"),
    ("a time without an offset", _set("dealt_at", "2026-11-29T21:14:03"), "dealt_at"),
    ("no time", _drop("dealt_at"), "dealt_at"),
    ("a round id of 65 characters", _set("round", "R" * 65), "round"),
    ("no round id", _drop("round"), "round"),
    ("no table", _drop("table"), "table"),
    ("a dealer id of 65 characters", _set("dealer", "D" * 65), "dealer"),
    ("a round id holding a line feed", _set("round", "R\n1"), "round"),
    ("no dealer cards on a round that is not void", _set("dealer_cards", None), "dealer_cards"),
    ("void as a word", _set("void", "perhaps"), "void"),
)


@st.composite
def almost_valid(draw, records, breaks=BREAKS):
    """``(record with one field broken, what was broken, the field the 400 must name)``."""
    record = copy.deepcopy(draw(records))
    what, breaks, field = draw(st.sampled_from(breaks))
    breaks(record)
    return record, what, field


def money(text: str) -> Decimal:
    return Decimal(text).quantize(Decimal("0.01"))
