"""Game protection on whichever database the suite runs on: scripts/test runs this file on
PostgreSQL and again on a SQLite file, the embedded default's, where the stored rounds are
read by the portable stream and the grouped sums are SQLite's own."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.utils import timezone

from audit.models import ProtectionFinding, ReconciliationReport, SeatScore
from audit.protection.selectors import player_figures
from infra.gaming_day import gaming_day_of
from rounds.models import Seat
from tests import examples

pytestmark = pytest.mark.django_db


def test_the_reconcile_command_scores_the_day_before_its_report(table_client, capsys):
    start = examples.last_gaming_day_evening(timezone.now())
    examples.post_all_on(table_client, start)
    day = gaming_day_of(start)

    call_command("reconcile", "--day", str(day), "--no-progress")
    out = capsys.readouterr().out
    assert f"game protection {day}:" in out
    scored = SeatScore.objects.filter(gaming_day=day)
    # Every seat with cards of a round that is not void and whose cards are all distinct.
    assert 0 < scored.count() <= Seat.objects.filter(gaming_day=day).exclude(hole="").count()
    assert ReconciliationReport.objects.filter(day_from=day, status="complete").exists()

    call_command("reconcile", "--day", str(day), "--no-progress")  # a rerun adds nothing
    assert SeatScore.objects.filter(gaming_day=day).count() == scored.count()
    assert f"game protection {day}: 0 seats scored" in capsys.readouterr().out
    assert ProtectionFinding.objects.count() == ProtectionFinding.objects.values("code", "key").distinct().count()

    player = scored.exclude(player="").values_list("player", flat=True).first()
    figures = player_figures(player=player)
    assert figures and all(f.theoretical_actual >= f.theoretical_optimal for f in figures)
