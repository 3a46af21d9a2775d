"""Supervisors make a pool's next version in the admin; one that changes what is paid waits for a second."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from casino.services import user_roles_set
from tests.security.people import hired
from progressive.models import Pool, PoolVersion, PoolVersionRequest
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


def _client(django_user_model, role: str, name: str = "") -> Client:
    user = hired(name or f"{role}-c")
    user_roles_set(user=user, roles=[role], actor=SYSTEM)
    client = Client()
    client.force_login(user)
    return client


def _form_data(client: Client, url: str, **change) -> dict:
    form = client.get(url).context["form"]
    data = {name: form.initial.get(name) for name in form.fields}
    data.update(effective_from="2030-01-01 00:00:00", note="flush pays 200", ceiling="",
                lines=json.dumps(data["lines"]))
    return data | change


def test_a_supervisor_asks_for_a_new_pool_version_and_a_second_approves_it(django_user_model):
    client = _client(django_user_model, "supervisor")
    pool = Pool.objects.get(code="us-progressive")
    url = f"/admin/progressive/pool/{pool.pk}/new-version/"
    assert b"New version" in client.get(f"/admin/progressive/pool/{pool.pk}/change/").content
    lines = [dict(line, amount="200") if line["category"] == "flush" else line
             for line in pool.versions.get(version=1).lines]
    response = client.post(url, _form_data(client, url, lines=json.dumps(lines)))
    assert response.status_code == 302, response.content.decode()[:2000]
    asked = PoolVersionRequest.objects.get(pool=pool)
    assert response.url == f"/admin/progressive/poolversionrequest/{asked.pk}/change/"
    assert not PoolVersion.objects.filter(pool=pool, version=2).exists()
    own_page = client.get(response.url).content.decode()
    assert "another supervisor approves it" in own_page and 'value="approve"' not in own_page
    refused = client.post(f"/admin/progressive/poolversionrequest/{asked.pk}/decide/", {"decision": "approve"})
    assert refused.status_code == 302 and not PoolVersion.objects.filter(pool=pool, version=2).exists()

    second = _client(django_user_model, "supervisor", "second-c")
    assert 'value="approve"' in second.get(response.url).content.decode()
    decided = second.post(f"/admin/progressive/poolversionrequest/{asked.pk}/decide/", {"decision": "approve"})
    assert decided.status_code == 302
    version = PoolVersion.objects.get(pool=pool, version=2)
    asked.refresh_from_db()
    assert asked.state == "approved" and asked.version == version and asked.decided_by_name == "second-c"
    assert version.lines == lines and version.note == "flush pays 200"


def test_a_note_alone_is_saved_at_once_and_refusals_show_beside_their_field(django_user_model):
    client = _client(django_user_model, "supervisor")
    pool = Pool.objects.get(code="us-progressive")
    url = f"/admin/progressive/pool/{pool.pk}/new-version/"
    refused = client.post(url, _form_data(client, url, reseed="100.00", ceiling="50.00"))
    assert refused.status_code == 200 and "ceiling" in refused.context["form"].errors
    saved = client.post(url, _form_data(client, url, note="restated"))
    assert saved.status_code == 302 and saved.url == f"/admin/progressive/pool/{pool.pk}/change/"
    assert pool.versions.get(version=2).note == "restated" and not PoolVersionRequest.objects.exists()


def test_an_auditor_cannot_change_or_decide_a_pool_version(django_user_model):
    asker = _client(django_user_model, "supervisor")
    pool = Pool.objects.get(code="us-progressive")
    url = f"/admin/progressive/pool/{pool.pk}/new-version/"
    asker.post(url, _form_data(asker, url, rate="0.25"))
    asked = PoolVersionRequest.objects.get(pool=pool)
    auditor = _client(django_user_model, "auditor")
    assert auditor.get(url).status_code == 403
    assert b"New version" not in auditor.get(f"/admin/progressive/pool/{pool.pk}/change/").content
    assert 'value="approve"' not in auditor.get(f"/admin/progressive/poolversionrequest/{asked.pk}/change/"
                                                ).content.decode()
    decided = auditor.post(f"/admin/progressive/poolversionrequest/{asked.pk}/decide/", {"decision": "approve"})
    assert decided.status_code == 403
    asked.refresh_from_db()
    assert asked.state == "pending"
