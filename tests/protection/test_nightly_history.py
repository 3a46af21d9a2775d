"""Ninety nights of the nightly path: honest players of several styles are never accused, the planted
cheats are, each suspicion is one finding that gathers its evidence night after night, and the
colluding pair's finding names the two of them and no one else.

S01 seats three honest players (optimal, the published basic strategy, one who always calls), a
hole-carder and a colluding pair; S02 six more honest ones (noisy at two strengths, tight, loose,
weak, random); S03 two "table-watchers" who read the other seats' chips as the rules show them
(one by a rule of thumb, one by card removal from their lines) among four basic players. Every round is posted through the batch API and each gaming day protected as the
nightly job protects it (``day_protect``), over the whole history so far.
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
NIGHTS = 90
ROUNDS_A_NIGHT = 30
HONEST = (
    "P-optimal", "P-basic", "P-calls", "P-noisy", "P-very-noisy", "P-tight", "P-loose", "P-weak", "P-random",
    "P-chips", "P-removal", *(f"P-basic-{n}" for n in range(4)),
)
pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_ninety_nights_accuse_no_honest_player_and_find_the_planted_cheats(table_client):
    preflop, flops = shipped_table(), shipped_flops()
    players = [
        pl.OptimalPlayer("P-optimal", PAYS, preflop, flops),
        basic_strategy("P-basic", PAYS, preflop, flops),
        pl.CallingStation("P-calls", PAYS, preflop, flops),
        pl.HoleCarder("P-peeks", PAYS, preflop, share=0.3, flops=flops),
        pl.Colluder("P-pair-a", PAYS, preflop, partner="P-pair-b", flops=flops),
        pl.Colluder("P-pair-b", PAYS, preflop, partner="P-pair-a", flops=flops),
    ]
    # A second table of honest players only: noisy at two strengths, tight, loose, weak, random.
    others = [
        pl.NoisyPlayer("P-noisy", PAYS, preflop, flops, noise=0.05),
        pl.NoisyPlayer("P-very-noisy", PAYS, preflop, flops, noise=0.5),
        pl.TightPlayer("P-tight", PAYS, preflop, flops), pl.LoosePlayer("P-loose", PAYS, preflop, flops),
        pl.WeakPlayer("P-weak", PAYS, preflop, flops), pl.RandomPlayer("P-random", PAYS, preflop, flops),
    ]
    watchers = [
        pl.ChipWatcher("P-chips", PAYS, preflop, flops), pl.CardRemovalWatcher("P-removal", PAYS, preflop, flops),
        *(basic_strategy(f"P-basic-{n}", PAYS, preflop, flops) for n in range(4)),
    ]
    tables = {
        "S01": (table_client("S01", "se-50kr"), pl.deal_rounds(players, NIGHTS * ROUNDS_A_NIGHT, seed=26)),
        "S02": (table_client("S02", "se-50kr"), pl.deal_rounds(others, NIGHTS * ROUNDS_A_NIGHT, seed=27)),
        "S03": (table_client("S03", "se-50kr"), pl.deal_rounds(watchers, NIGHTS * ROUNDS_A_NIGHT, seed=28)),
    }
    last = last_gaming_day_evening(timezone.now())
    raised_on: dict[str, object] = {}
    for night in range(NIGHTS):
        start = last - timedelta(days=NIGHTS - 1 - night)
        for code, (client, dealt) in tables.items():
            today = dealt[night * ROUNDS_A_NIGHT:(night + 1) * ROUNDS_A_NIGHT]
            bodies = [
                body_of(r, table=code, start=start - timedelta(seconds=60 * night * ROUNDS_A_NIGHT),
                        rules=SE_50KR, dealer=f"D-{night % 3}")
                for r in today
            ]
            answer = client.post("/api/v1/rounds/batch", {"rounds": bodies}, format="json")
            assert answer.status_code == 200, answer.content
        day = timezone.localtime(start).date()
        for code, count in day_protect(day=day).raised.items():
            raised_on.setdefault(code, day)
            assert count == 1  # each suspicion raised once, then it stands

    findings = ProtectionFinding.objects.all()
    accused = set(findings.values_list("player", flat=True)) | set(findings.values_list("companion", flat=True))
    assert not accused & set(HONEST)
    hole_carding = findings.get(code=ProtectionCode.SUSPECTED_HOLE_CARDING.value)
    assert hole_carding.player == "P-peeks"
    collusion = findings.get(code=ProtectionCode.SUSPECTED_COLLUSION.value)
    assert {collusion.player, collusion.companion} == {"P-pair-a", "P-pair-b"}
    assert collusion.key == "pair=P-pair-a + P-pair-b"
    # The pair is read both ways: each one's test counts the other's choices about his cards too.
    strongest = next(t for t in collusion.evidence["tests"] if t["player"] == collusion.player)
    assert strongest["partner"]["steps"] > 0 and strongest["parts"]["pair"]["steps"] > 0
    assert strongest["partner"]["chose_informed"] > strongest["partner"]["expected_informed"]
    assert f"{collusion.companion} chose the option that {collusion.player}'s cards made best" in collusion.detail
    assert findings.count() == 2
    # Standing: one point of history for each night since the suspicion was first raised.
    history = hole_carding.evidence["history"]
    assert history[0]["day"] == raised_on[ProtectionCode.SUSPECTED_HOLE_CARDING.value].isoformat()
    assert len(history) == (hole_carding.day_to - raised_on[ProtectionCode.SUSPECTED_HOLE_CARDING.value]).days + 1
    assert hole_carding.figure >= hole_carding.threshold
    assert max(p["figure"] for p in history) <= float(hole_carding.figure) + 1e-4
