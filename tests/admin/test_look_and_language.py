"""The admin as an auditor meets it: the service's name, the casino's locale, only the casino's
records, only the actions their role may take, and refusals and missing pages in the admin's look."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.test import Client, RequestFactory

from progressive.models import MeterEvent, Pool
from rounds.models import Finding, TableConfig
from tests import examples
from tests.security.people import person

pytestmark = pytest.mark.django_db
POOL = "us-progressive"
HEADER = "table-audit — casino audit"


def signed_in(role: str, username: str | None = None) -> Client:
    client = Client()
    client.force_login(person(role, username))
    return client


@pytest.fixture
def flagged(table_client):
    client = table_client("S01", "se-50kr")
    for example in examples.load("se-50kr.jsonl"):
        if example["expect"]["codes"]:
            client.post("/api/v1/rounds/", example["record"], format="json")
    return list(Finding.objects.order_by("pk"))


def scripts_without_a_source(html: str) -> list[str]:
    """Inline scripts, which the Content-Security-Policy would block (no nonce is given to them)."""
    return [tag for tag in re.findall(r"<script\b[^>]*>", html) if "src=" not in tag]


# ---- 1. the service's name, and "View site" -----------------------------------------------


def test_the_index_is_titled_with_the_service_and_view_site_leads_to_the_api_docs():
    page = signed_in("auditor").get("/admin/")
    html = page.content.decode()
    assert page.status_code == 200
    assert HEADER in html and "Django administration" not in html
    assert re.search(r"<title>[^<]*table-audit</title>", html)
    assert "Rounds, findings, meters and the audit trail" in html
    assert '<a href="/api/docs/">' in html
    assert Client().get("/api/docs/").status_code == 200


# ---- 2. the casino's locale ---------------------------------------------------------------


def test_dates_are_written_one_way_on_the_24_hour_clock(flagged):
    # 19:40 UTC is 20:40 in Stockholm: an afternoon time, which a 12-hour clock writes "8:40 p.m.".
    finding = flagged[0]
    Finding.objects.filter(pk=finding.pk).update(state_changed_at=datetime(2026, 11, 28, 19, 40, tzinfo=UTC))
    auditor = signed_in("auditor")
    page = auditor.get(f"/admin/rounds/finding/{finding.pk}/change/").content.decode()
    assert "2026-11-28 20:40" in page
    tonight = auditor.get("/admin/").content.decode()
    for html in (page, auditor.get("/admin/rounds/finding/").content.decode(), tonight):
        assert "p.m." not in html and "a.m." not in html
        # No date written the locale's other ways ("28 Nov 2026", "28/11/2026") beside the ISO one.
        assert not re.search(r"\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b", html)
        assert not re.search(r"\b\d{2}/\d{2}/\d{4}\b", html)


def test_amounts_in_the_admin_have_thousands_separators_and_the_api_does_not():
    supervisor = signed_in("supervisor")
    pool = Pool.objects.get(code=POOL)
    posted = supervisor.post(f"/admin/progressive/pool/{pool.pk}/adjust/",
                             {"delta": "1000.00", "reason": "count sheet 7"})
    assert posted.status_code == 302
    event = MeterEvent.objects.filter(pool=pool).latest("seq")
    assert event.delta == Decimal("1000.00")

    listing = supervisor.get("/admin/progressive/meterevent/", {"pool__id__exact": pool.pk}).content.decode()
    assert "1,000.00" in listing
    answer = supervisor.get("/api/v1/meter-events/", {"pool": POOL})
    assert answer.status_code == 200
    shown = next(e for e in answer.json()["results"] if e["seq"] == event.seq)
    assert shown["delta"] == "1000.00"
    assert "1,000" not in answer.content.decode()


def test_the_adjust_form_shows_back_what_was_typed_unlocalized():
    pool = Pool.objects.get(code=POOL)
    before = pool.meter
    supervisor = signed_in("supervisor")
    page = supervisor.post(f"/admin/progressive/pool/{pool.pk}/adjust/", {"delta": "1500.00", "reason": ""})
    assert page.status_code == 200  # the reason is required: the form comes back
    assert 'value="1500.00"' in page.content.decode()
    done = supervisor.post(f"/admin/progressive/pool/{pool.pk}/adjust/",
                           {"delta": "1500.00", "reason": "count sheet 8"})
    assert done.status_code == 302
    assert Pool.objects.get(code=POOL).meter == before + Decimal("1500.00")


def test_the_note_form_posts_back_finding_ids_of_four_digits(flagged):
    # A finding whose id a thousands separator would write "1,234".
    finding = flagged[0]
    finding.pk = finding.id = 1234
    finding.save(force_insert=True)
    auditor = signed_in("auditor")
    asked = auditor.post("/admin/rounds/finding/", {"action": "resolve", "_selected_action": ["1234"]})
    form = asked.content.decode()
    assert 'value="1234"' in form and "1,234" not in form
    posted = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
    done = auditor.post("/admin/rounds/finding/", {**posted, "note": "paid the difference"})
    assert done.status_code == 302
    assert Finding.objects.get(pk=1234).state == "resolved"


# ---- 3. Celery's tables for admins only ----------------------------------------------------


@pytest.mark.parametrize("role", ["auditor", "supervisor"])
def test_auditors_and_supervisors_see_no_celery_tables(role):
    client = signed_in(role)
    index = client.get("/admin/").content.decode()
    assert "Findings" in index
    assert "Periodic tasks" not in index and "Task results" not in index
    assert "django_celery" not in index
    assert client.get("/admin/django_celery_beat/periodictask/").status_code == 403
    assert client.get("/admin/django_celery_results/taskresult/").status_code == 403


def test_admins_see_and_keep_the_schedule():
    client = signed_in("admin")
    index = client.get("/admin/").content.decode()
    assert "Periodic tasks" in index and "Task results" in index
    from django_celery_beat.models import PeriodicTask

    task = PeriodicTask.objects.get(name="Nightly reconciliation")
    change = client.get(f"/admin/django_celery_beat/periodictask/{task.pk}/change/").content.decode()
    assert 'name="_save"' in change
    assert client.get("/admin/django_celery_results/taskresult/").status_code == 200


# ---- 4. only the actions a role may take are offered -----------------------------------------


def test_the_adjust_link_is_offered_only_to_supervisors():
    pool = Pool.objects.get(code=POOL)
    adjust = f"/admin/progressive/pool/{pool.pk}/adjust/"
    auditor_page = signed_in("auditor").get(f"/admin/progressive/pool/{pool.pk}/change/").content.decode()
    assert adjust not in auditor_page and "djust the meter" not in auditor_page
    supervisor_page = signed_in("supervisor").get(f"/admin/progressive/pool/{pool.pk}/change/").content.decode()
    assert f'href="{adjust}"' in supervisor_page


def test_the_new_version_link_is_offered_only_to_supervisors():
    config = TableConfig.objects.get(name="se-50kr")
    new_version = f"/admin/rounds/tableconfig/{config.pk}/new-version/"
    page = f"/admin/rounds/tableconfig/{config.pk}/change/"
    assert new_version not in signed_in("auditor").get(page).content.decode()
    assert new_version in signed_in("supervisor").get(page).content.decode()


def test_finding_actions_are_offered_only_with_the_work_permission(flagged, auditor):
    auditor.is_staff = True  # every view_* permission, no rounds.work_finding
    auditor.save(update_fields=["is_staff"])
    viewer = Client()
    viewer.force_login(auditor)
    queue = viewer.get("/admin/rounds/finding/")
    assert queue.status_code == 200 and "payout_mismatch" in queue.content.decode()
    assert "Acknowledge selected findings" not in queue.content.decode()
    assert "Acknowledge selected findings" in signed_in("auditor").get("/admin/rounds/finding/").content.decode()


def test_the_round_page_offers_no_change_and_no_void(flagged):
    page = signed_in("auditor").get(f"/admin/rounds/round/{flagged[0].round_id}/change/").content.decode()
    assert 'name="_save"' not in page and "/void" not in page and "/delete/" not in page


# ---- 5. refusals and missing pages ------------------------------------------------------------


def test_a_refusal_is_the_admins_page_with_a_way_home():
    pool = Pool.objects.get(code=POOL)
    answer = signed_in("auditor").get(f"/admin/progressive/pool/{pool.pk}/adjust/")
    html = answer.content.decode()
    assert answer.status_code == 403
    assert HEADER in html and "Your role does not allow this" in html
    assert '<a href="/admin/">Back to the start page</a>' in html
    assert "Content-Security-Policy" in answer.headers and scripts_without_a_source(html) == []


def test_an_unknown_admin_address_is_the_admins_404():
    answer = signed_in("auditor").get("/admin/rounds/no-such-thing/")
    html = answer.content.decode()
    assert answer.status_code == 404
    assert HEADER in html and "There is no page at <code>/admin/rounds/no-such-thing/</code>" in html
    assert '<a href="/admin/">Back to the start page</a>' in html
    assert 'action="/admin/logout/"' in html  # a signed-in auditor keeps the admin's header
    assert scripts_without_a_source(html) == []


def test_a_missing_page_for_nobody_signed_in_names_the_service_and_no_one():
    answer = Client().get("/no-such-page")
    html = answer.content.decode()
    assert answer.status_code == 404 and HEADER in html
    assert "Log out" not in html and "Findings" not in html


def test_the_apis_404_and_403_keep_the_error_shape():
    answer = Client().get("/api/v1/no-such-endpoint/")
    assert answer.status_code == 404 and answer["Content-Type"] == "application/json"
    assert answer.json()["code"] == "not_found"
    from casino.errors import permission_denied

    refused = permission_denied(RequestFactory().get("/api/v1/rounds/"))
    assert refused.status_code == 403 and refused["Content-Type"] == "application/json"
    assert b'"code": "permission_denied"' in refused.content or b'"code":"permission_denied"' in refused.content
