"""The auditors' admin: rounds posted over the API, read back as pages that change nothing."""

from __future__ import annotations

import hashlib
import re
from decimal import Decimal

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit.counts import count_enter
from audit.models import ProtectionFinding
from audit.protection.services import day_protect
from audit.reconciliation.services import report_run
from audit.reconciliation.variance_services import variance_findings_raise
from books.variance_tests import Period, PeriodFigures, Scope, comar
from progressive.models import Pool
from progressive.services import pool_version_create
from rounds.models import Finding, Round, Submission, TableConfig, TableKey
from rounds.services import config_version_create
from tests import examples
from tests.security.people import person
from trail.models import AuditEvent
from trail.services import Actor

pytestmark = pytest.mark.django_db

ROUNDS = "/api/v1/rounds/"
KEPT_APPS = ("trail", "rounds", "audit")


def se_example(index: int) -> dict:
    return examples.load("se-50kr.jsonl")[index]["record"]


# se-50kr.jsonl line 16: seat 5 was paid its Ante (450) where it pushes (0).
FLAGGED = 15
CLEAN = 16
# us-30k.jsonl line 1: a progressive award and the aggregate limit.
AWARDED = 0


@pytest.fixture
def worked(table_client):
    s01 = table_client("S01", "se-50kr")
    u01 = table_client("U01", "us-30k")
    for record in (se_example(FLAGGED), se_example(CLEAN)):
        assert s01.post(ROUNDS, record, format="json").status_code == 201
    awarded = examples.load("us-30k.jsonl")[AWARDED]["record"]
    assert u01.post(ROUNDS, awarded, format="json").status_code == 201

    bad_card = {**se_example(CLEAN), "round": "bad-card", "board": ["Xx", "5c", "Th", "7h", "9d"]}
    assert s01.post(ROUNDS, bad_card, format="json").status_code == 400
    not_json = b"this is not json <b>at all</b>"
    assert s01.post(ROUNDS, not_json, content_type="application/json").status_code == 400
    not_utf8 = b'{"round": "\xff\xfe"}'
    assert s01.post(ROUNDS, not_utf8, content_type="application/json").status_code == 400
    conflicting = {**se_example(CLEAN), "dealer": "D999"}
    assert s01.post(ROUNDS, conflicting, format="json").status_code == 409
    # A reconciliation report of that day, so its admin pages have a row to show,
    # and a variance finding it raised, for the variance queue's.
    day = Round.objects.get(round_id=se_example(CLEAN)["round"]).gaming_day
    report = report_run(day_from=day)
    variance_findings_raise(report=report, trips=comar([PeriodFigures(
        scope=Scope.TABLE, key="S01", currency="SEK", period=Period.DAY, day_from=day, day_to=day,
        handle=Decimal("1000.00"), win=Decimal("900.00"), theoretical=Decimal("20.00"), sd=Decimal("100"),
    )]))
    # A new version waiting for a second supervisor, for the version requests' pages.
    se = TableConfig.objects.get(name="se-50kr")
    first = se.versions.get(version=1)
    config_version_create(
        config=se, effective_from=timezone.now(), actor=Actor.of_user(person("supervisor", "asker")),
        note="ante up to 2000", ante_max="2000",
        **{name: getattr(first, name) for name in ("currency", "minor_unit", "unit", "ante_min", "trips_min",
                                                   "trips_max", "blind_pays", "trips_pays", "aggregate_limit",
                                                   "dealer_qualifier", "one_hand_per_player")},
    )
    # And a pool version, for the pool version requests' pages.
    pool = Pool.objects.get(code="us-progressive")
    latest = pool.versions.get(version=1)
    pool_version_create(
        pool=pool, effective_from=timezone.now(), actor=Actor.of_user(person("supervisor", "pool-asker")),
        note="rate up", rate="0.25",
        **{name: getattr(latest, name) for name in ("wager", "reseed", "ceiling", "reserve_rate",
                                                   "reading_tolerance", "lines")},
    )
    # The day's seats scored, and a game-protection finding, for the protection queue's pages.
    day_protect(day=day)
    ProtectionFinding.objects.create(
        code="pay_table_mismatch", key=f"table=S01 bet=trips line=full_house day={day}", table="S01",
        currency="SEK", day_from=day, day_to=day, figure=1, threshold=Decimal("0.5"),
        evidence={"bet": "trips", "line": "full_house", "configured": "8", "observed": "9", "observations": 3,
                  "fit_observed": 3, "fit_configured": 0, "examples": [["50", "450.00"]]},
        detail="table S01 paid the trips full house at 9:1 on 3 of 3 wins; its configuration pays 8:1",
    )
    # The cage's count of the day, for the counts' pages.
    count_enter(table_code="S01", gaming_day=day, user=person("supervisor", "cage"),
                amounts={"drop": "1000", "fills": "0", "credits": "0", "opening_inventory": "500",
                         "closing_inventory": "400"})

    return {
        "flagged": Round.objects.get(table__code="S01", round_id=se_example(FLAGGED)["round"]),
        "clean": Round.objects.get(table__code="S01", round_id=se_example(CLEAN)["round"]),
        "awarded": Round.objects.get(table__code="U01", round_id=awarded["round"]),
        "bad_card": Submission.objects.get(claimed_round="bad-card"),
        "not_json": Submission.objects.get(body_sha256=_sha256(not_json)),
        "not_utf8": Submission.objects.get(body_sha256=_sha256(not_utf8)),
    }


def _sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def kept_admins():
    return [(model, model_admin) for model, model_admin in admin.site._registry.items()
            if model._meta.app_label in KEPT_APPS]


def url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def page(client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, path
    return response.content.decode()


def mismatch_rows(html: str) -> list[str]:
    return re.findall(r'<tr class="mismatch">(.*?)</tr>', html, flags=re.DOTALL)


def cells(row: str) -> list[str]:
    found = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.DOTALL)
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in found]


# ---- the round page ----------------------------------------------------------


def test_round_page_lays_out_cards_settlement_and_findings(admin_client, worked):
    html = page(admin_client, url(Round, "change", worked["flagged"].pk))

    # Board Jd 5c Th 7h 9d: red diamonds and hearts, a black club, ten written as 10.
    assert 'class="card red" title="Jd">J♦</span>' in html
    assert 'class="card" title="5c">5♣</span>' in html
    assert 'class="card red" title="Th">10♥</span>' in html
    assert 'class="card" title="2s">2♠</span>' in html  # a dealer card
    assert 'title="Qs">Q♠</span>' in html  # seat 7's hole
    assert "payout_mismatch" in html
    assert "P-0242" in html
    assert "se-50kr v1" in html

    # Only seat 5's Ante differs: settled 0 (a push), paid 450.
    rows = [cells(row) for row in mismatch_rows(html)]
    assert rows == [["5", "ante", "450.00", "0.00", "450.00", "450.00"]]


def test_round_page_links_every_body_sent_under_its_round_id(admin_client, worked):
    html = page(admin_client, url(Round, "change", worked["clean"].pk))
    kept = Submission.objects.filter(claimed_round=worked["clean"].round_id)
    assert sorted(kept.values_list("outcome", flat=True)) == ["accepted", "conflict"]
    for submission in kept:
        assert url(Submission, "change", submission.pk) in html
    assert "conflicting_resubmission" in html
    assert not mismatch_rows(html)


def test_round_page_shows_the_progressive_events(admin_client, worked):
    round_ = worked["awarded"]
    html = page(admin_client, url(Round, "change", round_.pk))
    events = list(round_.meter_events.order_by("seq"))
    assert {e.kind for e in events} >= {"contribution", "award"}
    for event in events:
        seq = re.escape(str(event.seq))
        assert re.search(rf"<td>(<a [^>]+>)?{seq}(</a>)?</td><td>{event.kind}</td>", html), event
    assert "progressive_award" in html and "aggregate_limit_applied" in html


# ---- submissions ------------------------------------------------------------------


def test_submission_pages_show_every_body_decoded(admin_client, worked):
    listing = page(admin_client, url(Submission, "changelist"))
    outcomes = re.findall(r'class="field-outcome">(\w+)<', listing)
    assert sorted(outcomes) == ["Accepted"] * 3 + ["Conflict"] + ["Rejected"] * 3

    bad_card = page(admin_client, url(Submission, "change", worked["bad_card"].pk))
    assert "&quot;round&quot;: &quot;bad-card&quot;" in bad_card  # indented JSON, escaped
    assert "Xx" in bad_card and "board" in bad_card  # the errors name the field

    not_json = page(admin_client, url(Submission, "change", worked["not_json"].pk))
    assert "this is not json &lt;b&gt;at all&lt;/b&gt;" in not_json

    not_utf8 = page(admin_client, url(Submission, "change", worked["not_utf8"].pk))
    assert "\ufffd\ufffd" in not_utf8


@pytest.mark.parametrize(
    "body",
    [
        b'{"round": "r-1", "round": "r-2"}',  # indenting would drop the first
        b'{"round": "r-1", "ante": 1E2}',  # indenting would print 100.0
    ],
)
def test_a_body_that_would_not_indent_faithfully_is_shown_as_sent(admin_client, table_client, body):
    s01 = table_client("S01", "se-50kr")
    assert s01.post(ROUNDS, body, content_type="application/json").status_code == 400
    submission = Submission.objects.get(body_sha256=_sha256(body))
    html = page(admin_client, url(Submission, "change", submission.pk))
    assert body.decode().replace('"', "&quot;") in html


def test_a_lone_surrogate_escape_still_renders(admin_client, table_client):
    body = b'{"note": "\\ud800"}'
    s01 = table_client("S01", "se-50kr")
    assert s01.post(ROUNDS, body, content_type="application/json").status_code == 400
    submission = Submission.objects.get(body_sha256=_sha256(body))
    assert "\\ud800" in page(admin_client, url(Submission, "change", submission.pk))


def test_a_submission_downloads_byte_for_byte(admin_client, worked):
    submission = worked["not_utf8"]
    response = admin_client.get(reverse("admin:rounds_submission_body", args=[submission.pk]))
    assert response.status_code == 200
    assert response.content == b'{"round": "\xff\xfe"}'
    assert response["Content-Disposition"].startswith("attachment")


def test_submission_list_filters_by_outcome(admin_client, worked):
    html = page(admin_client, url(Submission, "changelist") + "?outcome__exact=rejected")
    assert re.findall(r'class="field-outcome">(\w+)<', html) == ["Rejected"] * 3


# ---- the other lists ---------------------------------------------------------------


def test_round_list_searches_players_and_filters_by_finding(admin_client, worked):
    flagged, clean = worked["flagged"], worked["clean"]
    by_player = page(admin_client, url(Round, "changelist") + "?q=P-0123")
    assert url(Round, "change", flagged.pk) in by_player
    assert url(Round, "change", clean.pk) not in by_player

    by_code = page(admin_client, url(Round, "changelist") + "?finding=payout_mismatch")
    assert url(Round, "change", flagged.pk) in by_code
    assert url(Round, "change", clean.pk) not in by_code
    assert url(Round, "change", worked["awarded"].pk) not in by_code


def test_finding_list_filters_by_code(admin_client, worked):
    html = page(admin_client, url(Finding, "changelist") + "?code__exact=payout_mismatch")
    codes = re.findall(r'class="field-code">(\w+)<', html)
    assert codes and set(codes) == {"payout_mismatch"}


def test_audit_event_page_shows_before_and_after(admin_client, worked):
    event = AuditEvent.objects.get(action="round.stored", object_id=str(worked["flagged"].pk))
    html = page(admin_client, url(AuditEvent, "change", event.pk))
    assert "&quot;status&quot;: &quot;flagged&quot;" in html
    assert event.hash in html
    assert url(Round, "change", worked["flagged"].pk) in html


def test_a_table_key_hash_is_never_shown(admin_client, worked):
    key = TableKey.objects.select_related("table").get(table__code="S01")
    for path in (
        url(TableKey, "changelist"),
        url(TableKey, "change", key.pk),
        url(key.table, "change", key.table.pk),
    ):
        html = page(admin_client, path)
        assert key.key_id in html
        assert key.key_hash not in html


def test_every_filter_sort_and_date_link_of_the_lists_works(admin_client, worked):
    for model in (Round, Submission, Finding, AuditEvent):
        listing = url(model, "changelist")
        links = set(re.findall(r'href="(\?[^"]+)"', page(admin_client, listing)))
        assert len(links) > 10, model
        for link in links:
            # An unknown lookup would redirect to ?e=1; a broken filter would fail the page.
            page(admin_client, listing + link.replace("&amp;", "&"))


def test_every_list_and_page_renders(admin_client, worked):
    for model, _ in kept_admins():
        page(admin_client, url(model, "changelist"))
        obj = model._default_manager.first()
        assert obj is not None, model
        page(admin_client, url(model, "change", obj.pk))


# ---- nothing a table sent can be changed here ------------------------------------


def test_no_record_can_be_added_or_deleted_even_by_a_superuser(admin_client, worked):
    for model, _ in kept_admins():
        listing = page(admin_client, url(model, "changelist"))
        assert url(model, "add") not in listing, model
        assert 'value="delete_selected"' not in listing, model  # no bulk delete
        added = admin_client.get(url(model, "add"))
        if model._meta.label == "audit.TableCount":
            # Counts are entered through their own form (audit.counts, an event each): the admin's
            # usual address leads there, never to a generic form.
            assert (added.status_code, added["Location"]) == (302, "/admin/audit/tablecount/enter/")
        else:
            assert added.status_code == 403, model
        obj = model._default_manager.first()
        assert admin_client.get(url(model, "delete", obj.pk)).status_code == 403, model
        refused = admin_client.post(url(model, "delete", obj.pk), {"post": "yes"})
        assert refused.status_code == 403, model
        assert model._default_manager.filter(pk=obj.pk).exists(), model


def test_posting_to_a_round_page_changes_nothing(admin_client, worked):
    round_ = worked["flagged"]
    before = Round.objects.filter(pk=round_.pk).values().get()
    response = admin_client.post(
        url(Round, "change", round_.pk),
        {"dealer": "D000", "status": "verified", "round_id": "edited", "_save": "Save"},
    )
    assert response.status_code == 403
    assert Round.objects.filter(pk=round_.pk).values().get() == before


def test_a_bulk_delete_post_deletes_nothing(admin_client, worked):
    pks = list(Round.objects.values_list("pk", flat=True))
    bulk_delete = {"action": "delete_selected", "_selected_action": pks, "post": "yes"}
    admin_client.post(url(Round, "changelist"), bulk_delete)
    assert sorted(Round.objects.values_list("pk", flat=True)) == sorted(pks)


def test_a_staff_auditor_reads_but_cannot_change(client, auditor, worked):
    auditor.is_staff = True
    auditor.save(update_fields=["is_staff"])
    client.force_login(auditor)
    round_ = worked["flagged"]
    assert "payout_mismatch" in page(client, url(Round, "change", round_.pk))
    assert client.post(url(Round, "change", round_.pk), {"dealer": "D000"}).status_code == 403
    assert Round.objects.get(pk=round_.pk).dealer == "D007"


# ---- query counts -----------------------------------------------------------------


def _queries(client, path: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        page(client, path)
    return len(queries)


def test_list_queries_do_not_grow_with_rows(admin_client, table_client):
    s01 = table_client("S01", "se-50kr")
    records = [se_example(i) for i in range(FLAGGED, FLAGGED + 10)]  # players, findings, 1-5 seats
    models = (Round, Submission, Finding, AuditEvent, TableKey)
    listings = [url(model, "changelist") for model in models]

    for record in records[:2]:
        assert s01.post(ROUNDS, record, format="json").status_code == 201
    few = {path: _queries(admin_client, path) for path in listings}
    for record in records[2:]:
        assert s01.post(ROUNDS, record, format="json").status_code == 201
    many = {path: _queries(admin_client, path) for path in listings}

    assert Round.objects.count() == 10
    assert many == few


def test_round_page_queries_do_not_grow_with_seats(admin_client, table_client):
    s01 = table_client("S01", "se-50kr")
    one_seat, seven_seats = se_example(16), se_example(27)
    assert len(one_seat["seats"]) == 1 and len(seven_seats["seats"]) == 7
    for record in (one_seat, seven_seats):
        assert s01.post(ROUNDS, record, format="json").status_code == 201
    small, large = (Round.objects.get(round_id=r["round"]) for r in (one_seat, seven_seats))
    assert _queries(admin_client, url(Round, "change", small.pk)) == _queries(
        admin_client, url(Round, "change", large.pk)
    )


def test_a_body_download_needs_view_permission_on_submissions(client, django_user_model, worked):
    clerk = django_user_model.objects.create_user("clerk", is_staff=True)
    client.force_login(clerk)
    download = reverse("admin:rounds_submission_body", args=[worked["not_json"].pk])
    assert client.get(download).status_code == 403
