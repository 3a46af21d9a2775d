"""Reports in the admin: read as tables with charts, never changed there."""

from __future__ import annotations

import pytest

from audit.models import ReconciliationReport
from audit.reconciliation.services import report_run

from .days import DAY, post_day

pytestmark = pytest.mark.django_db


@pytest.fixture
def report() -> ReconciliationReport:
    post_day(per_table=12)
    return report_run(day_from=DAY)


def test_a_report_reads_as_tables_with_band_and_meter_charts(admin_client, report):
    page = admin_client.get(f"/admin/audit/reconciliationreport/{report.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    for text in ("S01", "S02", "U01", "us-progressive", "per 1,000 hands", "<svg", "pygal-chart",
                 "SEK", "USD", "month to date", "year to date", " %", "no audit events were written in the range",
                 "Regulators&#x27; variance tests"):
        assert text in html, text
    listing = admin_client.get("/admin/audit/reconciliationreport/")
    assert listing.status_code == 200 and str(DAY) in listing.content.decode()


def test_the_admin_offers_no_way_to_change_a_report(admin_client, report):
    response = admin_client.post(f"/admin/audit/reconciliationreport/{report.pk}/change/", {"status": "failed"})
    assert response.status_code == 403
    report.refresh_from_db()
    assert report.status == ReconciliationReport.Status.COMPLETE
    assert admin_client.get("/admin/audit/reconciliationreport/add/").status_code == 403


def test_the_nightly_schedule_is_editable_in_the_admin(admin_client):
    from django_celery_beat.models import PeriodicTask

    task = PeriodicTask.objects.get(name="Nightly reconciliation")
    assert admin_client.get(f"/admin/django_celery_beat/periodictask/{task.pk}/change/").status_code == 200


def test_the_report_says_what_of_the_chain_it_walked(admin_client, report, settings, tmp_path):
    from audit.anchors import anchor_write

    def walked(pk) -> str:
        return admin_client.get(f"/admin/audit/reconciliationreport/{pk}/change/").content.decode()

    assert "no anchor yet, the whole chain" in walked(report.pk)
    settings.AUDIT_ANCHOR_PATH, settings.AUDIT_ANCHOR_URL, settings.AUDIT_ANCHOR_KEY = str(tmp_path), "", "k"
    anchor_write(gaming_day=DAY)
    again = report_run(day_from=DAY)
    assert again.figures["chain"]["anchors_held"] == 1
    assert "1 anchor(s) kept outside held" in walked(again.pk)
