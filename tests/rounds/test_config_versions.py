"""A configuration change is a new version; every stored verdict keeps the version that judged it."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from progressive.models import Pool
from rounds.models import Round, TableConfig, TableConfigVersion
from rounds.services import ConfigError, config_version_create
from tests import examples
from trail.models import AuditEvent
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db

SE = dict(
    currency="SEK", minor_unit="0.01", unit="50", ante_min="50", ante_max="1000", trips_min="50",
    trips_max="1000",
    blind_pays={"royal_flush": "500", "straight_flush": "50", "four_of_a_kind": "10",
                "full_house": "3", "flush": "1.5", "straight": "1"},
    trips_pays={"royal_flush": "50", "straight_flush": "40", "four_of_a_kind": "30",
                "full_house": "8", "flush": "7", "straight": "4", "three_of_a_kind": "3"},
)
FLUSH_ROUND = next(e for e in examples.load("se-50kr.jsonl") if e["record"]["round"] == "c-se-07")


def _record(round_id: str, dealt_at: datetime) -> dict:
    record = copy.deepcopy(FLUSH_ROUND["record"])
    record["round"], record["dealt_at"] = round_id, dealt_at.isoformat()
    for seat in record["seats"]:
        seat.pop("paid", None)
    return record


def _blind(response) -> Decimal:
    return Decimal(response.json()["seats"][0]["settled"]["blind"])


def test_a_new_version_judges_only_rounds_dealt_after_it(table_client):
    client = table_client("S01", "se-50kr")
    config = TableConfig.objects.get(name="se-50kr")
    switch = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
    before = client.post("/api/v1/rounds/", _record("before", switch - timedelta(hours=1)), format="json")
    old_blind = _blind(before)

    richer = dict(SE, blind_pays=dict(SE["blind_pays"], flush="2"))
    version = config_version_create(config=config, effective_from=switch, actor=SYSTEM,
                                    note="flush pays 2:1", **richer)
    assert version.version == 2

    after = client.post("/api/v1/rounds/", _record("after", switch + timedelta(hours=1)), format="json")
    late = client.post("/api/v1/rounds/", _record("late", switch - timedelta(minutes=5)), format="json")
    assert _blind(after) == old_blind / Decimal("1.5") * 2
    # Dealt before the switch, posted after it: the old rules still judge it.
    assert _blind(late) == old_blind
    assert Round.objects.get(round_id="before").config_version.version == 1
    assert Round.objects.get(round_id="after").config_version.version == 2
    assert _blind(client.post("/api/v1/rounds/", _record("before", switch - timedelta(hours=1)),
                              format="json")) == old_blind
    event = AuditEvent.objects.get(action="config.version_created")
    assert event.before["blind_pays"]["flush"] == "1.5" and event.after["blind_pays"]["flush"] == "2"


def test_a_version_cannot_reach_back_over_a_judged_round(table_client):
    client = table_client("S01", "se-50kr")
    dealt = datetime(2026, 11, 29, 20, 0, tzinfo=timezone.utc)
    client.post("/api/v1/rounds/", _record("r1", dealt), format="json")
    config = TableConfig.objects.get(name="se-50kr")
    with pytest.raises(ConfigError) as refused:
        config_version_create(config=config, effective_from=dealt - timedelta(hours=1), actor=SYSTEM, **SE)
    assert "effective_from" in refused.value.errors
    assert TableConfigVersion.objects.filter(config=config).count() == 1


def test_a_round_dealt_in_the_future_holds_back_no_version(table_client):
    """A table's clock set to 2099 cannot freeze its configuration: the round is judged and
    flagged, and a new version may still start now, before its stamp."""
    client = table_client("S01", "se-50kr")
    stamped = client.post("/api/v1/rounds/", _record("r2099", datetime(2099, 12, 31, 20, tzinfo=timezone.utc)),
                          format="json")
    assert "dealt_in_future" in [f["code"] for f in stamped.json()["findings"]]
    config = TableConfig.objects.get(name="se-50kr")
    version = config_version_create(config=config, effective_from=datetime.now(timezone.utc) + timedelta(minutes=1),
                                    actor=SYSTEM, **SE)
    assert version.version == 2
    assert Round.objects.get(round_id="r2099").config_version.version == 1  # its verdict stays


@pytest.mark.parametrize("change,field", [
    ({"currency": "kr"}, "currency"),
    ({"ante_min": "-50"}, "ante_min"),
    ({"ante_min": "2000"}, "ante_max"),
    ({"unit": 50.0}, "unit"),
    ({"unit": "0.001"}, "unit"),
    ({"blind_pays": {"royal": "500"}}, "blind_pays"),
    ({"trips_pays": {"flush": "-7"}}, "trips_pays"),
    # Past what ROUND_RECORD.md's 15-digit paid amounts can claim on the largest wager.
    ({"blind_pays": {"royal_flush": "501"}}, "blind_pays"),
    ({"dealer_qualifier": "ace_high"}, "dealer_qualifier"),
    ({"aggregate_limit": "0"}, "aggregate_limit"),
])
def test_bad_numbers_are_refused_by_field_and_nothing_is_written(change, field):
    config = TableConfig.objects.get(name="se-50kr")
    with pytest.raises(ConfigError) as refused:
        config_version_create(config=config, effective_from=datetime.now(timezone.utc), actor=SYSTEM,
                              **dict(SE, **change))
    assert field in refused.value.errors
    assert TableConfigVersion.objects.filter(config=config).count() == 1
    assert not AuditEvent.objects.filter(action="config.version_created").exists()


def test_a_pool_in_another_currency_is_refused():
    config = TableConfig.objects.get(name="se-50kr")
    with pytest.raises(ConfigError) as refused:
        config_version_create(config=config, effective_from=datetime.now(timezone.utc), actor=SYSTEM,
                              pool=Pool.objects.get(code="us-progressive"), **SE)
    assert "pool" in refused.value.errors
