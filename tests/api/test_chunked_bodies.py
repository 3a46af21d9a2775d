"""A chunked body (no Content-Length) reaches every endpoint as if it had one.

Django reads a body without a Content-Length as empty, so a void sent chunked
was refused as if it had no reason. Where the server marks its input as
ending with the body (``wsgi.input_terminated``, as gunicorn does) it is read
to its end, up to ``DATA_UPLOAD_MAX_MEMORY_SIZE``; where it does not, it is a
411. The tables' posts of rounds are the intake's own
(tests/security/test_bounded_storage.py): kept, on the round's limit.
"""

from __future__ import annotations

import io
import json
from urllib.parse import urlencode

import pytest

from progressive.models import MeterReading
from rounds.models import Round, Submission
from tests import examples
from tests.api.records import ROUNDS, record
from tests.security.people import PASSWORD, person, person_client

pytestmark = pytest.mark.django_db
READINGS = "/api/v1/meter-readings/"
READING = {"displayed": "10000.00", "reported_at": "2026-11-29T20:00:00+01:00"}


@pytest.fixture
def table(table_client):
    client = table_client("U01", "us-30k")
    for example in examples.load("us-30k.jsonl")[:3]:
        assert client.post(ROUNDS, example["record"], format="json").status_code == 201
    return client


def chunked(client, path: str, body: bytes, *, terminated: bool = True,
            content_type: str = "application/json", stream: io.BytesIO | None = None):
    """As gunicorn hands a chunked body on: no Content-Length, an input that ends with the body.

    (Django's test client leaves an empty body's CONTENT_TYPE out; DRF's sets it from ``content_type``.)
    """
    extra = {
        "CONTENT_LENGTH": "", "CONTENT_TYPE": content_type, "HTTP_TRANSFER_ENCODING": "chunked",
        "wsgi.input": stream or io.BytesIO(body),
    }
    if terminated:
        extra["wsgi.input_terminated"] = True
    return client.generic("POST", path, b"", content_type=content_type, **extra)


def encoded(data) -> bytes:
    return json.dumps(data).encode()


def void_path() -> str:
    return f"/api/v1/rounds/{Round.objects.first().pk}/void"


def refused(response, status: int, code: str) -> dict:
    assert response.status_code == status, (response.status_code, response.content)
    answer = response.json()
    assert answer["code"] == code and "body" in answer["errors"], answer
    assert answer["request_id"] == response["X-Request-ID"]
    return answer


# ---- read to its end ----------------------------------------------------------------------


def test_a_chunked_void_with_a_reason_voids_the_round(table):
    # Before: the body read as empty, a 400 "reason: this field is required".
    response = chunked(person_client("supervisor"), void_path(), encoded({"reason": "card reader fault"}))
    assert response.status_code == 200, response.content
    round_ = Round.objects.first()
    assert round_.status == "void" and round_.void_reason == "card reader fault"


def test_a_chunked_meter_reading_is_stored(table):
    response = chunked(table, READINGS, encoded(READING))
    assert response.status_code == 201, response.content
    (reading,) = MeterReading.objects.all()
    assert (str(reading.displayed), reading.table.code) == ("10000.00", "U01")


def test_a_chunked_login_form_logs_in(client):
    person("auditor", "chunked-login")
    form = urlencode({"username": "chunked-login", "password": PASSWORD}).encode()
    response = chunked(client, "/admin/login/?next=/admin/", form,
                       content_type="application/x-www-form-urlencoded")
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_a_chunked_body_of_exactly_the_limit_is_read(table, settings):
    body = encoded(READING)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body)
    assert chunked(table, READINGS, body).status_code == 201


# ---- refused ------------------------------------------------------------------------------


def test_a_chunked_body_a_server_cannot_end_is_411(table):
    response = chunked(person_client("supervisor"), void_path(), encoded({"reason": "fault"}), terminated=False)
    refused(response, 411, "length_required")
    assert Round.objects.first().status != "void"


def test_a_chunked_body_past_the_limit_is_413_without_being_read_whole(table, settings):
    body = encoded({**READING, "note": "x" * 200_000})
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = limit = 1000
    stream = io.BytesIO(body)
    refused(chunked(table, READINGS, body, stream=stream), 413, "body_too_large")
    assert stream.tell() == limit + 1
    assert not MeterReading.objects.exists()


def test_a_chunked_body_one_byte_past_the_limit_is_413(table, settings):
    body = encoded(READING)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body) - 1
    refused(chunked(table, READINGS, body), 413, "body_too_large")


def test_off_the_api_a_refusal_is_plain(client):
    form = urlencode({"username": "nobody", "password": "x"}).encode()
    response = chunked(client, "/admin/login/", form, terminated=False,
                       content_type="application/x-www-form-urlencoded")
    assert response.status_code == 411 and response["Content-Type"].startswith("text/plain")


# ---- a table's post of rounds is the intake's ---------------------------------------------


def test_a_chunked_round_past_the_request_limit_is_kept_by_the_intake(table_client, settings):
    # Refused by the middleware, its first bytes would not be kept as the round intake keeps them.
    client = table_client("S01", "se-50kr")
    body = encoded(record("R-chunked"))
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(body) - 1
    response = chunked(client, ROUNDS, body)
    assert response.status_code == 413 and response.json()["code"] == "body_too_large"
    (submission,) = Submission.objects.all()
    assert submission.original_size == len(body)
