"""The audit log's admin pages moved with its models to the trail app; old links still reach them."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("old,new", [
    ("/admin/audit/auditevent/", "/admin/trail/auditevent/"),
    ("/admin/audit/auditevent/?object_type=rounds.finding&object_id=7",
     "/admin/trail/auditevent/?object_type=rounds.finding&object_id=7"),
    ("/admin/audit/auditevent/12/change/", "/admin/trail/auditevent/12/change/"),
    ("/admin/audit/auditevent/%25/change/", "/admin/trail/auditevent/%25/change/"),
])
def test_an_old_link_to_the_log_is_sent_to_its_new_place(staff, old, new):
    response = staff("auditor").get(old)
    assert response.status_code == 302
    assert response["Location"] == new


def test_the_log_is_read_at_its_new_place(staff):
    assert staff("auditor").get("/admin/trail/auditevent/").status_code == 200
