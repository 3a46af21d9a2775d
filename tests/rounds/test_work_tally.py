"""The findings still to work (``rounds.WorkTally``) follow every write that raises or moves one,
count a mistake as the queue lists it, and the findings' own count names every row that does not."""

from __future__ import annotations

import io
import threading
from datetime import date
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections

from audit.reconciliation.services import report_run
from audit.tonight import tonight
from rounds.models import Finding, Round, WorkTally
from rounds.services import finding_transition
from rounds.services import work_tally
from rounds.services.work_tally import recounted, share_of, work_tally_differences, work_tally_rebuild
from tests.api.records import ROUNDS, record
from tests.mistakes import off_unit

pytestmark = pytest.mark.django_db

QUEUE = "/admin/rounds/finding/"
# Seat 2's lost 4x Play of 400 taken as 300: the player kept 100 more than due.
WRONG = {**record()["seats"][1], "paid": {"ante": "-100", "blind": "-100", "play": "-300"}}


def tallied() -> dict[str, tuple[int, Decimal]]:
    """The tally's rows by code (one day, one version in these tests), those counting something."""
    return {row.code: (row.mistakes, row.at_stake) for row in WorkTally.objects.exclude(mistakes=0, at_stake=0)}


def _mismatch(table_client, round_id: str = "R-1") -> Finding:
    answer = table_client("S01", "se-50kr").post(ROUNDS, record(round_id, seats=[record()["seats"][0], WRONG]),
                                                  format="json")
    assert answer.status_code == 201, answer.content
    return Finding.objects.get(round__round_id=round_id, code="payout_mismatch")


def test_a_round_s_findings_are_tallied_a_mistake_each_with_the_money_at_stake(table_client):
    _mismatch(table_client)
    off_unit(table_client, seats=(1, 4))  # six findings: each seat's Ante, Blind and Play
    assert Finding.objects.filter(code="bet_off_unit").count() == 6
    assert tallied() == {"payout_mismatch": (1, Decimal("100.00")), "bet_off_unit": (2, Decimal("0.00"))}
    days = dict(Round.objects.values_list("round_id", "gaming_day"))
    assert set(WorkTally.objects.values_list("gaming_day", "code")) == {
        (days["R-1"], "payout_mismatch"), (days["off-unit-1"], "bet_off_unit")}
    assert work_tally_differences() == []


def test_a_move_changes_the_tally_as_the_queue_counts_it(table_client, auditor, staff):
    finding = _mismatch(table_client)
    ante, blind, play = off_unit(table_client)
    finding_transition(finding_ids=[finding.pk], to_state="acknowledged", user=auditor)
    assert tallied()["payout_mismatch"] == (1, Decimal("100.00"))  # acknowledged is still to work
    finding_transition(finding_ids=[finding.pk], to_state="resolved", user=auditor, note="paid back")
    assert "payout_mismatch" not in tallied()
    finding_transition(finding_ids=[blind.pk], to_state="dismissed", user=auditor, note="the unit was changed")
    assert tallied() == {}  # the mates moved with it: nothing is left to work
    finding_transition(finding_ids=[ante.pk], to_state="open", user=auditor, note="looked at again")
    assert tallied() == {"bet_off_unit": (1, Decimal("0.00"))}
    assert work_tally_differences() == []
    # The tonight page counts from the tally what its link lists.
    day = tonight(now=play.round.dealt_at)
    (counted,) = [f for d in day.days for f in d.findings]
    assert (counted.code, counted.count) == ("bet_off_unit", 1)
    assert len(staff("auditor").get(counted.url).context["cl"].result_list) == 1


def test_a_refused_resubmission_is_tallied_as_the_finding_it_raises(table_client):
    client = table_client("S01", "se-50kr")
    assert client.post(ROUNDS, record("R-1"), format="json").status_code == 201
    assert tallied() == {}
    assert client.post(ROUNDS, record("R-1", dealer="D9999"), format="json").status_code == 409
    assert tallied() == {"conflicting_resubmission": (1, Decimal("0.00"))}
    assert work_tally_differences() == []


def test_mates_standing_in_two_states_are_two_mistakes_and_the_first_of_each_carries_the_money():
    """As ``mistakes.one_row_each`` lists them: a mate moved apart is a mistake of its own again."""
    day = date(2026, 11, 29)

    def one(pk, state, bet, seat=1, code="bet_off_unit", expected=None, claimed=None):
        return SimpleNamespace(pk=pk, round_id=7, code=code, informational=False, seat=seat, state=state, bet=bet,
                               expected=expected, claimed=claimed)

    findings = [one(1, "open", "ante", expected=Decimal(75), claimed=Decimal(50)),
                one(2, "open", "blind", expected=Decimal(75), claimed=Decimal(25)),
                one(3, "acknowledged", "play", expected=Decimal(10), claimed=Decimal(0)),
                one(4, "resolved", "ante", seat=2), one(5, "open", "", seat=None), one(6, "open", "", seat=None),
                SimpleNamespace(**{**vars(one(7, "open", "", seat=None, code="payout_mismatch")),
                                   "informational": True})]
    assert share_of(findings, {7: (day, 3)}) == {(day, 3, "bet_off_unit"): [4, Decimal(35)]}
    assert share_of(findings, {}) == {}  # a round not stored (an archived month's) adds nothing


@pytest.mark.parametrize("tamper", ["row", "missing", "extra"])
def test_the_findings_count_names_every_row_that_differs(table_client, tamper):
    finding = _mismatch(table_client)
    row = WorkTally.objects.get()
    if tamper == "row":
        WorkTally.objects.filter(pk=row.pk).update(mistakes=3)
    elif tamper == "missing":
        WorkTally.objects.all().delete()
    else:
        WorkTally.objects.create(gaming_day=date(2026, 11, 1), config_version_id=row.config_version_id,
                                 code="bet_off_unit", mistakes=2, at_stake=Decimal(5))
    (found,) = work_tally_differences()
    assert "(se-50kr v1)" in found  # named as people name it
    assert {"row": f"{finding.round.gaming_day} payout_mismatch (se-50kr v1): 3 finding(s) to work kept (100.00 "
                   "at stake), 1 counted (100.00)",
            "missing": "payout_mismatch (se-50kr v1): 0 finding(s) to work kept (0 at stake), 1 counted (100.00)",
            "extra": "2026-11-01 bet_off_unit (se-50kr v1): 2 finding(s) to work kept (5.00 at stake), 0 counted (0)",
            }[tamper] in found
    assert work_tally_rebuild() == 1 and work_tally_differences() == []
    assert recounted() == {(finding.round.gaming_day, row.config_version_id, "payout_mismatch"):
                           (1, Decimal("100.00"))}


def test_the_nightly_report_raises_an_alert_for_a_tally_the_findings_do_not_make(table_client):
    finding = _mismatch(table_client)
    day = finding.round.gaming_day
    assert report_run(day_from=day).figures["totals"]["differences"] == 0
    WorkTally.objects.update(mistakes=0, at_stake=0)
    report = report_run(day_from=day)
    (alert,) = [a for a in report.figures["alerts"] if a.startswith("TOTALS")]
    assert "payout_mismatch (se-50kr v1): 0 finding(s) to work kept" in alert and "seats or findings" in alert


def test_the_command_names_a_difference_and_mends_it(table_client):
    _mismatch(table_client)
    WorkTally.objects.update(mistakes=2)
    with pytest.raises(CommandError, match="1 total"):
        call_command("day_totals", stdout=io.StringIO())
    output = io.StringIO()
    call_command("day_totals", "--rebuild", stdout=output)
    assert "findings still to work" in output.getvalue()
    assert tallied() == {"payout_mismatch": (1, Decimal("100.00"))} and work_tally_differences() == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_two_people_working_one_rounds_findings_at_once_each_count_their_own(table_client, auditor, monkeypatch):
    """Two auditors resolve the two seats' mistakes of one round at once; the second commits while the
    first has counted its work before its move and not yet after. Each counts the findings it holds
    locked, not the round's as they stand by then: the tally ends at nothing left, not below."""
    found = off_unit(table_client, seats=(1, 4))
    first, second = (next(f for f in found if f.seat == seat and f.bet == "ante") for seat in (1, 4))
    assert tallied() == {"bet_off_unit": (2, Decimal("0.00"))}
    counted, first_counted, second_done, errors = work_tally.share_of, threading.Event(), threading.Event(), []

    def share_of(findings, day_of, into=None):
        share = counted(findings, day_of, into)
        if threading.current_thread().name == "first" and not first_counted.is_set():
            first_counted.set()
            assert second_done.wait(timeout=30), "the second move did not end"
        return share

    monkeypatch.setattr(work_tally, "share_of", share_of)

    def resolve(finding: Finding, done: threading.Event | None = None) -> None:
        try:
            if done is not None:
                assert first_counted.wait(timeout=30), "the first move did not count its work"
            finding_transition(finding_ids=[finding.pk], to_state="resolved", user=auditor, note="paid to the rules")
        except Exception as exc:  # noqa: BLE001 (the test thread reports it below)
            errors.append(exc)
        finally:
            if done is not None:
                done.set()
            connections.close_all()

    one = threading.Thread(target=resolve, args=(first,), name="first")
    one.start()
    two = threading.Thread(target=resolve, args=(second, second_done), name="second")
    two.start()
    two.join()
    one.join()
    assert errors == []
    assert set(Finding.objects.values_list("state", flat=True)) == {"resolved"}
    assert tallied() == {} and work_tally_differences() == []
