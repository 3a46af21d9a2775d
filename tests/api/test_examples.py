"""Every worked round of ../shared/examples, posted over the API, settles as expected."""

from __future__ import annotations

from decimal import Decimal

import pytest

from progressive.models import Pool
from tests import examples


def _results(body: dict) -> dict:
    return examples.as_decimals({s["seat"]: s["settled"] for s in body["seats"]})


@pytest.mark.django_db
@pytest.mark.parametrize("name,table,config", examples.EXAMPLE_FILES)
def test_every_worked_round_settles_as_expected(table_client, name, table, config):
    client = table_client(table, config)
    rounds = examples.load(name)
    assert rounds, f"no examples in {name}"
    for i, example in enumerate(rounds):
        where = examples.label(example, i)
        response = client.post("/api/v1/rounds/", example["record"], format="json")
        assert response.status_code == 201, (where, response.json())
        body = response.json()
        expect = example["expect"]
        assert _results(body) == examples.as_decimals(expect["results"]), where
        assert {f["code"] for f in body["findings"]} == set(expect["codes"]), where
        assert body["status"] == examples.expected_status(example), where
        if expect["meter"] is None:
            assert body["progressive"] is None, where
        else:
            events = [
                (e["kind"], e["seat"], Decimal(e["amount"]), Decimal(e["meter"]))
                for e in body["progressive"]["events"]
            ]
            assert events == examples.expected_events(example), where
            assert Decimal(body["progressive"]["meter_after"]) == Decimal(expect["meter"]), where


@pytest.mark.django_db
def test_resubmitting_every_worked_round_changes_nothing(table_client):
    client = table_client("U01", "us-30k")
    rounds = examples.load("us-30k.jsonl")
    for example in rounds:
        assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    meter = Pool.objects.get(code="us-progressive").meter
    for example in rounds:
        response = client.post("/api/v1/rounds/", example["record"], format="json")
        assert response.status_code == 200
    assert Pool.objects.get(code="us-progressive").meter == meter == Decimal(rounds[-1]["expect"]["meter"])
