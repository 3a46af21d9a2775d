"""ROUND_RECORD.md: a round dealt later than the moment the service received it, by more than
the clock tolerance (10 minutes unless configured), is stored and flagged ``dealt_in_future``."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from audit.reconciliation.reverify import round_differences
from audit.reconciliation.selectors import stored_rounds
from rounds.models import Finding, Round, Submission
from tests.api.records import BATCH, ROUNDS, record

pytestmark = pytest.mark.django_db


def _dealt(ahead: timedelta) -> str:
    return (timezone.now() + ahead).astimezone().isoformat(timespec="seconds")


def _codes(answer: dict) -> list[str]:
    return [f["code"] for f in answer["findings"]]


def test_a_round_dealt_an_hour_ahead_is_stored_flagged(table_client):
    client = table_client("S01", "se-50kr")
    response = client.post(ROUNDS, record("R-ahead", dealt_at=_dealt(timedelta(hours=1))), format="json")
    assert response.status_code == 201
    answer = response.json()
    assert answer["status"] == "flagged" and _codes(answer) == ["dealt_in_future"]
    finding = answer["findings"][0]
    assert (finding["seat"], finding["bet"], finding["expected"], finding["claimed"]) == (None, None, None, None)
    stored = Round.objects.get(round_id="R-ahead")
    assert stored.received_at <= timezone.now() and Submission.objects.filter(round=stored).exists()


def test_a_round_dealt_five_years_ahead_is_not_verified(table_client):
    client = table_client("S01", "se-50kr")
    answer = client.post(ROUNDS, record("R-2031", dealt_at=_dealt(timedelta(days=5 * 365))), format="json").json()
    assert answer["status"] == "flagged" and "dealt_in_future" in _codes(answer)


def test_within_the_tolerance_the_round_is_verified(table_client):
    client = table_client("S01", "se-50kr")
    answer = client.post(ROUNDS, record("R-close", dealt_at=_dealt(timedelta(minutes=9))), format="json").json()
    assert answer["status"] == "verified" and _codes(answer) == []


def test_the_tolerance_is_configured(table_client, settings):
    settings.CLOCK_TOLERANCE = timedelta(minutes=1)
    client = table_client("S01", "se-50kr")
    answer = client.post(ROUNDS, record("R-2min", dealt_at=_dealt(timedelta(minutes=2))), format="json").json()
    assert _codes(answer) == ["dealt_in_future"]


def test_a_void_round_dealt_ahead_is_void_with_its_finding(table_client):
    client = table_client("S01", "se-50kr")
    answer = client.post(ROUNDS, record("R-void", void=True, dealt_at=_dealt(timedelta(hours=2))),
                         format="json").json()
    assert answer["status"] == "void" and "dealt_in_future" in _codes(answer)


def test_in_a_batch_each_record_is_judged_against_the_moment_it_arrived(table_client):
    client = table_client("S01", "se-50kr")
    response = client.post(BATCH, {"rounds": [
        record("R-b1", dealt_at=_dealt(timedelta(hours=1))), record("R-b2"),
    ]}, format="json")
    statuses = [item["status"] for item in response.json()["results"]]
    assert response.status_code == 200 and statuses == [201, 201]
    assert Round.objects.get(round_id="R-b1").status == "flagged"
    assert Round.objects.get(round_id="R-b2").status == "verified"


def test_an_identical_resubmission_answers_the_stored_round(table_client):
    client = table_client("S01", "se-50kr")
    body = record("R-again", dealt_at=_dealt(timedelta(hours=1)))
    first = client.post(ROUNDS, body, format="json")
    again = client.post(ROUNDS, body, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert _codes(again.json()) == ["dealt_in_future"]
    assert Finding.objects.filter(code="dealt_in_future").count() == 1


def _reverified(round_: Round) -> list[str]:
    from progressive.models import PoolVersion  # noqa: F401 (the reverifier's rules come from versions)

    day = round_.gaming_day
    (stored,) = [s for s in stored_rounds(table_id=round_.table_id, day_from=day, day_to=day)
                 if s.pk == round_.pk]
    return round_differences(stored, round_.config_version.rules(), None)


def test_reverification_judges_the_clock_against_the_moment_it_was_received(table_client):
    client = table_client("S01", "se-50kr")
    client.post(ROUNDS, record("R-later", dealt_at=_dealt(timedelta(hours=1))), format="json")
    client.post(ROUNDS, record("R-fine"), format="json")
    ahead, fine = Round.objects.get(round_id="R-later"), Round.objects.get(round_id="R-fine")
    # Days later the round is no longer in the future; it was when it arrived.
    assert _reverified(ahead) == [] and _reverified(fine) == []


def test_reverification_finds_a_clock_finding_taken_away(table_client):
    from tests.insider import as_superuser

    client = table_client("S01", "se-50kr")
    client.post(ROUNDS, record("R-hidden", dealt_at=_dealt(timedelta(hours=1))), format="json")
    round_ = Round.objects.get(round_id="R-hidden")
    with as_superuser():
        Finding.objects.filter(round=round_).delete()
        Round.objects.filter(pk=round_.pk).update(status="verified")
    differences = _reverified(Round.objects.get(pk=round_.pk))
    assert "status verified is now flagged" in differences
    assert any("dealt_in_future" in d for d in differences)


def test_the_received_moment_is_before_the_dealt_one_for_a_round_from_the_past(table_client):
    client = table_client("S01", "se-50kr")
    client.post(ROUNDS, record("R-past"), format="json")
    stored = Round.objects.get(round_id="R-past")
    assert stored.dealt_at < stored.received_at <= timezone.now()
    assert isinstance(stored.received_at, datetime)
