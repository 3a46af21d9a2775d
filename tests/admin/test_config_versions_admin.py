"""Supervisors change a configuration in the admin, which saves it as a new version."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from casino.services import user_roles_set
from tests.security.people import hired
from rounds.models import ConfigVersionRequest, TableConfig, TableConfigVersion
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db


def _client(django_user_model, role: str, name: str = "") -> Client:
    user = hired(name or f"{role}-c")
    user_roles_set(user=user, roles=[role], actor=SYSTEM)
    client = Client()
    client.force_login(user)
    return client


def test_a_supervisor_asks_for_a_new_version_and_a_second_approves_it(django_user_model):
    client = _client(django_user_model, "supervisor")
    config = TableConfig.objects.get(name="se-50kr")
    url = f"/admin/rounds/tableconfig/{config.pk}/new-version/"
    page = client.get(url)
    assert page.status_code == 200
    form = page.context["form"]
    data = {name: form.initial.get(name) for name in form.fields}
    data.update(
        effective_from="2030-01-01 00:00:00", note="flush pays 2:1",
        blind_pays=json.dumps(dict(json.loads(data["blind_pays"]), flush="2")),
        aggregate_limit="", pool="", one_hand_per_player="on",
    )
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    # A flush paid 2:1 changes what is paid: nothing judges by it until a second supervisor says so.
    asked = ConfigVersionRequest.objects.get(config=config)
    assert response.url == f"/admin/rounds/configversionrequest/{asked.pk}/change/"
    assert not TableConfigVersion.objects.filter(config=config, version=2).exists()
    own_page = client.get(response.url).content.decode()
    assert "another supervisor approves it" in own_page and 'value="approve"' not in own_page
    second = _client(django_user_model, "supervisor", "second-c")
    assert 'value="approve"' in second.get(response.url).content.decode()
    decided = second.post(f"/admin/rounds/configversionrequest/{asked.pk}/decide/", {"decision": "approve"})
    assert decided.status_code == 302
    version = TableConfigVersion.objects.get(config=config, version=2)
    asked.refresh_from_db()
    assert asked.state == "approved" and asked.version == version and asked.decided_by_name == "second-c"
    assert version.blind_pays["flush"] == "2" and version.note == "flush pays 2:1"
    assert b"New version" in client.get(f"/admin/rounds/tableconfig/{config.pk}/change/").content


def test_refusals_show_beside_their_field(django_user_model):
    client = _client(django_user_model, "supervisor")
    config = TableConfig.objects.get(name="se-50kr")
    url = f"/admin/rounds/tableconfig/{config.pk}/new-version/"
    form = client.get(url).context["form"]
    data = {name: form.initial.get(name) for name in form.fields}
    data.update(effective_from="2030-01-01 00:00:00", note="x", aggregate_limit="", pool="",
                ante_min="2000")
    response = client.post(url, data)
    assert response.status_code == 200
    assert "ante_max" in response.context["form"].errors
    assert TableConfigVersion.objects.filter(config=config).count() == 1


def test_an_auditor_cannot_change_the_rules(django_user_model):
    client = _client(django_user_model, "auditor")
    config = TableConfig.objects.get(name="se-50kr")
    assert client.get(f"/admin/rounds/tableconfig/{config.pk}/new-version/").status_code == 403
    assert b"New version" not in client.get(f"/admin/rounds/tableconfig/{config.pk}/change/").content
