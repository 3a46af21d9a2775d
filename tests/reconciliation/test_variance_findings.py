"""The variance tests' settings and findings: configured with field-level refusals, raised once, worked."""

from __future__ import annotations

import json
import re
from datetime import date
from decimal import Decimal as D

import pytest
from django.contrib.auth.models import Group, Permission
from django.db.models import ProtectedError
from django.test import Client

from audit.models import ReconciliationReport, VarianceFinding, VarianceTestSetting
from audit.reconciliation.variance_selectors import variance_test_settings
from audit.reconciliation.variance_services import (
    VarianceTestSettingError,
    variance_findings_raise,
    variance_test_configure,
)
from books.variance_tests import DEFAULTS, Period, PeriodFigures, Scope, comar, kansas
from casino.services import user_roles_set
from infra import work
from rounds.models import Finding
from rounds.services import FindingTransitionError, finding_transition
from trail.models import AuditEvent
from trail.services import SYSTEM

pytestmark = pytest.mark.django_db

DAY = date(2026, 11, 28)
QUEUE = "/admin/audit/variancefinding/"


def settings_url(code: str) -> str:
    return f"/admin/audit/variancetestsetting/{VarianceTestSetting.objects.get(code=code).pk}/change/"


@pytest.fixture
def staff(django_user_model):
    def login(role: str) -> Client:
        user = django_user_model.objects.create_user(f"{role}-v", password="pw-for-tests-only")
        user_roles_set(user=user, roles=[role], actor=SYSTEM)
        client = Client()
        client.force_login(user)
        return client

    return login


def report(version: int = 1, *, day: date = DAY) -> ReconciliationReport:
    status = ReconciliationReport.Status.COMPLETE if version == 1 else ReconciliationReport.Status.RUNNING
    return ReconciliationReport.objects.create(
        day_from=day, day_to=day, version=version, status=status, engine_version="engine-sha256:test",
    )


def day_trips(*, day: date = DAY, win: str = "900.00", keys=("S01",)):
    return comar([
        PeriodFigures(scope=Scope.TABLE, key=key, currency="SEK", period=Period.DAY, day_from=day,
                      day_to=day, handle=D("1000.00"), win=D(win), theoretical=D("20.00"), sd=D("100"))
        for key in keys
    ])


@pytest.fixture
def raised():
    return variance_findings_raise(report=report(), trips=day_trips(keys=("S01", "S02", "S03")))


# ---- settings ------------------------------------------------------------------------------


def test_the_migration_seeds_comar_on_and_kansas_and_ohio_off():
    settings = variance_test_settings()
    assert settings.comar.enabled and not settings.kansas.enabled and not settings.ohio.enabled
    assert (settings.kansas.threshold, settings.ohio.threshold) == (D(3), D(4))
    assert settings.kansas.base_hold is None
    data = json.loads(json.dumps(settings.as_json()))  # what a report keeps in its inputs
    assert data["comar"]["enabled"] is True and D(data["kansas"]["threshold"]) == 3


def test_without_rows_every_test_runs_with_its_defaults():
    VarianceTestSetting.objects.all().delete()
    settings = variance_test_settings()
    assert (settings.comar, settings.kansas, settings.ohio) == (
        DEFAULTS["comar"], DEFAULTS["kansas"], DEFAULTS["ohio"]
    )


def test_configuring_a_test_stores_it_and_audits_before_and_after(django_user_model):
    row = variance_test_configure(code="kansas", enabled=True, threshold="2.5", base_hold="16",
                                  actor=SYSTEM, request_id="req-1")
    assert (row.enabled, row.threshold, row.base_hold) == (True, D("2.5"), D(16))
    assert variance_test_settings().kansas.base_hold == D(16)
    event = AuditEvent.objects.get(action="variance_test.configured")
    assert event.before == {"code": "kansas", "enabled": False, "threshold": "3.0000", "base_hold": None}
    assert event.after == {"code": "kansas", "enabled": True, "threshold": "2.5000", "base_hold": "16.0000"}
    assert event.request_id == "req-1"


@pytest.mark.parametrize("code,changes,field,message", [
    ("kansas", {"threshold": "-1"}, "threshold", "negative"),
    ("ohio", {"threshold": "-0.0001"}, "threshold", "negative"),
    ("kansas", {"threshold": "three"}, "threshold", "not a number"),
    ("kansas", {"threshold": 3.0}, "threshold", "not a number"),  # a float is never a figure
    ("kansas", {"threshold": "NaN"}, "threshold", "not a number"),
    ("kansas", {"threshold": None}, "threshold", "needs one"),
    ("kansas", {"threshold": "1.00001"}, "threshold", "4 decimal places"),
    ("ohio", {"threshold": "1000"}, "threshold", "above"),
    ("comar", {"threshold": "3"}, "threshold", "takes none"),
    ("kansas", {"base_hold": "100.0001"}, "base_hold", "above"),
    ("kansas", {"base_hold": "-2"}, "base_hold", "negative"),
    ("kansas", {"base_hold": "x"}, "base_hold", "not a number"),
    ("ohio", {"base_hold": "10"}, "base_hold", "takes none"),
    ("kansas", {"enabled": "yes"}, "enabled", "true or false"),
    ("arizona", {}, "code", "not a variance test"),
])
def test_configuring_refuses_with_the_field_that_is_wrong(code, changes, field, message):
    numbers = {"enabled": True, "threshold": None if code == "comar" else "3", "base_hold": None} | changes
    before = list(VarianceTestSetting.objects.order_by("code").values())
    with pytest.raises(VarianceTestSettingError) as refused:
        variance_test_configure(code=code, actor=SYSTEM, **numbers)
    assert list(refused.value.errors) == [field]
    assert message in " ".join(refused.value.errors[field])
    assert list(VarianceTestSetting.objects.order_by("code").values()) == before
    assert not AuditEvent.objects.filter(action="variance_test.configured").exists()


def test_every_wrong_field_is_named_at_once():
    with pytest.raises(VarianceTestSettingError) as refused:
        variance_test_configure(code="kansas", enabled=True, threshold="-3", base_hold="abc", actor=SYSTEM)
    assert set(refused.value.errors) == {"threshold", "base_hold"}


def test_a_supervisor_changes_a_test_in_the_admin_and_it_is_audited(staff):
    client = staff("supervisor")
    page = client.get(settings_url("kansas"))
    assert page.status_code == 200 and set(page.context["adminform"].form.fields) == {
        "enabled", "threshold", "base_hold"
    }
    response = client.post(settings_url("kansas"), {"enabled": "on", "threshold": "2.75", "base_hold": ""})
    assert response.status_code == 302, response.content.decode()[:2000]
    row = VarianceTestSetting.objects.get(code="kansas")
    assert (row.enabled, row.threshold, row.base_hold, row.changed_by_name) == (
        True, D("2.75"), None, "supervisor-v"
    )
    event = AuditEvent.objects.get(action="variance_test.configured")
    assert event.actor_name == "supervisor-v" and event.after["threshold"] == "2.7500"


@pytest.mark.parametrize("threshold,message", [("-1", "negative"), ("abc", "not a number"), ("", "needs one")])
def test_the_admin_form_shows_a_refusal_beside_its_field(staff, threshold, message):
    client = staff("supervisor")
    response = client.post(settings_url("ohio"), {"enabled": "on", "threshold": threshold})
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["threshold"] and message in " ".join(errors["threshold"])
    assert VarianceTestSetting.objects.get(code="ohio").threshold == D(4)
    assert not AuditEvent.objects.filter(action="variance_test.configured").exists()


def test_the_admin_offers_comar_no_threshold_and_adds_or_deletes_no_test(staff):
    client = staff("supervisor")
    form = client.get(settings_url("comar")).context["adminform"].form
    assert set(form.fields) == {"enabled"}
    assert client.get("/admin/audit/variancetestsetting/add/").status_code == 403
    row = VarianceTestSetting.objects.get(code="comar")
    assert client.post(f"/admin/audit/variancetestsetting/{row.pk}/delete/", {"post": "yes"}).status_code == 403


def test_an_auditor_reads_the_settings_but_cannot_change_them(staff):
    client = staff("auditor")
    assert client.get(settings_url("kansas")).status_code == 200
    assert client.post(settings_url("kansas"), {"enabled": "on", "threshold": "1"}).status_code == 403
    assert not VarianceTestSetting.objects.get(code="kansas").enabled


# ---- raising findings -------------------------------------------------------------------------


def test_raising_stores_each_trip_with_its_figures_and_audits_it():
    first = report()
    [finding] = variance_findings_raise(report=first, trips=day_trips())
    stored = VarianceFinding.objects.get()
    assert stored.pk == finding.pk and stored.report == first and stored.state == "open"
    assert (stored.test, stored.scope, stored.key, stored.currency, stored.period) == (
        "comar", "table", "S01", "SEK", "day"
    )
    assert stored.figures["win"] == "900.00" and "low_95" in stored.figures and "SEK" in stored.detail
    event = AuditEvent.objects.get(action="variance_finding.raised")
    assert event.object_type == "audit.variancefinding" and event.object_id == str(stored.pk)
    assert event.after["figures"]["win"] == "900.00" and event.after["report"] == first.pk


def test_a_rerun_of_a_day_raises_nothing_twice():
    first = variance_findings_raise(report=report(1), trips=day_trips())
    again = variance_findings_raise(report=report(2), trips=day_trips(win="950.00"))
    assert len(first) == 1 and again == []
    finding = VarianceFinding.objects.get()
    # The finding already there keeps its report and figures.
    assert finding.report.version == 1 and finding.figures["win"] == "900.00"
    assert AuditEvent.objects.filter(action="variance_finding.raised").count() == 1


def test_the_same_trip_twice_in_one_call_is_one_finding_and_another_day_is_another():
    trips = day_trips() + day_trips()
    assert len(variance_findings_raise(report=report(), trips=trips)) == 1
    next_day = date(2026, 11, 29)
    assert len(variance_findings_raise(report=report(day=next_day), trips=day_trips(day=next_day))) == 1
    assert VarianceFinding.objects.count() == 2


def test_a_test_of_another_period_or_test_is_its_own_finding():
    month = PeriodFigures(scope=Scope.TABLE, key="S01", currency="SEK", period=Period.MONTH_TO_DATE,
                          day_from=date(2026, 11, 1), day_to=DAY, handle=D("10000.00"), win=D("900.00"),
                          theoretical=D("20.00"), sd=D("100"))
    trips = day_trips() + comar([month]) + kansas([month], threshold=D(3), base_hold=None)
    assert len(variance_findings_raise(report=report(), trips=trips)) == 3


def test_a_report_with_findings_cannot_be_deleted(raised):
    with pytest.raises(ProtectedError):
        raised[0].report.delete()


# ---- working findings -------------------------------------------------------------------------


def test_the_work_vocabulary_has_one_home():
    assert Finding.State is work.State and VarianceFinding.State is work.State
    choices = dict(VarianceFinding._meta.get_field("state").choices)
    assert choices == dict(Finding._meta.get_field("state").choices) == dict(work.State.choices)


def test_the_transition_moves_variance_findings_and_audits_them(raised, django_user_model):
    user = django_user_model.objects.create_user("ines")
    moved = finding_transition(finding_ids=[raised[0].pk], to_state="acknowledged", user=user,
                               model=VarianceFinding)
    finding = VarianceFinding.objects.get(pk=moved[0].pk)
    assert (finding.state, finding.state_changed_by, finding.state_changed_by_name) == (
        "acknowledged", user, "ines"
    )
    event = AuditEvent.objects.get(action="variance_finding.acknowledged")
    assert event.before == {"state": "open"} and event.object_type == "audit.variancefinding"
    with pytest.raises(FindingTransitionError, match="needs a note"):
        finding_transition(finding_ids=[finding.pk], to_state="dismissed", user=user, model=VarianceFinding)
    # A round finding's id is not a variance finding's.
    with pytest.raises(FindingTransitionError, match="do not exist"):
        finding_transition(finding_ids=[10**9], to_state="acknowledged", user=user, model=VarianceFinding)


def test_an_auditor_sees_the_queue_with_its_figures_and_filters(raised, staff):
    client = staff("auditor")
    page = client.get(QUEUE, {"test__exact": "comar", "state__exact": "open", "currency": "SEK",
                              "period__exact": "day"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "Acknowledge selected findings" in html
    assert "900.00" in html and "20.00" in html and "S02" in html
    assert "Maryland COMAR 36.05.03.25" in html
    assert client.get(QUEUE, {"test__exact": "ohio"}).context["cl"].result_count == 0
    change = client.get(f"{QUEUE}{raised[0].pk}/change/").content.decode()
    assert "low 95" in change and "high 95" in change and raised[0].figures["high_95"] in change


def test_acknowledging_in_the_admin_moves_the_finding_and_audits_it(raised, staff):
    client = staff("auditor")
    ids = [str(f.pk) for f in raised[:2]]
    response = client.post(QUEUE, {"action": "acknowledge", "_selected_action": ids})
    assert response.status_code == 302
    assert set(VarianceFinding.objects.filter(pk__in=ids).values_list("state", flat=True)) == {"acknowledged"}
    assert VarianceFinding.objects.get(pk=raised[2].pk).state == "open"
    events = AuditEvent.objects.filter(action="variance_finding.acknowledged")
    assert events.count() == 2 and {e.actor_name for e in events} == {"auditor-v"}
    listing = client.get(QUEUE).content.decode()
    assert "auditor-v" in listing


def test_dismissing_in_the_admin_asks_for_a_note_first(raised, staff):
    client = staff("supervisor")
    target = str(raised[0].pk)
    form = client.post(QUEUE, {"action": "dismiss", "_selected_action": [target]})
    assert form.status_code == 200 and b'name="note"' in form.content and str(raised[0]).encode() in form.content
    assert VarianceFinding.objects.get(pk=target).state == "open"
    done = client.post(QUEUE, {"action": "dismiss", "_selected_action": [target], "apply": "1",
                               "note": "the table's new pay table; theoretical recomputed"})
    assert done.status_code == 302
    finding = VarianceFinding.objects.get(pk=target)
    assert (finding.state, finding.state_note) == ("dismissed", "the table's new pay table; theoretical recomputed")
    assert AuditEvent.objects.get(action="variance_finding.dismissed").after["note"].startswith("the table")


def test_without_the_work_permission_there_is_no_action(raised, django_user_model):
    user = django_user_model.objects.create_user("viewer-v", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_variancefinding"))
    client = Client()
    client.force_login(user)
    assert b"Acknowledge selected" not in client.get(QUEUE).content
    client.post(QUEUE, {"action": "acknowledge", "_selected_action": [str(raised[0].pk)]})
    assert VarianceFinding.objects.get(pk=raised[0].pk).state == "open"


def test_a_findings_figures_are_never_changed_in_the_admin(raised, staff):
    client = staff("supervisor")
    finding = raised[0]
    response = client.post(f"{QUEUE}{finding.pk}/change/", {"detail": "nothing to see", "figures": "{}"})
    assert response.status_code == 403
    assert VarianceFinding.objects.get(pk=finding.pk).detail == finding.detail
    assert AuditEvent.objects.get(action="admin.change_refused").object_type == "audit.variancefinding"
    assert client.get(f"{QUEUE}add/").status_code == 403


def test_auditors_and_supervisors_work_variance_findings_and_only_supervisors_configure():
    def perms(name: str) -> set[str]:
        return {f"{p.content_type.app_label}.{p.codename}"
                for p in Group.objects.get(name=name).permissions.select_related("content_type")}

    auditor, supervisor = perms("auditor"), perms("supervisor")
    assert {"audit.work_variancefinding", "audit.view_variancefinding", "audit.view_variancetestsetting"} <= auditor
    assert "audit.change_variancetestsetting" not in auditor
    assert {"audit.work_variancefinding", "audit.change_variancetestsetting"} <= supervisor
    assert not {"audit.change_variancefinding", "audit.delete_variancefinding"} & (supervisor | perms("admin"))


def test_every_filter_and_sort_link_of_the_queue_works(raised, admin_client):
    links = set(re.findall(r'href="(\?[^"]+)"', admin_client.get(QUEUE).content.decode()))
    assert len(links) > 10
    for link in links:
        # An unknown lookup would redirect to ?e=1; a broken filter would fail the page.
        assert admin_client.get(QUEUE + link.replace("&amp;", "&")).status_code == 200, link
