"""The OpenAPI schema in the repository is the one the code generates; the docs stay local."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from django.contrib.staticfiles import finders
from django.core.management import call_command

from rounds.wire import contract

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
REGENERATE = ".venv/bin/python manage.py spectacular --file docs/openapi.yaml"


def test_the_committed_schema_is_what_the_code_generates(tmp_path):
    generated = tmp_path / "openapi.yaml"
    call_command("spectacular", "--file", str(generated), "--validate", "--fail-on-warn")
    assert COMMITTED.exists(), f"docs/openapi.yaml is missing; create it with: {REGENERATE}"
    assert generated.read_text() == COMMITTED.read_text(), (
        f"docs/openapi.yaml is out of date with the API; regenerate it with: {REGENERATE} "
        "(and read the diff: a changed request or response is a change of the wire contract)"
    )


def test_the_schema_documents_the_round_contract():
    text = COMMITTED.read_text()
    paths = ("/api/v1/rounds/", "/api/v1/rounds/batch", "/api/v1/rounds/{id}/", "/api/v1/findings/")
    for path in paths:
        assert f"\n  {path}:\n" in text, path
    assert "scheme: bearer" in text
    # The answer's seats and progressive block are typed, not free-form objects.
    assert "$ref: '#/components/schemas/Seat'" in text
    assert "$ref: '#/components/schemas/RoundProgressive'" in text


def test_every_field_the_contract_states_is_in_the_schema_in_its_order():
    components = yaml.safe_load(COMMITTED.read_text())["components"]["schemas"]
    for shape in (contract.RECORD, contract.SEAT_RECORD, contract.PAID):
        assert list(components[f"{shape.name}Request"]["properties"]) == [f.name for f in shape.fields]
    for shape in (contract.ROUND, contract.SEAT, contract.BET_AMOUNTS, contract.FINDING,
                  contract.ROUND_METER_EVENT, contract.ROUND_PROGRESSIVE, contract.ROUND_CONFIG):
        assert list(components[shape.name]["properties"]) == [f.name for f in shape.fields]
    paid = components["PaidRequest"]["properties"]["blind"]["oneOf"]
    assert paid[0]["pattern"] == r"^-?[0-9]{1,15}(\.[0-9]{1,2})?$"
    assert paid[1]["maximum"] == 10**15 - 1
    assert components["BetAmounts"]["properties"]["blind"]["pattern"] == r"^-?\d{0,18}(?:\.\d{0,2})?$"


@pytest.mark.django_db
def test_the_schema_is_served(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert b"/api/v1/rounds/" in response.content


@pytest.mark.django_db
def test_the_docs_page_loads_nothing_from_outside(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s\"'<>]*", page) == []
    assets = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets), assets
    for asset in assets:
        assert asset.startswith("/static/"), asset
        # Shipped with the app (drf-spectacular-sidecar), so collectstatic serves it.
        assert finders.find(asset.removeprefix("/static/")), asset
