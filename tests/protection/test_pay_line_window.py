"""A quiet table's pay line is judged over the window, and a payout its own pay line explains is
not kept as the dealer's favour.

S01 pays a straight's Blind at 2:1 where ``se-50kr`` pays 1:1, once an evening: no evening alone
has the three wins the test asks for, the window does.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import ProtectionFinding, SeatScore
from audit.protection.services import day_protect
from game import judge_round
from game.protection.codes import ProtectionCode
from game.record import round_from_wire
from game.rules import BETS
from tests.examples import last_gaming_day_evening
from tests.game.engine_rules import SE_50KR

pytestmark = pytest.mark.django_db


def body(number: int, dealt_at, *, straight: bool) -> dict:
    # The straight 2-6 beats the dealer's king high; otherwise a pair of nines loses to kings.
    board = "2c 3d 4h 9s Kd"
    hole = "5c 6d" if straight else "9c 7d"
    record = {
        "table": "S01", "round": f"w-{number:03d}", "dealt_at": dealt_at.isoformat(), "dealer": "D-1",
        "board": board.split(), "dealer_cards": ["Kc", "Jh"] if not straight else ["Qc", "Jh"],
        "seats": [{"seat": 2, "player": "P-straight", "hole": hole.split(), "ante": "100", "blind": "100",
                   "decision": "preflop_4x", "play": "400"}],
    }
    verdict = judge_round(round_from_wire(record), SE_50KR)
    record["seats"][0]["paid"] = {bet: str(verdict.seats[0].settled[bet]) for bet in BETS if bet != "progressive"}
    if straight:
        record["seats"][0]["paid"]["blind"] = "200"  # 2:1 where 1:1 is configured
    return record


def test_three_evenings_of_one_wrong_pay_each_raise_the_table_and_no_favour(table_client):
    client = table_client("S01", "se-50kr")
    last = last_gaming_day_evening(timezone.now())
    code = ProtectionCode.PAY_TABLE_MISMATCH.value
    for evening in range(3):
        start = last - timedelta(days=2 - evening)
        for n, straight in enumerate((True, False, False)):
            sent = body(10 * evening + n, start + timedelta(minutes=n), straight=straight)
            assert client.post("/api/v1/rounds/", sent, format="json").status_code == 201
        day = timezone.localtime(start).date()
        day_protect(day=day)
        # Two evenings are two wins at 2:1: too few; the third makes three within the window.
        assert ProtectionFinding.objects.filter(code=code).exists() == (evening == 2)
        straight_seat = SeatScore.objects.get(gaming_day=day, round__round_id=f"w-{10 * evening:03d}")
        assert straight_seat.pays and straight_seat.pays[0]["bet"] == "blind"
        # Until the line is known the overpayment is the dealer's error in the player's favour.
        assert straight_seat.favourable_errors == (0 if evening == 2 else 1)

    finding = ProtectionFinding.objects.get(code=code)
    assert (finding.table, finding.key) == ("S01", "table=S01 bet=blind line=straight")
    assert finding.evidence["observed"] == "2" and finding.evidence["observations"] == 3
    assert "from " in finding.detail and "1:1" in finding.detail
