"""Issue 45, item 6: a person's session ends after SESSION_IDLE_MINUTES without a request."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.utils import timezone

pytestmark = pytest.mark.django_db


def _ends(client) -> timezone.datetime:
    return Session.objects.get(session_key=client.session.session_key).expire_date


def test_a_session_ends_when_idle_and_each_request_moves_its_end_on(staff):
    assert settings.SESSION_COOKIE_AGE == settings.SESSION_IDLE_MINUTES * 60 == 30 * 60
    client = staff("auditor")
    assert client.get("/admin/").status_code == 200
    first = _ends(client)
    assert abs(first - (timezone.now() + timedelta(minutes=30))) < timedelta(seconds=30)
    Session.objects.filter(session_key=client.session.session_key).update(expire_date=first - timedelta(minutes=20))
    assert client.get("/admin/").status_code == 200  # a request within the idle time: still in,
    assert _ends(client) > first - timedelta(seconds=5)  # and its end moved on again

    Session.objects.filter(session_key=client.session.session_key).update(
        expire_date=timezone.now() - timedelta(seconds=1))  # idle past the limit
    response = client.get("/admin/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
