"""The rounds changelist's filters by finding code, player and dealer, and its player search:
each round that matches, once, and SQL without DISTINCT."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.api.test_list_filters import stored  # noqa: F401 (the same five rounds)

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:rounds_round_changelist")

FILTERS = [
    ({"finding": "payout_mismatch"}, ["S02/R-1", "S01/R-3", "S01/R-1"]),
    ({"finding": "player_multiple_hands"}, ["S01/R-1"]),
    ({"finding": "duplicate_card"}, []),
    ({"player": "P-7"}, ["S02/R-1", "S01/R-2", "S01/R-1"]),
    ({"player": "P-404"}, []),
    ({"dealer": "D9"}, ["S01/R-4", "S01/R-3"]),
    ({"q": "P-7"}, ["S02/R-1", "S01/R-2", "S01/R-1"]),
    ({"q": "P-1"}, ["S01/R-3", "S01/R-1"]),
    ({"q": "R-1"}, ["S02/R-1", "S01/R-1"]),  # a round id by its start
    ({"q": "R-"}, ["S02/R-1", "S01/R-4", "S01/R-3", "S01/R-2", "S01/R-1"]),
    ({"q": "S02"}, ["S02/R-1"]),
    ({"q": "D9"}, ["S01/R-4", "S01/R-3"]),
    ({"player": "P-7", "finding": "payout_mismatch"}, ["S02/R-1", "S01/R-1"]),
    ({"dealer": "D7", "finding": "payout_mismatch"}, ["S02/R-1", "S01/R-1"]),
    ({"q": "nobody"}, []),
]
IDS = ["&".join(f"{k}={v}" for k, v in params.items()) for params, _ in FILTERS]


def listed(response) -> list[str]:
    assert response.status_code == 200
    return [f"{r.table.code}/{r.round_id}" for r in response.context["cl"].result_list]


@pytest.mark.parametrize("params,expected", FILTERS, ids=IDS)
def test_each_filter_lists_exactly_its_rounds_once(admin_client, stored, params, expected):  # noqa: F811
    response = admin_client.get(CHANGELIST, params)
    assert listed(response) == expected
    assert response.context["cl"].result_count == len(expected)


@pytest.mark.parametrize("params,expected", FILTERS[:-1], ids=IDS[:-1])  # the last asks for nothing
def test_no_filter_asks_the_database_for_distinct(admin_client, stored, params, expected):  # noqa: F811
    with CaptureQueriesContext(connection) as captured:
        response = admin_client.get(CHANGELIST, params)
    assert response.status_code == 200
    statements = [q["sql"] for q in captured.captured_queries if '"rounds_round"' in q["sql"]]
    assert statements
    assert not [sql for sql in statements if "DISTINCT" in sql.upper()]
    assert "DISTINCT" not in str(response.context["cl"].queryset.query).upper()


def test_the_finding_count_shown_is_each_rounds_own(admin_client, stored):  # noqa: F811
    response = admin_client.get(CHANGELIST, {"finding": "payout_mismatch"})
    counts = {f"{r.table.code}/{r.round_id}": r.finding_total for r in response.context["cl"].result_list}
    assert counts["S01/R-1"] == 3  # two payouts wrong and a player on two seats
    assert counts["S01/R-3"] == 1


def test_a_chosen_player_or_dealer_is_shown_in_the_sidebar(admin_client, stored):  # noqa: F811
    html = admin_client.get(CHANGELIST, {"player": "P-7", "dealer": "D7"}).content.decode()
    assert "By player" in html and "P-7" in html
    assert "By dealer" in html and "D7" in html


def test_a_search_term_naming_two_kinds_finds_both(admin_client, stored):  # noqa: F811
    from rounds.models import Table
    from tests.api.records import HOLES, record, seat
    from tests.api.test_list_filters import store

    # A dealer id that is a player's too.
    store(Table.objects.get(code="S01"), record("R-5", dealer="P-2", dealt_at="2026-11-29T20:00:00+01:00",
                                                 seats=[seat(1, list(HOLES[0]), player="P-3")]))
    assert listed(admin_client.get(CHANGELIST, {"q": "P-2"})) == ["S02/R-1", "S01/R-3", "S01/R-5"]


def _choices(admin_client, model: str, field: str) -> list:
    response = admin_client.get(reverse(f"admin:{model.replace('.', '_')}_changelist"))
    spec = next(s for s in response.context["cl"].filter_specs if getattr(s, "field_path", None) == field)
    return list(spec.lookup_choices)


@pytest.mark.parametrize("model,field", [("trail.auditevent", "action"), ("trail.auditevent", "object_type")])
def test_values_read_from_an_index_are_djangos_distinct_values(admin_client, stored, model, field):  # noqa: F811
    from django.apps import apps

    expected = list(apps.get_model(model).objects.order_by(field).values_list(field, flat=True).distinct())
    assert len(expected) > 1
    assert _choices(admin_client, model, field) == expected


def test_the_findings_dealer_filter_lists_the_dealers_of_the_last_three_months(
        admin_client, stored, monkeypatch):  # noqa: F811
    from datetime import timedelta

    from rounds.admin.findings import RecentDealerFilter
    from rounds.models import Round

    latest = max(Round.objects.values_list("gaming_day", flat=True))
    monkeypatch.setattr(RecentDealerFilter, "today", staticmethod(lambda: latest))
    expected = list(Round.objects.order_by("dealer").values_list("dealer", flat=True).distinct())
    assert len(expected) > 1
    assert _choices(admin_client, "rounds.finding", "round__dealer") == expected
    # 120 days on, the month two months before is after every round's: none listed, any still filtered by.
    later = latest + timedelta(days=120)
    monkeypatch.setattr(RecentDealerFilter, "today", staticmethod(lambda: later))
    assert _choices(admin_client, "rounds.finding", "round__dealer") == []
    findings = admin_client.get(reverse("admin:rounds_finding_changelist"), {"round__dealer": "D9"})
    assert findings.status_code == 200 and findings.context["cl"].result_count > 0


def test_submissions_filter_by_http_status(admin_client, stored):  # noqa: F811
    from rounds.models import Submission

    accepted = Submission.objects.first()
    refused = Submission.objects.create(
        table=accepted.table, body=b"{}", body_sha256="0" * 64, outcome=Submission.Outcome.CONFLICT,
        http_status=409,
    )
    changelist = reverse("admin:rounds_submission_changelist")
    response = admin_client.get(changelist, {"http_status": "409"})
    assert [s.pk for s in response.context["cl"].result_list] == [refused.pk]
    response = admin_client.get(changelist, {"http_status": "201"})
    assert len(response.context["cl"].result_list) == Submission.objects.filter(http_status=201).count() == 5
    html = admin_client.get(reverse("admin:rounds_submission_changelist")).content.decode()
    assert "409 Conflict" in html
