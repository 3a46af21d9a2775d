"""The auditors' read API: rounds, one round, findings; filters, access, pagination."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from api.rounds.views import DealtAtCursor, NewestFirstCursor
from rounds.models import Finding, Round
from rounds.services import finding_transition

from .records import FINDINGS, ROUNDS, record, seat

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(table_client):
    """Four rounds on two tables, with what each filter should pick out.

    S01/R-1  D1  verified  29 Nov 21:00 (+01)  gaming day 29 Nov
    S01/R-2  D2  flagged   30 Nov 03:00 (+01)  gaming day 29 Nov (before the 06:00 cut-off);
                                    P-0001 on two seats, two payouts that differ
    S01/R-3  D1  settled   30 Nov 10:00 (+01)  gaming day 30 Nov, player P-0042
    S02/R-1  D2  void      30 Nov 12:00 (+01)  gaming day 30 Nov
    """
    s01 = table_client("S01", "se-50kr")
    s02 = table_client("S02", "se-50kr")
    flagged = record("R-2", dealer="D2", dealt_at="2026-11-30T03:00:00+01:00")
    flagged["seats"][1]["player"] = "P-0001"  # one player on two seats
    flagged["seats"][0]["paid"]["ante"] = "100"  # and two payouts that differ
    flagged["seats"][1]["paid"]["play"] = "400"
    unpaid = record("R-3", dealer="D1", dealt_at="2026-11-30T10:00:00+01:00",
                    seats=[seat(1, ["5c", "6d"], player="P-0042")])
    del unpaid["seats"][0]["paid"]
    void = record("R-1", table="S02", dealer="D2", dealt_at="2026-11-30T12:00:00+01:00", void=True)
    for seat_ in void["seats"]:
        del seat_["paid"]
    posts = [
        (s01, record("R-1", dealer="D1", dealt_at="2026-11-29T21:00:00+01:00")),
        (s01, flagged),
        (s01, unpaid),
        (s02, void),
    ]
    for client, data in posts:
        assert client.post(ROUNDS, data, format="json").status_code == 201
    return {
        (r.table.code, r.round_id): r.pk for r in Round.objects.select_related("table")
    }


def names(response) -> list[str]:
    assert response.status_code == 200, response.json()
    return [f"{r['table']}/{r['round']}" for r in response.json()["results"]]


def get(client, path: str, **params):
    return client.get(f"{path}?{urlencode(params)}" if params else path)


ROUND_FILTERS = [
    ({}, ["S02/R-1", "S01/R-3", "S01/R-2", "S01/R-1"]),
    ({"table": "S02"}, ["S02/R-1"]),
    ({"round": "R-1"}, ["S02/R-1", "S01/R-1"]),
    ({"dealer": "D1"}, ["S01/R-3", "S01/R-1"]),
    ({"player": "P-0042"}, ["S01/R-3"]),
    ({"player": "P-0001"}, ["S02/R-1", "S01/R-2", "S01/R-1"]),
    ({"status": "flagged"}, ["S01/R-2"]),
    ({"status": "settled"}, ["S01/R-3"]),
    ({"status": "void"}, ["S02/R-1"]),
    ({"code": "player_multiple_hands"}, ["S01/R-2"]),
    ({"code": "payout_mismatch"}, ["S01/R-2"]),  # two such findings, still one round
    ({"code": "bet_off_unit"}, []),
    ({"dealt_after": "2026-11-30T00:00:00+01:00"}, ["S02/R-1", "S01/R-3", "S01/R-2"]),
    ({"dealt_before": "2026-11-30T03:00:00+01:00"}, ["S01/R-1"]),
    # dealt_after is inclusive, dealt_before exclusive; any offset means the same instant.
    (
        {"dealt_after": "2026-11-30T02:00:00Z", "dealt_before": "2026-11-30T11:00:00Z"},
        ["S01/R-3", "S01/R-2"],
    ),
    ({"gaming_day": "2026-11-29"}, ["S01/R-2", "S01/R-1"]),
    ({"gaming_day": "2026-11-30", "table": "S01"}, ["S01/R-3"]),
]


@pytest.mark.parametrize(
    "params,expected", ROUND_FILTERS, ids=[urlencode(p) or "all" for p, _ in ROUND_FILTERS]
)
def test_rounds_filter(auditor_client, stored, params, expected):
    assert names(get(auditor_client, ROUNDS, **params)) == expected


@pytest.mark.parametrize(
    "params",
    [
        {"status": "great"}, {"code": "no_such_code"},
        {"dealt_after": "yesterday"}, {"gaming_day": "29/11"},
    ],
    ids=["status", "code", "dealt_after", "gaming_day"],
)
def test_a_bad_filter_value_is_400_naming_it(auditor_client, stored, params):
    response = get(auditor_client, ROUNDS, **params)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert set(response.json()["errors"]) == set(params)


def test_round_detail_is_what_the_table_was_answered(table_client, auditor_client):
    posted = table_client("S01", "se-50kr").post(ROUNDS, record(), format="json").json()
    response = auditor_client.get(f"{ROUNDS}{posted['id']}/")
    assert response.status_code == 200
    assert response.json() == posted
    assert auditor_client.get(f"{ROUNDS}{posted['id'] + 1000}/").status_code == 404


def _finding_ids(**filters) -> list[int]:
    newest_first = Finding.objects.filter(**filters).order_by("-created_at", "-id")
    return list(newest_first.values_list("pk", flat=True))


def test_findings_filter(auditor, auditor_client, stored):
    resolved = Finding.objects.get(code="payout_mismatch", bet="play")
    finding_transition(
        finding_ids=[resolved.pk], to_state="resolved", user=auditor, note="dealer corrected"
    )

    def ids(**params) -> list[int]:
        response = get(auditor_client, FINDINGS, **params)
        assert response.status_code == 200, response.json()
        return [f["id"] for f in response.json()["results"]]

    everything = _finding_ids()
    assert sorted(Finding.objects.values_list("code", flat=True)) == [
        "payout_mismatch", "payout_mismatch", "player_multiple_hands",
    ]
    assert ids() == everything
    assert ids(table="S01") == _finding_ids(round__table__code="S01")
    assert ids(table="S02") == []
    assert ids(dealer="D2") == _finding_ids(round__dealer="D2") != []
    assert ids(dealer="D1") == []
    assert ids(code="payout_mismatch") == _finding_ids(code="payout_mismatch")
    assert len(ids(code="payout_mismatch")) == 2
    assert ids(state="resolved") == [resolved.pk]
    assert resolved.pk not in ids(state="open") and ids(state="open")
    response = get(auditor_client, FINDINGS, code="payout_mismatch", state="resolved")
    [finding] = response.json()["results"]
    assert {"code", "seat", "bet", "expected", "claimed", "detail", "state"} <= set(finding)
    assert (finding["seat"], finding["bet"], finding["state"]) == (2, "play", "resolved")


def test_rounds_page_by_cursor(auditor_client, stored, monkeypatch):
    monkeypatch.setattr(DealtAtCursor, "page_size", 3)
    first = auditor_client.get(ROUNDS)
    assert names(first) == ["S02/R-1", "S01/R-3", "S01/R-2"]
    assert first.json()["previous"] is None and first.json()["next"]
    second = auditor_client.get(first.json()["next"])
    assert names(second) == ["S01/R-1"]
    assert second.json()["next"] is None
    assert names(auditor_client.get(second.json()["previous"])) == names(first)


def test_a_filter_survives_the_cursor(auditor_client, stored, monkeypatch):
    monkeypatch.setattr(DealtAtCursor, "page_size", 1)
    seen, url = [], f"{ROUNDS}?table=S01"
    while url:
        page = auditor_client.get(url)
        seen += names(page)
        url = page.json()["next"]
    assert seen == ["S01/R-3", "S01/R-2", "S01/R-1"]


def test_findings_page_by_cursor(auditor_client, stored, monkeypatch):
    monkeypatch.setattr(NewestFirstCursor, "page_size", 1)
    seen, url = [], FINDINGS
    while url:
        page = auditor_client.get(url)
        assert len(page.json()["results"]) <= 1
        seen += [f["id"] for f in page.json()["results"]]
        url = page.json()["next"]
    assert seen == _finding_ids() and len(seen) >= 2


# ---- who may read --------------------------------------------------------------


def _detail(stored) -> str:
    return f"{ROUNDS}{stored['S01', 'R-1']}/"


@pytest.mark.parametrize("which", ["rounds", "detail", "findings"])
def test_a_table_key_cannot_read(table_client, stored, which):
    client = table_client("S01", "se-50kr")
    path = {"rounds": ROUNDS, "detail": _detail(stored), "findings": FINDINGS}[which]
    response = client.get(path)
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"


@pytest.mark.parametrize("which", ["rounds", "detail", "findings"])
def test_anonymous_cannot_read(stored, which):
    path = {"rounds": ROUNDS, "detail": _detail(stored), "findings": FINDINGS}[which]
    response = APIClient().get(path)
    assert response.status_code in {401, 403}
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.parametrize("which", ["rounds", "detail", "findings"])
def test_a_user_without_view_permission_cannot_read(django_user_model, stored, which):
    clerk = django_user_model.objects.create_user(
        "clerk", password="a-long-test-password", is_staff=True
    )
    client = APIClient()
    client.force_authenticate(clerk)
    path = {"rounds": ROUNDS, "detail": _detail(stored), "findings": FINDINGS}[which]
    assert client.get(path).status_code == 403


def test_an_auditor_reads_with_a_password(auditor, stored):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Basic YXVkaXRvcjphLWxvbmctdGVzdC1wYXNzd29yZA==")
    assert len(names(client.get(ROUNDS))) == 4
    assert client.get(_detail(stored)).status_code == 200
    assert client.get(FINDINGS).status_code == 200


def test_view_permission_on_rounds_alone_does_not_open_findings(django_user_model, stored):
    reader = django_user_model.objects.create_user("reader", password="a-long-test-password")
    reader.user_permissions.add(
        Permission.objects.get(codename="view_round", content_type__app_label="rounds")
    )
    client = APIClient()
    client.force_authenticate(reader)
    assert client.get(ROUNDS).status_code == 200
    assert client.get(FINDINGS).status_code == 403
