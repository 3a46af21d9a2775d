"""The clock finding: a round stamped later than it arrived, by more than the tolerance."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from game import Clock, judge_round
from game.clock import DEFAULT_TOLERANCE, clock_findings
from game.record import round_from_wire
from game.rules import TableRules
from tests.api.records import record

RECEIVED = datetime(2026, 11, 29, 20, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(("ahead", "found"), [
    (timedelta(0), False),
    (-timedelta(days=400), False),  # late, a table catching up: no clock problem
    (DEFAULT_TOLERANCE, False),
    (DEFAULT_TOLERANCE + timedelta(microseconds=1), True),
    (timedelta(days=5 * 365), True),
])
def test_dealt_in_future_only_past_the_tolerance(ahead, found):
    findings = clock_findings(RECEIVED + ahead, RECEIVED)
    assert [f.code for f in findings] == (["dealt_in_future"] if found else [])
    if found:
        (finding,) = findings
        assert (finding.seat, finding.bet, finding.expected, finding.claimed) == (None, None, None, None)
        assert "after the service received it" in finding.detail


def test_the_offset_of_either_moment_does_not_matter():
    dealt = (RECEIVED + timedelta(minutes=11)).astimezone(timezone(timedelta(hours=-7)))
    assert [f.code for f in clock_findings(dealt, RECEIVED)] == ["dealt_in_future"]


def test_a_tolerance_of_its_own():
    dealt = RECEIVED + timedelta(minutes=3)
    assert clock_findings(dealt, RECEIVED, timedelta(minutes=2))
    assert not clock_findings(dealt, RECEIVED, timedelta(minutes=5))


def _rules() -> TableRules:
    from rounds.models import TableConfig

    config = TableConfig.objects.get(name="se-50kr")
    return config.versions.order_by("-version").first().rules()


@pytest.mark.django_db
def test_a_verified_round_dealt_in_the_future_is_flagged_and_a_void_one_stays_void():
    rules = _rules()
    wire = record()
    dealt = datetime.fromisoformat(wire["dealt_at"])
    early = Clock(dealt, dealt - timedelta(minutes=11))
    assert judge_round(round_from_wire(wire), rules).status == "verified"
    assert judge_round(round_from_wire(wire), rules, clock=early).status == "flagged"
    void = round_from_wire(record(void=True))
    assert judge_round(void, rules, clock=early).status == "void"
    assert "dealt_in_future" in [f.code for f in judge_round(void, rules, clock=early).findings]
