"""Round records as tables post them, small enough to read in a test.

``record()`` is a correct se-50kr round (table S01): the dealer's pair of kings
beats every seat, every seat folds or loses, and ``paid`` says so, so the
service answers ``verified``. ``us_record()`` is the same deal on a us-30k table
with lit progressive wagers (four unless told) and no progressive hand.
"""

from __future__ import annotations

import copy

ROUNDS = "/api/v1/rounds/"
BATCH = "/api/v1/rounds/batch"
FINDINGS = "/api/v1/findings/"

BOARD = ["2c", "7d", "9h", "Js", "4s"]
DEALER = ["Kc", "Kd"]
# None of these makes a straight, a flush or trips with BOARD.
HOLES = (
    ["5c", "6d"], ["Ac", "Qd"], ["8c", "3d"], ["Tc", "Td"],
    ["Ah", "Qs"], ["3h", "5s"], ["6h", "Ks"],
)


def seat(
    number: int, hole: list[str], /, *, ante: str = "100", decision: str = "fold", **extra
) -> dict:
    """A seat that folds (or plays and loses to the dealer's kings), paid exactly."""
    multiple = {"fold": 0, "river_1x": 1, "flop_2x": 2, "preflop_3x": 3, "preflop_4x": 4}[decision]
    play = str(int(ante) * multiple)
    data = {
        "seat": number,
        "player": f"P-{number:04d}",
        "hole": hole,
        "ante": ante,
        "blind": ante,
        "decision": decision,
        "play": play,
        "paid": {"ante": f"-{ante}", "blind": f"-{ante}", "play": f"-{play}" if multiple else "0"},
    }
    data.update(extra)
    return data


def record(round_id: str = "R-1", *, table: str = "S01", **fields) -> dict:
    data = {
        "table": table,
        "round": round_id,
        "dealt_at": "2026-11-29T21:14:03+01:00",
        "dealer": "D4411",
        "void": False,
        "board": list(BOARD),
        "dealer_cards": list(DEALER),
        "seats": [seat(1, list(HOLES[0])), seat(2, list(HOLES[1]), decision="preflop_4x")],
    }
    data.update(fields)
    return copy.deepcopy(data)


def us_seat(number: int, hole: list[str], /, **extra) -> dict:
    """A us-30k seat: Ante 25, a lit 5 progressive wager that wins nothing."""
    data = seat(number, hole, ante="25", progressive="5", progressive_lit=True, **extra)
    data["paid"]["progressive"] = "-5"
    return data


def us_record(round_id: str = "U-1", *, table: str = "U01", seats: int = 4, **fields) -> dict:
    return record(
        round_id, table=table,
        seats=[us_seat(n + 1, list(HOLES[n])) for n in range(seats)],
        **fields,
    )
