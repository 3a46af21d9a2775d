from __future__ import annotations

import pytest
from rest_framework.test import APIClient


@pytest.fixture
def supervisor(db, django_user_model):
    """A person who may read everything progressive and adjust meters."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("supervisor", password="a-long-test-password")
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="progressive", codename__startswith="view_"),
        Permission.objects.get(content_type__app_label="progressive", codename="adjust_meter"),
    )
    return user


@pytest.fixture
def supervisor_client(supervisor):
    client = APIClient()
    client.force_authenticate(supervisor)
    return client
