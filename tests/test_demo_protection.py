"""The demo tells the truth: game protection suspects the planted cheats at S01, and no one else.

Its other players decide from their own cards alone (``rounds.simulation``),
over the demo's evenings, and are never suspected; the hole-carder and the
colluding pair are, the pair's finding naming the two of them.
"""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from audit.models import ProtectionFinding
from game.protection.codes import ProtectionCode


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.mark.slow
@pytest.mark.django_db
def test_the_demo_suspects_the_planted_cheats_and_no_one_else():
    call_command("load_demo", stdout=StringIO(), stderr=StringIO(), no_color=True)
    call_command("reconcile", no_progress=True, stdout=StringIO(), stderr=StringIO())

    found = {(f.code, f.player, f.companion) for f in ProtectionFinding.objects.all()}
    hole_carding, collusion = ProtectionCode.SUSPECTED_HOLE_CARDING.value, ProtectionCode.SUSPECTED_COLLUSION.value
    assert (hole_carding, "CHEAT-HOLECARD", "") in found
    pair = {f for f in found if f[0] == collusion}
    assert len(pair) == 1 and set(next(iter(pair))[1:]) == {"CHEAT-PAIR-A", "CHEAT-PAIR-B"}
    named = {name for _, player, companion in found for name in (player, companion) if name}
    assert named == {"CHEAT-HOLECARD", "CHEAT-PAIR-A", "CHEAT-PAIR-B"}
