"""Every admin list's "Download CSV": exactly the rows the list shows (its filters, search and
ordering, every page), in the casino's time with the UTC offset, each amount with its currency,
for people who may export it, and the download written to the audit log first."""

from __future__ import annotations

import copy
import csv
import io
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from django.test import Client

from audit.admin_reports import ReconciliationReportAdmin
from audit.reconciliation.services import report_run
from infra.exports import moment
from rounds.admin.findings import FindingAdmin
from rounds.admin.rounds import RoundAdmin
from rounds.models import Finding, Round, Table
from tests import examples, mistakes
from trail.admin import AuditEventAdmin
from trail.models import AuditEvent

pytestmark = pytest.mark.django_db
ROUNDS, FINDINGS, EVENTS, REPORTS = (
    "/admin/rounds/round/", "/admin/rounds/finding/", "/admin/trail/auditevent/",
    "/admin/audit/reconciliationreport/",
)
# ISO 8601 to the microsecond with the UTC offset, as every moment of every export is written.
MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}[+-]\d\d:\d\d")
SUMMER_ROUND = "c-se-summer"
FIRST = 20  # rounds of each example table


@pytest.fixture
def dealt(table_client):
    """Both example tables' first rounds (S01 in SEK, U01 in USD, flagged ones among them), and
    one S01 round dealt in summer."""
    clients = {}
    for name, code, config in examples.EXAMPLE_FILES:
        clients[code] = client = table_client(code, config)
        for example in examples.load(name)[:FIRST]:
            assert client.post("/api/v1/rounds/", example["record"], format="json").status_code == 201
    mispaid = next(e for e in examples.load("se-50kr.jsonl") if e["expect"]["codes"] == ["payout_mismatch"])
    summer = copy.deepcopy(mispaid["record"])
    summer.update(round=SUMMER_ROUND, dealt_at="2026-07-15T21:30:00+02:00")
    assert clients["S01"].post("/api/v1/rounds/", summer, format="json").status_code == 201


@pytest.fixture
def auditor(staff) -> Client:
    return staff("auditor", "iris")


def _csv(response) -> list[dict]:
    assert response.status_code == 200, response
    assert response["Content-Type"] == "text/csv" and "attachment" in response["Content-Disposition"]
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def _listed(client: Client, url: str, params: dict) -> list:
    """The objects the list shows for ``params``, every page of them, in its order."""
    page = client.get(url, params)
    assert page.status_code == 200
    return list(page.context["cl"].queryset)


def _export_link(client: Client, url: str, params: dict) -> str:
    content = client.get(url, params).content.decode()
    found = re.search(r'<a href="([^"]*export\.csv[^"]*)" class="csv-export-link">Download CSV</a>', content)
    assert found, "no Download CSV button"
    return found.group(1).replace("&amp;", "&")


def test_the_rounds_list_exports_its_filtered_rounds_a_row_a_seat_on_every_page(
    dealt, auditor, monkeypatch
):
    monkeypatch.setattr(RoundAdmin, "list_per_page", 3)  # the list has pages; the file has them all
    params = {"status": "flagged", "o": "3"}  # flagged rounds, by round id
    listed = _listed(auditor, ROUNDS, params)
    assert 5 < len(listed) < Round.objects.count()
    link = _export_link(auditor, ROUNDS, params)
    assert link.startswith(f"{ROUNDS}export.csv?") and "status=flagged" in link and "o=3" in link
    rows = _csv(auditor.get(link))
    seats = [(r.table.code, r.round_id, s.seat) for r in listed for s in r.seats.order_by("seat")]
    assert [(row["table"], row["round"], int(row["seat"])) for row in rows] == seats
    assert {row["status"] for row in rows} == {"flagged"}
    by_table = {row["table"]: row["currency"] for row in rows}
    assert by_table == {"S01": "SEK", "U01": "USD"}


def test_the_rounds_export_follows_the_search(dealt, auditor):
    rows = _csv(auditor.get(f"{ROUNDS}export.csv", {"q": "U01"}))
    assert {row["table"] for row in rows} == {"U01"}
    assert len({row["round"] for row in rows}) == Round.objects.filter(table__code="U01").count()


def test_the_findings_list_exports_exactly_its_findings_with_their_currency(dealt, auditor):
    params = {"code__exact": "payout_mismatch"}
    listed = _listed(auditor, FINDINGS, params)
    assert listed and len(listed) < Finding.objects.count()
    rows = _csv(auditor.get(_export_link(auditor, FINDINGS, params)))
    assert [int(row["id"]) for row in rows] == [f.pk for f in listed]
    assert {row["code"] for row in rows} == {"payout_mismatch"}
    for row, finding in zip(rows, listed, strict=True):
        assert row["currency"] == finding.round.config_version.currency
        assert (row["expected"], row["claimed"]) == (str(finding.expected), str(finding.claimed))


def test_the_audit_log_list_exports_its_filtered_events_in_its_order(dealt, auditor):
    params = {"action": "round.stored", "q": "S01"}
    listed = _listed(auditor, EVENTS, params)
    assert listed and len(listed) < AuditEvent.objects.filter(action="round.stored").count()
    rows = _csv(auditor.get(_export_link(auditor, EVENTS, params)))
    assert [int(row["seq"]) for row in rows] == [e.seq for e in listed]
    assert [int(row["seq"]) for row in rows] == sorted((int(row["seq"]) for row in rows), reverse=True)
    assert {row["action"] for row in rows} == {"round.stored"}


def test_the_reports_list_exports_a_row_a_report(dealt, auditor):
    first = report_run(day_from=date(2026, 11, 28))
    again = report_run(day_from=date(2026, 11, 28))  # supersedes the first
    other = report_run(day_from=date(2026, 7, 15))
    params = {"status": "complete"}
    listed = _listed(auditor, REPORTS, params)
    assert {r.pk for r in listed} == {again.pk, other.pk}
    rows = _csv(auditor.get(_export_link(auditor, REPORTS, params)))
    assert [int(row["id"]) for row in rows] == [r.pk for r in listed]
    assert str(first.pk) not in {row["id"] for row in rows}
    row = next(row for row in rows if int(row["id"]) == again.pk)
    again.refresh_from_db()
    assert (row["day_from"], row["day_to"], row["version"], row["status"]) == (
        "2026-11-28", "2026-11-28", "2", "complete")
    assert (int(row["rounds"]), int(row["flags"]), int(row["drift"]), row["chain_ok"]) == (
        again.rounds, again.flags, again.drift, str(again.chain_ok))
    assert row["created_at"] == moment(again.created_at) and row["finished_at"] == moment(again.finished_at)
    assert MOMENT.fullmatch(row["created_at"]) and MOMENT.fullmatch(row["finished_at"])


def test_moments_are_in_stockholm_time_with_its_winter_and_summer_offsets(dealt, auditor):
    s01 = {"table__id__exact": Table.objects.get(code="S01").pk}
    rounds = {row["round"]: row for row in _csv(auditor.get(f"{ROUNDS}export.csv", s01))}
    assert rounds["c-se-01"]["dealt_at"] == "2026-11-28T20:00:00.000000+01:00"
    assert rounds[SUMMER_ROUND]["dealt_at"] == "2026-07-15T21:30:00.000000+02:00"
    findings = _csv(auditor.get(f"{FINDINGS}export.csv", {"q": SUMMER_ROUND}))
    assert findings and {row["dealt_at"] for row in findings} == {"2026-07-15T21:30:00.000000+02:00"}
    for row in findings:
        created = Finding.objects.get(pk=row["id"]).created_at
        assert row["created_at"] == moment(created) and MOMENT.fullmatch(row["created_at"])
    events = _csv(auditor.get(f"{EVENTS}export.csv", {"action": "round.stored"}))
    assert events and all(MOMENT.fullmatch(row["at"]) for row in events)
    # The same instant, UTC, in winter and in summer.
    assert moment(datetime(2026, 11, 30, 22, 15, 2, 123456, tzinfo=UTC)) == "2026-11-30T23:15:02.123456+01:00"
    assert moment(datetime(2026, 7, 1, 10, 0, tzinfo=UTC)) == "2026-07-01T12:00:00.000000+02:00"


def test_the_download_is_audited_first_with_what_and_how_the_list_was_filtered(dealt, auditor):
    before = AuditEvent.objects.filter(action="export.downloaded").count()
    response = auditor.get(f"{FINDINGS}export.csv", {"code__exact": "payout_mismatch", "q": "D001"})
    # Written when the answer is made, before a single row is read.
    event = AuditEvent.objects.filter(action="export.downloaded").order_by("-seq").first()
    assert AuditEvent.objects.filter(action="export.downloaded").count() == before + 1
    assert (event.actor_name, event.object_type, event.object_id) == ("iris", "export", "findings")
    assert "code__exact=payout_mismatch" in event.object_repr
    assert event.after["source"] == "admin"
    assert event.after["query"] == {"code__exact": ["payout_mismatch"], "q": ["D001"]}
    assert event.after["search"] == "D001"
    # The sidebar's choices, the queue's default state among them though the address has none.
    assert event.after["filters"]["code"] == "payout_mismatch" and "state" in event.after["filters"]
    _csv(response)


def test_a_day_or_days_linked_show_in_the_sidebar_and_in_the_exports_record(dealt, auditor):
    day = Round.objects.order_by("gaming_day").values_list("gaming_day", flat=True).first()
    listed = _listed(auditor, ROUNDS, {"gaming_day": day.isoformat()})
    assert listed and {r.gaming_day for r in listed} == {day}
    page = auditor.get(ROUNDS, {"gaming_day": day.isoformat()}).content.decode()
    assert f'<li class="selected">\n    <a href="?gaming_day={day.isoformat()}">{day.isoformat()}</a>' in page
    _csv(auditor.get(f"{ROUNDS}export.csv", {"gaming_day": day.isoformat()}))
    event = AuditEvent.objects.filter(action="export.downloaded").order_by("-seq").first()
    assert event.after["filters"] == {"gaming day": day.isoformat()}
    days = {"gaming_day__gte": day.isoformat(), "gaming_day__lt": (day + timedelta(days=2)).isoformat()}
    _csv(auditor.get(f"{ROUNDS}export.csv", days))
    event = AuditEvent.objects.filter(action="export.downloaded").order_by("-seq").first()
    assert event.after["filters"] == {"gaming day": f"from {day} to before {day + timedelta(days=2)}"}


def test_a_filter_default_is_exported_and_recorded_as_the_list_applies_it(dealt, auditor):
    """With no parameter the list applies its filters' defaults: so does the export, and the
    event names them, though the address does not."""
    listed = _listed(auditor, FINDINGS, {})
    rows = _csv(auditor.get(f"{FINDINGS}export.csv"))
    # The list has a row for each mistake (an off-unit seat's findings are one); the file holds
    # every finding those rows stand for.
    every = Finding.objects.filter(state="open", informational=False).order_by("-created_at", "-id")
    assert [f.pk for f in listed] == mistakes.keys(every)
    assert [int(row["id"]) for row in rows] == [f.pk for f in every] and len(rows) > len(listed)
    event = AuditEvent.objects.filter(action="export.downloaded").order_by("-seq").first()
    assert event.after["query"] == {}
    # The queue's state, as its sidebar shows it chosen: the default, with no "state" in the address.
    cl = auditor.get(FINDINGS).context["cl"]
    state = next(spec for spec in cl.filter_specs if "state" in spec.expected_parameters())
    shown = next(str(choice["display"]) for choice in state.choices(cl) if choice["selected"])
    assert event.after["filters"] == {"state": shown}
    assert {row["state"] for row in rows} <= {"open"} and len(rows) < Finding.objects.count()


@pytest.mark.parametrize("url", [ROUNDS, FINDINGS, EVENTS, REPORTS])
def test_staff_without_the_permission_see_no_button_and_are_refused_the_file(dealt, staff, url):
    nobody = staff(None, "nobody")
    before = AuditEvent.objects.filter(action="export.downloaded").count()
    assert nobody.get(url).status_code == 403
    assert nobody.get(f"{url}export.csv").status_code == 403
    assert AuditEvent.objects.filter(action="export.downloaded").count() == before


@pytest.mark.parametrize("url", [ROUNDS, FINDINGS, EVENTS, REPORTS])
def test_the_button_and_the_file_follow_the_export_permission(dealt, auditor, monkeypatch, url):
    assert "Download CSV" in auditor.get(url).content.decode()
    import trail.admin_exports

    monkeypatch.setattr(trail.admin_exports, "export_allowed", lambda user, export: False)
    page = auditor.get(url)
    assert page.status_code == 200 and "Download CSV" not in page.content.decode()
    assert auditor.get(f"{url}export.csv").status_code == 403


def test_the_permission_is_the_apis_own(dealt, django_user_model):
    """Reading rounds, not findings: the rounds' button and file, the findings' refused, as the API's."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("rounds-only", password="pw-for-tests-only", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_round", content_type__app_label="rounds"))
    client = Client()
    client.force_login(user)
    assert "Download CSV" in client.get(ROUNDS).content.decode()
    assert _csv(client.get(f"{ROUNDS}export.csv"))
    assert client.get(f"{FINDINGS}export.csv").status_code == 403
    day = {"first_day": "2026-11-28", "last_day": "2026-11-28"}
    assert _csv(client.get("/api/v1/exports/rounds.csv", day))
    assert client.get("/api/v1/exports/findings.csv", day).status_code == 403


def test_parameters_the_list_cannot_read_lead_back_to_it(dealt, auditor):
    response = auditor.get(f"{ROUNDS}export.csv", {"gaming_day": "not-a-day"})
    assert response.status_code == 302 and response["Location"] == f"{ROUNDS}?e=1"


def test_rows_cross_chunk_boundaries_in_the_lists_order(dealt, auditor, monkeypatch):
    import infra.exports

    monkeypatch.setattr(infra.exports, "CHUNK", 4)
    listed = _listed(auditor, ROUNDS, {})
    rows = _csv(auditor.get(f"{ROUNDS}export.csv"))
    seats = [(r.table.code, r.round_id, s.seat) for r in listed for s in r.seats.order_by("seat")]
    assert [(row["table"], row["round"], int(row["seat"])) for row in rows] == seats


def test_the_list_keeps_its_own_template_under_the_button(dealt, auditor):
    for url, admin_class in [(ROUNDS, RoundAdmin), (FINDINGS, FindingAdmin), (EVENTS, AuditEventAdmin),
                             (REPORTS, ReconciliationReportAdmin)]:
        page = auditor.get(url)
        names = [t.name for t in page.templates]
        assert names[0] == "admin/export_change_list.html" and "admin/change_list.html" in names, url
        assert admin_class.change_list_template is None or admin_class.change_list_template in names


def test_an_admin_with_a_download_but_no_export_is_refused_at_start_up():
    from django.contrib import admin
    from django.core.exceptions import ImproperlyConfigured

    from trail.admin_exports import CsvExportAdmin

    class Forgotten(CsvExportAdmin, admin.ModelAdmin):
        pass

    with pytest.raises(ImproperlyConfigured, match="Forgotten needs csv_export"):
        Forgotten(AuditEvent, admin.site)
