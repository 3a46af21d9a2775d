"""Simulated players' rounds as a table posts them (ROUND_RECORD.md), settled by the engine."""

from __future__ import annotations

from datetime import datetime, timedelta

from game import judge_round
from game.cards import cards_text
from game.protection.players import DealtRound
from game.record import round_from_wire
from game.rules import BETS, DECISION_MULTIPLES, TableRules


def body_of(dealt: DealtRound, *, table: str, start: datetime, rules: TableRules, dealer: str = "D-1",
            ante: str = "100", overpay: dict[str, str] | None = None, dealer_reversed: bool = False) -> dict:
    """The round's body, ``paid`` exactly as the rules settle it but for ``overpay`` ({player: bet});
    ``dealer_reversed`` lists the dealer's cards the other way round, as a table may."""
    body = {
        "table": table,
        "round": f"sim-{dealt.number:05d}",
        "dealt_at": (start + timedelta(seconds=60 * dealt.number)).isoformat(),
        "dealer": dealer,
        "board": cards_text(dealt.board),
        "dealer_cards": cards_text(dealt.dealer[::-1] if dealer_reversed else dealt.dealer),
        "seats": [
            {
                "seat": number, "player": seat.player, "hole": cards_text(seat.hole),
                "ante": ante, "blind": ante, "decision": seat.decision,
                "play": str(int(ante) * DECISION_MULTIPLES[seat.decision]),
            }
            for number, seat in enumerate(dealt.seats, start=1)
        ],
    }
    verdict = judge_round(round_from_wire(body), rules)
    for wire, judged in zip(body["seats"], verdict.seats):
        wire["paid"] = {bet: str(judged.settled[bet]) for bet in BETS if bet != "progressive"}
        bet = (overpay or {}).get(wire["player"])
        if bet and judged.settled[bet] < 0:
            wire["paid"][bet] = "0.00"  # a loss left on the table: an error in the player's favour
    return body
