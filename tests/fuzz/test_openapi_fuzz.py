"""Every operation of docs/openapi.yaml, fuzzed in-process with schemathesis.

For each operation, schemathesis generates requests from the committed schema,
first valid ones (positive) and then ones that break it (negative), and the
Django WSGI application answers them inside the test's transaction. Every
answer must be:

- never a 5xx: bad input is the client's problem, and the database is up;
- what the schema says for a documented status (body and content type);
- in the one error shape of ``casino/errors.py`` when it is a JSON refusal,
  with field-level ``errors`` when it is a 400;
- for a body or a required parameter that breaks the schema: refused, never
  accepted (schemathesis' own judgement, which knows when a mutation is still
  valid once serialized); for a body, refused with 400 (413 when too large;
  403/404 only once the body named another table or an unknown pool). A batch
  answers 200 with one answer per record: there the broken record's answer is
  the 400.

Optional filters (``?flagged=…``, ``?seq_from=…``) are django-filter's: an
empty value means "no filter" and a number where an integer is documented is
read as a number. Nor is text made too long only by whitespace DRF trims off.
Those are not held to rejection; they are held to the rest. Text is held to
it whole: every text input refuses what is not a JSON string
(tests/api/test_strict_inputs.py).

Tables' operations are called with a table's key, the rest as a supervisor,
so the fuzzer gets past authentication to the code that reads its input.
``FUZZ_EXAMPLES`` (default 30) bounds the cases per operation and mode;
``FUZZ_SEED`` picks other cases than CI's fixed ones. The counts are printed
at the end of the run (tests/fuzz/conftest.py).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

import pytest
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import DatabaseError, close_old_connections
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient
from schemathesis import GenerationMode
from schemathesis.core.failures import FailureGroup
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from api.tokens import token_make
from rounds.services import table_register
from tests import examples
from tests.api.records import us_record
from tests.rollback import block_of_the_test
from tests.security.people import person
from trail.services import SYSTEM

from .schema import OPERATIONS, SCHEMA_PATH, TABLE_OPERATIONS

BATCH = "POST /api/v1/rounds/batch"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "30"))
SEED = int(os.environ.get("FUZZ_SEED", "20261130"))

TABLE = "FZ01"
POOL = "us-progressive"

def _operations(mode: GenerationMode) -> list[str]:
    """Every operation; in negative mode those with something a client can send wrong.

    A path of one free-text segment (``/pools/{code}/``) has no wrong value:
    every string is a code, and an unknown one is a 404 the positive run sees.
    """
    if mode.is_positive:
        return sorted(OPERATIONS)
    return sorted(label for label, op in OPERATIONS.items() if _can_be_sent_wrong(op))


def _can_be_sent_wrong(operation) -> bool:
    parameters = operation.definition.raw.get("parameters", [])
    return bool(operation.body) or _has_query(operation) or any(
        p.get("schema", {}).get("type") != "string" for p in parameters
    )


def _has_query(operation) -> bool:
    return any(p.get("in") == "query" for p in operation.definition.raw.get("parameters", []))


@dataclass(frozen=True)
class World:
    """What the fuzzer's requests can refer to: a table, a supervisor, a stored round."""

    table_auth: str
    staff_auth: str
    round_pk: int


@pytest.fixture
def world(db) -> World:
    key = table_register(code=TABLE, config_name="us-30k", actor=SYSTEM).key
    # A supervisor's script calls with a token of his (his password alone is not enough: his role
    # proves a second factor, api.authentication).
    _, token = token_make(user=person("supervisor", "fuzz-supervisor"), days=1, name="fuzz")
    round_pk = _seed_rounds(key)
    # Django closes the connection when a real request ends; here every request
    # shares the test's transaction, so keep it open as Django's test client does.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield World(
            table_auth=f"Bearer {key}",
            staff_auth=f"Token {token}",
            round_pk=round_pk,
        )
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _seed_rounds(key: str) -> int:
    """Worked rounds (awards, reseeds, findings) for the reads, then a plain one; its pk.

    Path parameters point at the plain round (contributions only): it can be
    voided, where the worked ones, whose awards later reseeds refilled, are
    refused (test_voiding_a_round_the_meter_cannot_give_back_is_refused_not_a_500).
    """
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    for example in examples.load("us-30k.jsonl")[:4]:
        record = dict(example["record"], table=TABLE)
        assert client.post("/api/v1/rounds/", record, format="json").status_code == 201
    response = client.post("/api/v1/rounds/", us_record("FZ-plain", table=TABLE), format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def _strategy(operation, mode: GenerationMode, world: World):
    """Cases for ``operation``; path parameters often point at things that exist."""
    authorization = world.table_auth if operation.label in TABLE_OPERATIONS else world.staff_auth
    # Fixed, so that negative cases break the input, never the credentials.
    headers = {"Authorization": authorization}

    def cases(**path):
        return operation.as_strategy(generation_mode=mode, headers=headers, path_parameters=path or None)

    if "{what}" in operation.path:
        # The path is one of three words; generated strings almost never hit one.
        real = st.sampled_from(["rounds", "findings", "audit-log"]).flatmap(lambda what: cases(what=what))
    elif "{code}" in operation.path:
        real = cases(code=POOL)
    elif "{id}" in operation.path:
        real = cases(id=world.round_pk)
    else:
        real = None
    if real is None:
        strategy = cases()
    elif mode.is_positive:
        strategy = st.one_of(real, cases())
    elif operation.body or _has_query(operation):
        # A wrong body or query must reach validation, not stop at an unknown pool (404).
        strategy = real
    else:
        strategy = cases()  # the path itself is what is sent wrong
    if operation.label in TABLE_OPERATIONS:
        strategy = strategy.map(_as_own_table)
    return strategy


def _as_own_table(case):
    """Records name the posting table, so a good one reaches the engine, not the 403.

    Only a ``table`` that is already valid is replaced: a negative case that
    broke that very field keeps it broken.
    """
    body = case.body
    records = [body] if isinstance(body, dict) else []
    if isinstance(body, dict) and isinstance(body.get("rounds"), list):
        records = [item for item in body["rounds"] if isinstance(item, dict)]
    for record in records:
        table = record.get("table")
        if isinstance(table, str) and 1 <= len(table) <= 32:
            record["table"] = TABLE
    return case


def _negated(case) -> set[ParameterLocation]:
    if case.meta is None:
        return set()
    return {location for location, info in case.meta.components.items() if info.mode.is_negative}


def _negates_only_optional_filters(case) -> bool:
    """Nothing negated but optional query parameters (django-filter reads those leniently)."""
    negated = _negated(case)
    if negated != {ParameterLocation.QUERY}:
        return False
    required = {
        p["name"] for p in case.operation.definition.raw.get("parameters", [])
        if p.get("in") == "query" and p.get("required")
    }
    data = case.meta.phase.data
    names = {m.parameter for m in data.mutations if m.parameter} | ({data.parameter} - {None})
    return bool(names) and not names & required


def _read_alike_by_drf(case) -> bool:
    """Every change to the body is text made too long by whitespace around it.

    DRF trims the whitespace around text before it measures it, so by the
    server such a body says the same as a right one, and accepting it is no harm.
    """
    data = case.meta.phase.data if case.meta else None
    changes = [m for m in getattr(data, "mutations", ()) if m.parameter_location == ParameterLocation.BODY]

    def trimmed(change) -> bool:
        value = change.new_value
        return "maxLength" in change.keywords and isinstance(value, str) and value != value.strip()

    return bool(changes) and all(trimmed(change) for change in changes)


def _content_type(response) -> str:
    for name, values in response.headers.items():
        if name.lower() == "content-type" and values:
            return values[0].split(";")[0].strip()
    return ""


_APP = None


def _application():
    global _APP
    if _APP is None:
        _APP = get_wsgi_application()
    return _APP


def _call(case):
    try:
        # A statement that fails rolls back to here, never the test's whole transaction.
        with block_of_the_test():
            return case.call(app=_application())
    except DatabaseError as exc:
        pytest.fail(f"{case.operation.label} left its database transaction broken: {exc}\n"
                    f"{case.as_curl_command()}")


def _check(case, response, mode: GenerationMode) -> None:
    status = response.status_code
    text = response.content.decode("utf-8", "replace")
    where = f"{case.operation.label} → {status}\n{case.as_curl_command()}\n{text[:500]}"
    assert status < 500, f"server error: {where}"

    case.validate_response(
        response, checks=[status_code_conformance, response_schema_conformance, content_type_conformance],
    )

    if 400 <= status < 500 and _content_type(response) == "application/json":
        body = json.loads(text)
        assert {"code", "message", "request_id"} <= set(body), f"not the error shape: {where}"
        if status == 400:
            assert isinstance(body.get("errors"), dict) and body["errors"], f"400 without field errors: {where}"

    if mode.is_negative and not _negates_only_optional_filters(case) and not _read_alike_by_drf(case):
        _check_refused(case, response, where)


def _check_refused(case, response, where: str) -> None:
    status = response.status_code
    try:
        case.validate_response(response, checks=[negative_data_rejection])
    except FailureGroup:
        # The batch envelope was fine: the broken record must be refused in its own answer.
        items = json.loads(response.content)["results"] if case.operation.label == BATCH and status == 200 else []
        if not any(item["status"] == 400 for item in items):
            raise
    if ParameterLocation.BODY in _negated(case) and case.method.upper() == "POST":
        refusals = {400, 403, 404, 413}
        if (case.media_type or "").startswith("multipart/"):
            # DRF answers a multipart body it cannot split into parts with 415, not 400.
            refusals.add(415)
        assert status < 300 or status in refusals, f"invalid body not refused with 400: {where}"


@pytest.mark.parametrize(
    ("label", "mode"),
    [(label, mode) for mode in GenerationMode for label in _operations(mode)],
    ids=lambda value: str(value),
)
def test_every_operation_answers_fuzzed_requests_within_its_contract(label, mode, world, fuzz_cases):
    operation = OPERATIONS[label]

    @seed(SEED)
    @settings(
        max_examples=EXAMPLES, deadline=None, database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=_strategy(operation, mode, world))
    def fuzz(case):
        cache.clear()  # throttle budgets: the fuzzer is one client sending many requests
        response = _call(case)
        fuzz_cases[(label, mode.value, response.status_code)] += 1
        _check(case, response, mode)

    fuzz()


def test_the_fuzzer_covers_every_operation_in_the_schema():
    text = SCHEMA_PATH.read_text()
    documented = len(re.findall(r"^      operationId: ", text, flags=re.MULTILINE))
    assert len(OPERATIONS) == documented >= 17
    # Negative cases for every operation a client can send wrong: all but a few that take nothing
    # but a free-text path segment (a pool's code, a token's key) or nothing at all.
    assert len(_operations(GenerationMode.NEGATIVE)) >= documented - 4
