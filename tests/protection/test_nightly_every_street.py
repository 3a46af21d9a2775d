"""The nightly path finds a hole-carder who uses the card before the river, whichever card he saw
and however the table lists the dealer's cards, and accuses no one who reads the table legally.

S01 seats a hole-carder who sees either of the dealer's cards at random and uses it only before
the flop (4x when, knowing it, raising beats checking: his own count, apart from the scoring
code), two honest "table-watchers" (one by a rule of thumb on the other seats' chips, one by
card removal from their lines) and three players of the published basic strategy. S02 seats a
hole-carder who sees the dealer's first card and uses it before the flop and on the flop,
posted by a table that lists the dealer's cards the other way round, with five basic players.
Every round is posted through the batch API and each gaming day protected as the nightly job
protects it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import ProtectionFinding
from audit.protection.services import day_protect
from game.protection import players as pl
from game.protection.codes import ProtectionCode
from game.protection.flop_table import shipped_table as shipped_flops
from game.protection.preflop import shipped_table
from game.protection.values import PayTable
from tests.examples import last_gaming_day_evening
from tests.game.engine_rules import SE_50KR

from tests.game.protection.styles import basic_strategy
from .wire import body_of

PAYS = PayTable.of(SE_50KR)
NIGHTS = 20
ROUNDS_A_NIGHT = 30
pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_hole_carders_before_the_river_are_found_and_table_watchers_are_not(table_client):
    preflop, flops = shipped_table(), shipped_flops()
    s01 = [
        pl.CardReader("P-preflop", PAYS, preflop, flops, streets=("preflop",)),
        pl.ChipWatcher("P-chips", PAYS, preflop, flops),
        pl.CardRemovalWatcher("P-removal", PAYS, preflop, flops),
        *(basic_strategy(f"P-basic-{n}", PAYS, preflop, flops) for n in range(3)),
    ]
    s02 = [
        pl.CardReader("P-early", PAYS, preflop, flops, streets=("preflop", "flop"), position=0),
        *(basic_strategy(f"P-basic-{n}", PAYS, preflop, flops) for n in range(3, 8)),
    ]
    tables = {
        "S01": (table_client("S01", "se-50kr"), pl.deal_rounds(s01, NIGHTS * ROUNDS_A_NIGHT, seed=41), False),
        "S02": (table_client("S02", "se-50kr"), pl.deal_rounds(s02, NIGHTS * ROUNDS_A_NIGHT, seed=42), True),
    }
    last = last_gaming_day_evening(timezone.now())
    for night in range(NIGHTS):
        start = last - timedelta(days=NIGHTS - 1 - night)
        for code, (client, dealt, reversed_) in tables.items():
            today = dealt[night * ROUNDS_A_NIGHT:(night + 1) * ROUNDS_A_NIGHT]
            bodies = [
                body_of(r, table=code, start=start - timedelta(seconds=60 * night * ROUNDS_A_NIGHT),
                        rules=SE_50KR, dealer=f"D-{night % 3}", dealer_reversed=reversed_)
                for r in today
            ]
            answer = client.post("/api/v1/rounds/batch", {"rounds": bodies}, format="json")
            assert answer.status_code == 200, answer.content
        day_protect(day=timezone.localtime(start).date())

    findings = ProtectionFinding.objects.all()
    accused = set(findings.values_list("player", flat=True)) | set(findings.values_list("companion", flat=True))
    assert accused - {""} == {"P-preflop", "P-early"}
    for player in ("P-preflop", "P-early"):
        finding = findings.get(code=ProtectionCode.SUSPECTED_HOLE_CARDING.value, player=player)
        overall = next(t for t in finding.evidence["tests"] if t["dealer"] is None)
        assert overall["knowledge"] == "dealer_card" and overall["crossed"]
        # Before the flop is where he used it, and where the test found it.
        assert overall["parts"]["preflop"]["figure"] >= overall["threshold"]
        assert overall["parts"]["river"]["figure"] < overall["threshold"]
