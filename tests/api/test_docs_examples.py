"""What the API docs show a table's engineer is what the service does.

The examples of docs/openapi.yaml are real rounds and the service's real
answers to them; each operation is tagged and named for a reader; and the
schema is the same whichever database the service runs on.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from api.rounds import examples as documented
from casino.operations import OPERATIONS
from tests import examples
from tests.fuzz.schema import TABLE_OPERATIONS

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "openapi.yaml"
# What changes from one post to the next: row ids, request ids, clocks; and the
# kept body's id a conflict's finding names.
VOLATILE = {"id", "request_id", "received_at"}
SUBMISSION = re.compile(r"\bsubmission \d+\b")


def _schema() -> dict:
    return yaml.safe_load(COMMITTED.read_text())


def _examples(content: dict) -> dict:
    return {name: example["value"] for name, example in content["application/json"].get("examples", {}).items()}


def _requests(operation: dict) -> dict:
    return _examples(operation["requestBody"]["content"])


def _answers(operation: dict) -> dict[tuple[int, str], object]:
    """Every answer example of ``operation`` by (status, name)."""
    return {
        (int(status), name): value
        for status, response in operation["responses"].items() if "content" in response
        for name, value in _examples(response["content"]).items()
    }


def _steady(value):
    """``value`` without what changes from one post to the next."""
    if isinstance(value, dict):
        return {key: _steady(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [_steady(item) for item in value]
    if isinstance(value, str):
        return SUBMISSION.sub("submission N", value)
    return value


# Posted in this order to a fresh database: (name, the record when it is no request example, status).
ROUND_STORY = [
    ("Verified", None, 201),
    ("Verified", None, 200),
    ("Conflicting", None, 409),
    ("Flagged", None, 201),
    ("Refused", documented.REFUSED_RECORD, 400),
]


@pytest.mark.django_db
def test_each_documented_round_is_answered_as_the_docs_say(table_client):
    operation = _schema()["paths"]["/api/v1/rounds/"]["post"]
    requests, answers = _requests(operation), _answers(operation)
    assert set(requests) == {name for name, record, _ in ROUND_STORY if record is None}
    assert set(answers) == {(status, name) for name, _, status in ROUND_STORY}
    client = table_client("S01", "se-50kr")
    for name, record, status in ROUND_STORY:
        response = client.post("/api/v1/rounds/", requests.get(name, record), format="json")
        assert response.status_code == status, (name, response.json())
        assert _steady(response.json()) == _steady(answers[status, name]), (name, status)


@pytest.mark.django_db
def test_the_documented_batch_is_answered_as_the_docs_say(table_client):
    operation = _schema()["paths"]["/api/v1/rounds/batch"]["post"]
    answers = _answers(operation)
    assert set(answers) == {(200, "Batch")}
    response = table_client("S01", "se-50kr").post(
        "/api/v1/rounds/batch", _requests(operation)["Batch"], format="json")
    assert response.status_code == 200
    assert _steady(response.json()) == _steady(answers[200, "Batch"])
    assert [item["status"] for item in response.json()["results"]] == [201, 400]


def test_the_documented_records_are_worked_rounds():
    worked = {example["record"]["round"]: example for example in examples.load("se-50kr.jsonl")}
    for record in (documented.VERIFIED_RECORD, documented.FLAGGED_RECORD):
        example = worked[record["round"]]
        assert example["config"] == "se-50kr"
        assert record == example["record"]
    assert examples.expected_status(worked["c-se-01"]) == documented.VERIFIED_ANSWER["status"]
    assert examples.expected_status(worked["c-se-11"]) == documented.FLAGGED_ANSWER["status"]


def _schemas(node):
    """Every schema object in ``node``, nested ones too."""
    if isinstance(node, dict):
        if "type" in node or "oneOf" in node:
            yield node
        for value in node.values():
            yield from _schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schemas(value)


def test_every_field_example_is_a_value_the_field_takes():
    components = _schema()["components"]["schemas"]
    patterned = [s for s in _schemas(components) if "pattern" in s and "example" in s]
    assert len(patterned) > 20
    for schema in patterned:
        assert re.fullmatch(schema["pattern"], schema["example"]), schema
    # Every amount an answer writes shows one, not what a docs page makes up from the pattern.
    answers = ("Seat", "BetAmounts", "Finding", "RoundMeterEvent", "RoundProgressive")
    decimals = [s for name in answers for s in _schemas(components[name]) if s.get("format") == "decimal"]
    assert len(decimals) >= 15
    assert {s.get("example") for s in decimals} == {"100.00"}
    for name in ("board", "dealer_cards"):
        cards = components["RoundRecordRequest"]["properties"][name]["example"]
        assert cards == documented.VERIFIED_RECORD[name]


def test_every_operation_is_tagged_for_its_reader_and_named():
    schema = _schema()
    tags = [tag["name"] for tag in settings.SPECTACULAR_SETTINGS["TAGS"]]
    assert [tag["name"] for tag in schema["tags"]] == tags
    seen = {}
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            label = f"{method.upper()} {path}"
            assert (operation["tags"], operation["operationId"]) == ([OPERATIONS[label][0]], OPERATIONS[label][1])
            assert re.fullmatch(r"[a-z]+(?:[A-Z][a-z]*)+", operation["operationId"]), label
            seen[label] = operation["tags"][0]
    assert set(seen) == set(OPERATIONS)
    assert {label for label, tag in seen.items() if tag == "table"} == TABLE_OPERATIONS
    assert len(set(operation for _, operation in OPERATIONS.values())) == len(OPERATIONS)


@pytest.mark.django_db
def test_the_served_schema_is_the_committed_one(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert response.content.decode() == COMMITTED.read_text()


def test_the_schema_is_the_same_on_sqlite(tmp_path):
    """The committed schema is generated on PostgreSQL (test_schema.py); SQLite must give the same."""
    generated = tmp_path / "openapi.yaml"
    environment = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'schema.sqlite3'}"}
    finished = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--file", str(generated), "--fail-on-warn"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60,
    )
    assert finished.returncode == 0, finished.stderr
    assert generated.read_text() == COMMITTED.read_text(), (
        "the schema differs on SQLite: something in it reads the database (a model serializer's "
        "bounds?); diff it against docs/openapi.yaml"
    )
