"""An admin URL whose id is not one is a 404, never a 500."""

from __future__ import annotations

import pytest

from rounds.models import Submission
from tests.api.records import ROUNDS, record

pytestmark = pytest.mark.django_db


@pytest.fixture
def kept(table_client) -> Submission:
    assert table_client("S01", "se-50kr").post(ROUNDS, record(), format="json").status_code == 201
    return Submission.objects.get()


@pytest.mark.parametrize("object_id", [
    "abc", "1.5", "1e3", "%20", "1%00", "-1", "0", "99999999999999999999", "1/2",
], ids=repr)
def test_a_garbled_submission_id_on_the_body_download_is_404(admin_client, kept, object_id):
    admin_client.raise_request_exception = False
    response = admin_client.get(f"/admin/rounds/submission/{object_id}/body/")
    assert response.status_code == 404, response.status_code


def test_a_real_submission_id_still_downloads_its_body(admin_client, kept):
    response = admin_client.get(f"/admin/rounds/submission/{kept.pk}/body/")
    assert response.status_code == 200
    assert response.content == bytes(kept.body)


def test_a_body_kept_only_in_part_shows_what_was_sent_and_what_was_kept(admin_client, table_client, settings):
    client = table_client("S01", "se-50kr")
    body = b'{"table": "S01", "pad": "' + b"x" * (settings.ROUND_BODY_MAX_BYTES + 10) + b'"}'
    assert client.generic("POST", ROUNDS, body, content_type="application/json").status_code == 413
    cut = Submission.objects.get(http_status=413)
    page = admin_client.get(f"/admin/rounds/submission/{cut.pk}/change/").content.decode()
    assert f"{len(body)} bytes sent, the first {settings.ROUND_BODY_KEPT_BYTES} kept" in page
